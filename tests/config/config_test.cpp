// Config validation, every JITSCOPE_* variable (good and bad values), and the
// JITSCOPE_TRACE autostart seen from a real host process (env_probe).
// Not covered: what sessions record (span_test).
#include "trace_support.hpp"

#include <dlfcn.h>

#include <sys/wait.h>

#include <cstdlib>
#include <fstream>

namespace jitscope::testing {
namespace {

// Sets variables for one test and restores the environment after.
class EnvGuard {
 public:
  ~EnvGuard() {
    for (const auto& name : names_) ::unsetenv(name.c_str());
  }
  void set(const std::string& name, const std::string& value) {
    ::setenv(name.c_str(), value.c_str(), 1);
    names_.push_back(name);
  }

 private:
  std::vector<std::string> names_;
};

TEST(Config, DefaultsAreValidOnceAPathIsSet) {
  Config cfg;
  EXPECT_FALSE(cfg.validate().ok());
  EXPECT_NE(cfg.validate().message().find("output path"), std::string::npos);
  cfg.output_path = "x.json";
  EXPECT_TRUE(cfg.validate().ok());
  EXPECT_EQ(cfg.ring_capacity, kDefaultRingCapacity);
  EXPECT_EQ(cfg.overflow, OverflowPolicy::kDrop);
}

TEST(Config, OutOfRangeValuesAreRejected) {
  Config cfg;
  cfg.output_path = "x.json";
  cfg.ring_capacity = kMinRingCapacity - 1;
  EXPECT_FALSE(cfg.validate().ok());
  cfg.ring_capacity = kMaxRingCapacity + 1;
  EXPECT_FALSE(cfg.validate().ok());
  cfg.ring_capacity = kMinRingCapacity;
  cfg.flush_interval = std::chrono::milliseconds(0);
  EXPECT_FALSE(cfg.validate().ok());
  cfg.flush_interval = std::chrono::milliseconds(60001);
  EXPECT_FALSE(cfg.validate().ok());
}

TEST(Config, EveryVariableIsReadWhenValid) {
  EnvGuard env;
  env.set("JITSCOPE_TRACE", "/tmp/from_env.json");
  env.set("JITSCOPE_RING_CAPACITY", "4096");
  env.set("JITSCOPE_OVERFLOW", "block");
  env.set("JITSCOPE_FLUSH_INTERVAL_MS", "250");
  env.set("JITSCOPE_PROCESS_NAME", "my compiler");
  env.set("JITSCOPE_CLOCK", "monotonic");
  env.set("JITSCOPE_COMPRESSION", "zstd");
  Config cfg;
  const Status st = Config::from_env(&cfg);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(cfg.compression, TraceCompression::kZstd);
  EXPECT_EQ(cfg.output_path, "/tmp/from_env.json");
  EXPECT_EQ(cfg.ring_capacity, 4096u);
  EXPECT_EQ(cfg.overflow, OverflowPolicy::kBlock);
  EXPECT_EQ(cfg.flush_interval, std::chrono::milliseconds(250));
  EXPECT_EQ(cfg.process_name, "my compiler");
  EXPECT_EQ(cfg.clock, ClockChoice::kMonotonic);
}

struct BadValue {
  const char* variable;
  const char* value;
};

void PrintTo(const BadValue& v, std::ostream* os) { *os << v.variable << "=" << v.value; }

class BadVariable : public ::testing::TestWithParam<BadValue> {};

TEST_P(BadVariable, IsAnErrorThatNamesTheVariable) {
  EnvGuard env;
  env.set("JITSCOPE_TRACE", "/tmp/x.json");
  env.set(GetParam().variable, GetParam().value);
  Config cfg;
  const Status st = Config::from_env(&cfg);
  ASSERT_FALSE(st.ok()) << GetParam().variable << "=" << GetParam().value;
  EXPECT_NE(st.message().find(GetParam().variable), std::string::npos) << st.message();
  EXPECT_EQ(cfg.output_path, "") << "a failed from_env must leave the config alone";
}

INSTANTIATE_TEST_SUITE_P(
    AllVariables, BadVariable,
    ::testing::Values(
        BadValue{"JITSCOPE_TRACE", ""}, BadValue{"JITSCOPE_RING_CAPACITY", ""},
        BadValue{"JITSCOPE_RING_CAPACITY", "abc"}, BadValue{"JITSCOPE_RING_CAPACITY", "-1"},
        BadValue{"JITSCOPE_RING_CAPACITY", "12abc"}, BadValue{"JITSCOPE_RING_CAPACITY", " 128"},
        BadValue{"JITSCOPE_RING_CAPACITY", "63"}, BadValue{"JITSCOPE_RING_CAPACITY", "16777217"},
        BadValue{"JITSCOPE_RING_CAPACITY", "99999999999999999999999"},
        BadValue{"JITSCOPE_OVERFLOW", "Block"}, BadValue{"JITSCOPE_OVERFLOW", ""},
        BadValue{"JITSCOPE_FLUSH_INTERVAL_MS", "0"}, BadValue{"JITSCOPE_FLUSH_INTERVAL_MS", "1.5"},
        BadValue{"JITSCOPE_FLUSH_INTERVAL_MS", "60001"}, BadValue{"JITSCOPE_PROCESS_NAME", ""},
        BadValue{"JITSCOPE_CLOCK", "rdtsc"}, BadValue{"JITSCOPE_COMPRESSION", "gzip"},
        BadValue{"JITSCOPE_COMPRESSION", "ZSTD"}, BadValue{"JITSCOPE_CRASH_HANDLER", "yes"},
        BadValue{"JITSCOPE_CRASH_HANDLER", ""}, BadValue{"JITSCOPE_MAX_TRACE_SIZE", "63K"},
        BadValue{"JITSCOPE_MAX_TRACE_SIZE", "1"}, BadValue{"JITSCOPE_MAX_TRACE_SIZE", "10MB"},
        BadValue{"JITSCOPE_MAX_TRACE_SIZE", "K"}, BadValue{"JITSCOPE_MAX_TRACE_SIZE", "-64K"},
        BadValue{"JITSCOPE_MAX_TRACE_SIZE", "1.5G"},
        BadValue{"JITSCOPE_MAX_TRACE_SIZE", "17179869184G"},
        BadValue{"JITSCOPE_ROTATE_SIZE", "100k"}, BadValue{"JITSCOPE_ROTATE_SIZE", ""},
        BadValue{"JITSCOPE_TRCE", "/tmp/typo.json"}));

TEST(Config, SizesTakeKMAndGSuffixesAndZeroTurnsThemOff) {
  struct Case {
    const char* text;
    std::uint64_t bytes;
  };
  for (const Case& c :
       {Case{"65536", 65536}, Case{"64K", 65536}, Case{"512M", 512ull << 20},
        Case{"2G", 2ull << 30}, Case{"0", 0}, Case{"16777215G", 16777215ull << 30}}) {
    EnvGuard env;
    env.set("JITSCOPE_TRACE", "/tmp/x.json");
    env.set("JITSCOPE_MAX_TRACE_SIZE", c.text);
    env.set("JITSCOPE_ROTATE_SIZE", c.text);
    Config cfg;
    const Status st = Config::from_env(&cfg);
    ASSERT_TRUE(st.ok()) << c.text << ": " << st.message();
    EXPECT_EQ(cfg.max_trace_bytes, c.bytes) << c.text;
    EXPECT_EQ(cfg.rotate_bytes, c.bytes) << c.text;
  }
}

TEST(Config, CrashHandlerIsOnByDefaultAndTheVariableTurnsItOff) {
  EXPECT_TRUE(Config{}.crash_handler);
  for (const auto& [text, on] : {std::pair{"0", false}, std::pair{"1", true}}) {
    EnvGuard env;
    env.set("JITSCOPE_TRACE", "/tmp/x.json");
    env.set("JITSCOPE_CRASH_HANDLER", text);
    Config cfg;
    ASSERT_TRUE(Config::from_env(&cfg).ok());
    EXPECT_EQ(cfg.crash_handler, on) << text;
  }
}

TEST(Config, SizesBelowTheMinimumAreRejectedFromCodeToo) {
  Config cfg;
  cfg.output_path = "x.json";
  cfg.max_trace_bytes = kMinTraceBytes - 1;
  EXPECT_NE(cfg.validate().message().find("max_trace_bytes"), std::string::npos);
  cfg.max_trace_bytes = 0;
  cfg.rotate_bytes = 100;
  EXPECT_NE(cfg.validate().message().find("rotate_bytes"), std::string::npos);
  cfg.rotate_bytes = kMinTraceBytes;
  EXPECT_TRUE(cfg.validate().ok());
}

TEST(Config, TraceIsRequiredUnlessTheCallerSaysOtherwise) {
  ::unsetenv("JITSCOPE_TRACE");
  Config cfg;
  EXPECT_FALSE(Config::from_env(&cfg).ok());
  cfg.output_path = "from_code.json";
  EnvGuard env;
  env.set("JITSCOPE_OVERFLOW", "block");
  const Status st = Config::from_env(&cfg, /*require_trace=*/false);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(cfg.output_path, "from_code.json");
  EXPECT_EQ(cfg.overflow, OverflowPolicy::kBlock);
}

// Runs env_probe with exactly `env` (plus PATH) and returns its exit status;
// stderr lands in `err`.
struct ProbeResult {
  int status = -1;
  std::string out, err;
};

ProbeResult run_probe(const std::string& env) {
  const std::string out = temp_path("probe_out"), err = temp_path("probe_err");
  const std::string cmd = "env -i PATH=/usr/bin:/bin " + env + " '" JITSCOPE_ENV_PROBE "' >'" +
                          out + "' 2>'" + err + "'";
  const int raw = std::system(cmd.c_str());
  ProbeResult r;
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  r.out = read_file(out);
  r.err = read_file(err);
  return r;
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

std::size_t count_lines(const std::string& text) {
  return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

TEST(Autostart, TraceVariableTracesAHostWithNoCodeChange) {
  const std::string path = temp_path("autostart");
  const ProbeResult r = run_probe("JITSCOPE_TRACE='" + path +
                                  "' JITSCOPE_OVERFLOW=block JITSCOPE_RING_CAPACITY=128 "
                                  "JITSCOPE_FLUSH_INTERVAL_MS=1 JITSCOPE_PROCESS_NAME=probe "
                                  "JITSCOPE_CLOCK=monotonic JITSCOPE_CUPTI=off");
  EXPECT_EQ(r.status, 3);
  EXPECT_EQ(r.out, "active=1\n");
  EXPECT_EQ(r.err, "") << "JITSCOPE_CUPTI=off: no CUPTI line either";
  const nlohmann::json trace = load_trace(path);  // stopped and closed at exit
  std::size_t probe = 0, at_exit = 0;
  for (const auto& e : events_with_ph(trace, "X")) {
    probe += e["name"] == "probe_span";
    at_exit += e["name"] == "exit_span";
  }
  EXPECT_EQ(probe, 100u);
  EXPECT_EQ(at_exit, 10u) << "spans recorded in an atexit handler must not be lost";
  EXPECT_EQ(events_with_ph(trace, "C").size(), 100u);
  EXPECT_EQ((*metadata(trace, "jitscope_stats"))["args"]["events_dropped"], 0);
  const nlohmann::json* meta = metadata(trace, "jitscope_session");
  ASSERT_NE(meta, nullptr);
  EXPECT_EQ((*meta)["args"]["ring_capacity"], 128);
  EXPECT_EQ((*meta)["args"]["overflow"], "block");
  EXPECT_EQ((*meta)["args"]["flush_interval_ms"], 1);
  EXPECT_EQ((*meta)["args"]["clock"], "monotonic");
  EXPECT_EQ((*meta)["args"]["cupti"]["state"], "off");
  EXPECT_NE((*meta)["args"]["cupti"]["reason"].get<std::string>().find("JITSCOPE_CUPTI=off"),
            std::string::npos);
  const nlohmann::json* proc = metadata(trace, "process_name");
  ASSERT_NE(proc, nullptr);
  EXPECT_EQ((*proc)["args"]["name"], "probe");
}

struct BadEnv {
  const char* env;
  const char* expected;  // in the one stderr line
};
void PrintTo(const BadEnv& v, std::ostream* os) { *os << v.env; }

class AutostartBadEnv : public ::testing::TestWithParam<BadEnv> {};

TEST_P(AutostartBadEnv, GivesOneLineNoSessionAndKeepsTheExitStatus) {
  const std::string path = temp_path("bad_env");
  const ProbeResult r = run_probe("JITSCOPE_TRACE='" + path + "' " + GetParam().env);
  EXPECT_EQ(r.status, 3);
  EXPECT_EQ(r.out, "active=0\n");
  EXPECT_EQ(count_lines(r.err), 1u) << r.err;
  EXPECT_EQ(r.err.rfind("jitscope: ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find(GetParam().expected), std::string::npos) << r.err;
  EXPECT_NE(::access(path.c_str(), F_OK), 0) << "no session, so no file";
}

INSTANTIATE_TEST_SUITE_P(
    EveryVariable, AutostartBadEnv,
    ::testing::Values(
        BadEnv{"JITSCOPE_RING_CAPACITY=lots", "JITSCOPE_RING_CAPACITY='lots'"},
        BadEnv{"JITSCOPE_OVERFLOW=wait", "JITSCOPE_OVERFLOW='wait'"},
        BadEnv{"JITSCOPE_FLUSH_INTERVAL_MS=-5", "JITSCOPE_FLUSH_INTERVAL_MS='-5'"},
        BadEnv{"JITSCOPE_PROCESS_NAME=", "JITSCOPE_PROCESS_NAME is set but empty"},
        BadEnv{"JITSCOPE_CLOCK=fast", "JITSCOPE_CLOCK='fast'"},
        BadEnv{"JITSCOPE_METRICS=", "JITSCOPE_METRICS is set but empty"},
        BadEnv{"JITSCOPE_COMPILE_TIMES=yes", "JITSCOPE_COMPILE_TIMES='yes'"},
        BadEnv{"JITSCOPE_PROGRESS=2", "JITSCOPE_PROGRESS='2' is not 0 or 1"},
        BadEnv{"JITSCOPE_CUPTI=maybe", "JITSCOPE_CUPTI='maybe' is not auto, on or off"},
        BadEnv{"JITSCOPE_CUPTI_BUFFER_KB=8", "JITSCOPE_CUPTI_BUFFER_KB='8'"},
        BadEnv{"JITSCOPE_CUPTI_BUFFERS=1", "JITSCOPE_CUPTI_BUFFERS='1'"},
        BadEnv{"JITSCOPE_OVERFLOWS=block",
               "unknown variable JITSCOPE_OVERFLOWS (did you mean JITSCOPE_OVERFLOW?)"}));

bool cuda_driver_present() {
  void* driver = ::dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (driver != nullptr) ::dlclose(driver);
  return driver != nullptr;
}

// The probe's trace: its 100 spans, and CUPTI off in the session metadata.
nlohmann::json expect_probe_trace_without_cupti(const std::string& path) {
  nlohmann::json trace = load_trace(path);
  std::size_t probe = 0;
  for (const auto& e : events_with_ph(trace, "X")) probe += e["name"] == "probe_span";
  EXPECT_EQ(probe, 100u);
  const nlohmann::json* meta = metadata(trace, "jitscope_session");
  EXPECT_NE(meta, nullptr);
  if (meta != nullptr) EXPECT_EQ((*meta)["args"]["cupti"]["state"], "off");
  return trace;
}

// Without a CUDA driver: one `jitscope: CUPTI off:` line saying why, and the
// rest of the session as always.
TEST(Autostart, CuptiWithoutADriverSaysWhyOnceAndTracesTheRest) {
  if (cuda_driver_present()) GTEST_SKIP() << "a CUDA driver is installed: CUPTI may start here";
  struct Case {
    const char* mode;
    const char* line;  // "" : no line
  };
#if defined(JITSCOPE_TEST_HAS_CUPTI)
  const Case cases[] = {
      {"auto", "jitscope: CUPTI off: no CUDA driver (libcuda.so.1: cannot open shared object file"},
      {"on", "jitscope: CUPTI off: cuptiSubscribe: CUPTI_ERROR_UNKNOWN (no usable CUDA driver"}};
#else
  const Case cases[] = {{"auto", ""},
                        {"on", "jitscope: CUPTI off: this jitscope was built without CUPTI"}};
#endif
  for (const Case& c : cases) {
    SCOPED_TRACE(c.mode);
    const std::string path = temp_path("cupti_off");
    const ProbeResult r = run_probe("JITSCOPE_TRACE='" + path + "' JITSCOPE_CUPTI=" + c.mode);
    EXPECT_EQ(r.status, 3);
    EXPECT_EQ(r.out, "active=1\n");
    if (*c.line == '\0') {
      EXPECT_EQ(r.err, "");
    } else {
      EXPECT_EQ(count_lines(r.err), 1u) << r.err;
      EXPECT_EQ(r.err.rfind(c.line, 0), 0u) << r.err;
    }
    const nlohmann::json trace = expect_probe_trace_without_cupti(path);
    const nlohmann::json* stats = metadata(trace, "jitscope_stats");
    ASSERT_NE(stats, nullptr);
    EXPECT_EQ((*stats)["args"]["cupti"]["state"], "off");
    EXPECT_EQ((*stats)["args"]["cupti"]["gpu_events"], 0);
  }
}

#if defined(JITSCOPE_TEST_HAS_CUPTI)
// CUPTI is loaded at run time (the probe does not link it): one that cannot
// be loaded is one line, and the session goes on without it.
TEST(Autostart, CuptiThatCannotBeLoadedIsOneLine) {
  const std::string path = temp_path("cupti_missing");
  const ProbeResult r =
      run_probe("JITSCOPE_TRACE='" + path +
                "' JITSCOPE_CUPTI=on JITSCOPE_CUPTI_LIBRARY=/nonexistent/libcupti.so");
  EXPECT_EQ(r.status, 3);
  EXPECT_EQ(r.out, "active=1\n");
  EXPECT_EQ(count_lines(r.err), 1u) << r.err;
  EXPECT_EQ(r.err.rfind("jitscope: CUPTI off: cannot load JITSCOPE_CUPTI_LIBRARY: "
                        "/nonexistent/libcupti.so: cannot open shared object file",
                        0),
            0u)
      << r.err;
  (void)expect_probe_trace_without_cupti(path);
}
#endif

// A start() while JITSCOPE_TRACE's session runs says which session is
// active, where it came from, and what was asked for.
TEST(Autostart, ASecondStartNamesBothSessions) {
  const std::string path = temp_path("autostart_active");
  const std::string asked = temp_path("asked_for");
  const ProbeResult r = run_probe("JITSCOPE_TRACE='" + path + "' JITSCOPE_CUPTI=off " +
                                  "PROBE_SECOND_START='" + asked + "'");
  EXPECT_EQ(r.status, 3);
  const std::string message = "a session is already active (trace " + path +
                              ", started at load by JITSCOPE_TRACE); not starting the one " +
                              "asked for (trace " + asked +
                              "): stop() the active one first, or unset JITSCOPE_TRACE";
  EXPECT_EQ(r.out, "active=1\nsecond: " + message + "\n");
  EXPECT_EQ(r.err, "jitscope: " + message + "\n");
}

TEST(Autostart, MetricsAndCompileTimesActThroughTheSession) {
  const std::string path = temp_path("metrics_env");
  const std::string metrics = temp_path("metrics_env.jsonl");
  const ProbeResult r = run_probe("JITSCOPE_TRACE='" + path + "' JITSCOPE_METRICS='" + metrics +
                                  "' JITSCOPE_COMPILE_TIMES=csv JITSCOPE_CUPTI=off");
  EXPECT_EQ(r.status, 3);
  EXPECT_EQ(r.out, "active=1\n");
  EXPECT_EQ(::access(metrics.c_str(), F_OK), 0) << "the metrics file is created at start";
  // No phases ran: the report is its two headers and the total row.
  EXPECT_EQ(r.err.rfind("phase,count,total_s,mean_s,max_s\n\nphase,column,total_s\n", 0), 0u)
      << r.err;
}

TEST(Autostart, MetricsWithoutATraceSaysItHasNoEffect) {
  const ProbeResult r = run_probe("JITSCOPE_METRICS=/tmp/never-written.jsonl");
  EXPECT_EQ(r.status, 3);
  EXPECT_EQ(r.out, "active=0\n");
  EXPECT_EQ(r.err,
            "jitscope: JITSCOPE_METRICS is set but JITSCOPE_TRACE is not: no session, so it has "
            "no effect\n");
}

TEST(Autostart, EmptyTraceVariableIsAnErrorNotASilentDefault) {
  const ProbeResult r = run_probe("JITSCOPE_TRACE=");
  EXPECT_EQ(r.status, 3);
  EXPECT_EQ(r.out, "active=0\n");
  EXPECT_EQ(r.err, "jitscope: no session started: JITSCOPE_TRACE is set but empty\n");
}

TEST(Autostart, UnwritablePathGivesOneLineAndKeepsTheExitStatus) {
  const ProbeResult r = run_probe("JITSCOPE_TRACE=/nonexistent-dir/trace.json");
  EXPECT_EQ(r.status, 3);
  EXPECT_EQ(r.out, "active=0\n");
  EXPECT_EQ(r.err,
            "jitscope: cannot open /nonexistent-dir/trace.json: No such file or directory\n");
}

TEST(Autostart, AFullDiskGivesOneLineAndKeepsTheExitStatus) {
  const ProbeResult r = run_probe("JITSCOPE_TRACE=/dev/full JITSCOPE_CUPTI=off");
  EXPECT_EQ(r.status, 3);
  EXPECT_EQ(r.out, "active=1\n");
  EXPECT_EQ(count_lines(r.err), 1u) << r.err;
  EXPECT_EQ(r.err.rfind("jitscope: writing /dev/full failed: No space left on device", 0), 0u)
      << r.err;
}

// A start refused for one output changes nothing on disk: the trace the
// user kept from yesterday is not emptied because the metrics path is bad,
// and a trace file that did not exist is not left behind, empty.
TEST(Autostart, ARefusedStartLeavesEveryFileAsItWas) {
  const std::string kept = temp_path("refused_keep");
  const std::string yesterday = "[\n{\"name\":\"yesterday\"}\n]\n";
  write_file(kept, yesterday);
  const ProbeResult r =
      run_probe("JITSCOPE_TRACE='" + kept + "' JITSCOPE_METRICS=/nonexistent-dir/m.jsonl");
  EXPECT_EQ(r.status, 3);
  EXPECT_EQ(r.out, "active=0\n");
  EXPECT_EQ(r.err,
            "jitscope: cannot open metrics file /nonexistent-dir/m.jsonl: No such file or "
            "directory\n");
  EXPECT_EQ(read_file(kept), yesterday) << "a refused start emptied the trace";

  const std::string fresh = temp_path("refused_fresh");
  const ProbeResult f =
      run_probe("JITSCOPE_TRACE='" + fresh + "' JITSCOPE_METRICS=/nonexistent-dir/m.jsonl");
  EXPECT_EQ(f.out, "active=0\n");
  EXPECT_NE(::access(fresh.c_str(), F_OK), 0) << "a refused start left " << fresh << " behind";
  ::unlink(kept.c_str());
}

// The same from code: Config's outputs are all claimed before any is emptied.
TEST(Session, ARefusedStartFromCodeChangesNothingOnDisk) {
  Config cfg;
  cfg.output_path = temp_path("refused_code");
  cfg.metrics_path = temp_path("refused_code_metrics");
  cfg.cupti = CuptiMode::kOff;
  write_file(cfg.output_path, "yesterday's trace");
  write_file(cfg.metrics_path, "yesterday's metrics\n");
  const std::string good_metrics = cfg.metrics_path;
  cfg.metrics_path = "/nonexistent-dir/m.jsonl";
  EXPECT_FALSE(start(cfg).ok());
  EXPECT_FALSE(active());
  EXPECT_EQ(read_file(cfg.output_path), "yesterday's trace");
  // A trace path that cannot open leaves the metrics file alone too.
  cfg.metrics_path = good_metrics;
  const std::string trace = cfg.output_path;
  cfg.output_path = "/nonexistent-dir/t.json";
  EXPECT_FALSE(start(cfg).ok());
  EXPECT_EQ(read_file(good_metrics), "yesterday's metrics\n");
  // And a start that succeeds empties both, as before.
  cfg.output_path = trace;
  ASSERT_TRUE(start(cfg).ok());
  ASSERT_TRUE(stop().ok());
  EXPECT_EQ(read_file(good_metrics).find("yesterday"), std::string::npos);
  EXPECT_EQ(read_file(trace).find("yesterday"), std::string::npos);
  ::unlink(trace.c_str());
  ::unlink(good_metrics.c_str());
}

// A typo of JITSCOPE_TRACE starts no session: it is named, with the name it
// is closest to, instead of doing nothing silently.
TEST(Autostart, AMisspelledTraceVariableIsNamedWithTheClosestKnownName) {
  for (const char* typo : {"JITSCOPE_TRAC", "JITSCOPE_TRACEFILE", "JITSCOPE_TRACE_FILE"}) {
    SCOPED_TRACE(typo);
    const std::string path = temp_path("typo");
    const ProbeResult r = run_probe(std::string(typo) + "='" + path + "'");
    EXPECT_EQ(r.status, 3);
    EXPECT_EQ(r.out, "active=0\n");
    EXPECT_EQ(count_lines(r.err), 1u) << r.err;
    EXPECT_EQ(r.err.rfind(std::string("jitscope: unknown variable ") + typo +
                              " (did you mean JITSCOPE_TRACE?)",
                          0),
              0u)
        << r.err;
    EXPECT_NE(::access(path.c_str(), F_OK), 0);
  }
  // Two at once: one line names both, each with its own closest name.
  const ProbeResult two = run_probe("JITSCOPE_TRAC=x.json JITSCOPE_METRIC=m.jsonl");
  EXPECT_EQ(count_lines(two.err), 1u) << two.err;
  EXPECT_NE(two.err.find("JITSCOPE_TRAC (did you mean JITSCOPE_TRACE?)"), std::string::npos)
      << two.err;
  EXPECT_NE(two.err.find("JITSCOPE_METRIC (did you mean JITSCOPE_METRICS?)"), std::string::npos)
      << two.err;
}

TEST(Autostart, NoVariablesMeansNoSessionAndNoOutput) {
  const ProbeResult r = run_probe("");
  EXPECT_EQ(r.status, 3);
  EXPECT_EQ(r.out, "active=0\n");
  EXPECT_EQ(r.err, "");
}

}  // namespace
}  // namespace jitscope::testing
