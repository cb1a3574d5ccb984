// fuzz_config_env: Config::from_env (the JITSCOPE_* variables) and
// Config::validate (sdk/src/config/config.cpp) on fuzzed values.
//
// The first byte picks the mode (bit 0) and, for the environment, whether
// JITSCOPE_TRACE is required (bit 1) and the Config starts with an output
// path of its own (bit 2).
// - Environment (even): each further line of the input is one environment
//   entry, as is ("NAME=value"; no '=' is allowed too, as execve allows;
//   a NUL ends the entry). The corpus and fuzz_config_env.dict hold the real
//   names (sdk/src/config/config.cpp kVariables), near misses and good values.
//   `environ` points at exactly these entries during the call (so the
//   process's own JITSCOPE_* variables, removed at start-up anyway, play no
//   part), and is restored after. Checked: from_env returns ok, or an error
//   with a non-empty message and the Config untouched; when ok, validate()
//   is ok too, no JITSCOPE_ name in the environment is unknown, and the
//   values read are the ones in the environment (first entry wins, as
//   getenv): JITSCOPE_TRACE/_PROCESS_NAME/_METRICS as is, the numbers
//   exactly, the sizes with their K/M/G multiplier, the choices.
// - Validate (odd): every Config field from the input; validate() must say
//   ok exactly when a plain restatement of the documented ranges does.
// Not covered: what the session does with the values (start()).
#include "fuzz_support.hpp"

#include <jitscope/jitscope.hpp>

#include <fuzzer/FuzzedDataProvider.h>

#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

extern char** environ;

namespace {

constexpr const char* kKnown[] = {
    "JITSCOPE_TRACE",
    "JITSCOPE_RING_CAPACITY",
    "JITSCOPE_OVERFLOW",
    "JITSCOPE_FLUSH_INTERVAL_MS",
    "JITSCOPE_PROCESS_NAME",
    "JITSCOPE_CLOCK",
    "JITSCOPE_METRICS",
    "JITSCOPE_COMPILE_TIMES",
    "JITSCOPE_PROGRESS",
    "JITSCOPE_NVTX",
    "JITSCOPE_CUPTI",
    "JITSCOPE_CUPTI_BUFFER_KB",
    "JITSCOPE_CUPTI_BUFFERS",
    "JITSCOPE_CRASH_HANDLER",
    "JITSCOPE_MAX_TRACE_SIZE",
    "JITSCOPE_ROTATE_SIZE",
    "JITSCOPE_CUPTI_LIBRARY",
    "JITSCOPE_ARTIFACTS",
    "JITSCOPE_MAX_ARTIFACT_SIZE",
    "JITSCOPE_FORMAT",
    "JITSCOPE_COMPRESSION",
    "JITSCOPE_PARENT_PID",
    "JITSCOPE_FLIGHT",
    "JITSCOPE_MAX_SNAPSHOTS",
    "JITSCOPE_SNAPSHOT_MIN_INTERVAL_MS",
    "JITSCOPE_SNAPSHOT_SIGNAL",
    "JITSCOPE_SNAPSHOT_SLOW_UNIT",
    "JITSCOPE_SNAPSHOT_FAILED_UNIT",
    "JITSCOPE_SNAPSHOT_MISS_STORM",
    "JITSCOPE_SNAPSHOT_AFTER_READY",
    "JITSCOPE_BUILD_DIR",  // read by python/setup.py, not the SDK: known so that it is not named
};
bool known(std::string_view name) {
  for (const char* k : kKnown) {
    if (name == k) return true;
  }
  return false;
}

// Removes the real JITSCOPE_* variables once (a CI job might set some).
int clear_real_env() {
  std::vector<std::string> names;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    if (std::strncmp(*e, "JITSCOPE_", 9) != 0) continue;
    const char* eq = std::strchr(*e, '=');
    names.emplace_back(*e, eq ? static_cast<std::size_t>(eq - *e) : std::strlen(*e));
  }
  for (const std::string& n : names) ::unsetenv(n.c_str());
  return 0;
}

// getenv's answer in `env`: the first "name=" entry.
std::optional<std::string> lookup(const std::vector<std::string>& env, std::string_view name) {
  for (const std::string& e : env) {
    if (e.size() > name.size() && e.compare(0, name.size(), name) == 0 && e[name.size()] == '=') {
      return e.substr(name.size() + 1);
    }
  }
  return std::nullopt;
}

// Digits only (leading zeros allowed), no sign, no space, fits in 64 bits.
std::optional<std::uint64_t> plain_uint(std::string_view s) {
  if (s.empty()) return std::nullopt;
  unsigned __int128 v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + static_cast<unsigned>(c - '0');
    if (v > UINT64_MAX) return std::nullopt;
  }
  return static_cast<std::uint64_t>(v);
}

// A size as docs/configuration.md states it: digits, then an optional K, M or G.
std::optional<std::uint64_t> plain_size(std::string_view s) {
  unsigned shift = 0;
  if (!s.empty() && (s.back() == 'K' || s.back() == 'M' || s.back() == 'G')) {
    shift = s.back() == 'K' ? 10 : s.back() == 'M' ? 20 : 30;
    s.remove_suffix(1);
  }
  const auto v = plain_uint(s);
  if (!v || (shift != 0 && *v > (UINT64_MAX >> shift))) return std::nullopt;
  return *v << shift;
}

// The environment, for a failure message (built only then).
std::string describe(const std::vector<std::string>& env) {
  std::string all;
  for (const std::string& e : env) all += e + "\\0";
  return all;
}

bool same(const jitscope::Config& a, const jitscope::Config& b) {
  return a.output_path == b.output_path && a.metrics_path == b.metrics_path &&
         a.ring_capacity == b.ring_capacity && a.overflow == b.overflow &&
         a.flush_interval == b.flush_interval && a.process_name == b.process_name &&
         a.clock == b.clock && a.compile_times == b.compile_times && a.nvtx_emit == b.nvtx_emit &&
         a.nvtx_capture == b.nvtx_capture && a.cupti == b.cupti &&
         a.cupti_buffer_bytes == b.cupti_buffer_bytes && a.cupti_buffers == b.cupti_buffers &&
         a.crash_handler == b.crash_handler && a.max_trace_bytes == b.max_trace_bytes &&
         a.rotate_bytes == b.rotate_bytes && a.format == b.format && a.parent_pid == b.parent_pid;
}

// `text`'s lines as environment entries (a NUL ends a line's entry early).
void fuzz_env(std::uint8_t flags, std::string_view text) {
  const bool require_trace = (flags & 2) != 0;
  std::vector<std::string> env;
  while (!text.empty() && env.size() < 64) {
    const std::size_t nl = text.find('\n');
    std::string line(text.substr(0, nl));
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    line.resize(std::strlen(line.c_str()));
    env.push_back(std::move(line));
  }
  env.emplace_back("HOME=/nonexistent");  // one that is not ours

  std::vector<char*> envp;
  for (std::string& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);

  jitscope::Config cfg;
  if ((flags & 4) != 0) cfg.output_path = "preset.json";  // a caller's own default
  const jitscope::Config before = cfg;
  char** saved = environ;
  environ = envp.data();
  const jitscope::Status st = jitscope::Config::from_env(&cfg, require_trace);
  environ = saved;

  if (!st) {
    FUZZ_CHECK(!st.message().empty(), describe(env));
    FUZZ_CHECK(same(cfg, before), describe(env));
    return;
  }
  const jitscope::Status valid = cfg.validate();
  FUZZ_CHECK(valid.ok(), valid.message() + " after from_env of " + describe(env));
  for (const std::string& e : env) {
    if (e.compare(0, 9, "JITSCOPE_") != 0) continue;
    FUZZ_CHECK(known(std::string_view(e).substr(0, e.find('='))), describe(env));
  }
  if (const auto v = lookup(env, "JITSCOPE_TRACE")) {
    FUZZ_CHECK(cfg.output_path == *v, describe(env));
  } else {
    FUZZ_CHECK(!require_trace && cfg.output_path == before.output_path, describe(env));
  }
  if (const auto v = lookup(env, "JITSCOPE_PROCESS_NAME"))
    FUZZ_CHECK(cfg.process_name == *v, describe(env));
  if (const auto v = lookup(env, "JITSCOPE_METRICS"))
    FUZZ_CHECK(cfg.metrics_path == *v, describe(env));
  if (const auto v = lookup(env, "JITSCOPE_RING_CAPACITY")) {
    FUZZ_CHECK(plain_uint(*v) == cfg.ring_capacity, describe(env));
  }
  if (const auto v = lookup(env, "JITSCOPE_FLUSH_INTERVAL_MS")) {
    FUZZ_CHECK(plain_uint(*v) == static_cast<std::uint64_t>(cfg.flush_interval.count()),
               describe(env));
  }
  if (const auto v = lookup(env, "JITSCOPE_PARENT_PID")) {
    FUZZ_CHECK(plain_uint(*v) == static_cast<std::uint64_t>(cfg.parent_pid), describe(env));
  }
  if (const auto v = lookup(env, "JITSCOPE_CUPTI_BUFFERS")) {
    FUZZ_CHECK(plain_uint(*v) == cfg.cupti_buffers, describe(env));
  }
  if (const auto v = lookup(env, "JITSCOPE_CUPTI_BUFFER_KB")) {
    FUZZ_CHECK(plain_uint(*v) == cfg.cupti_buffer_bytes / 1024, describe(env));
  }
  if (const auto v = lookup(env, "JITSCOPE_MAX_TRACE_SIZE")) {
    FUZZ_CHECK(plain_size(*v) == cfg.max_trace_bytes, describe(env));
  }
  if (const auto v = lookup(env, "JITSCOPE_ROTATE_SIZE")) {
    FUZZ_CHECK(plain_size(*v) == cfg.rotate_bytes, describe(env));
  }
  if (const auto v = lookup(env, "JITSCOPE_CRASH_HANDLER")) {
    FUZZ_CHECK((*v == "1" && cfg.crash_handler) || (*v == "0" && !cfg.crash_handler),
               describe(env));
  }
  if (const auto v = lookup(env, "JITSCOPE_OVERFLOW")) {
    FUZZ_CHECK((*v == "drop" && cfg.overflow == jitscope::OverflowPolicy::kDrop) ||
                   (*v == "block" && cfg.overflow == jitscope::OverflowPolicy::kBlock),
               describe(env));
  }
  if (const auto v = lookup(env, "JITSCOPE_FORMAT")) {
    FUZZ_CHECK((*v == "json" && cfg.format == jitscope::TraceFormat::kJson) ||
                   (*v == "perfetto" && cfg.format == jitscope::TraceFormat::kPerfetto),
               describe(env));
  }
  if (const auto v = lookup(env, "JITSCOPE_COMPRESSION")) {
    using jitscope::TraceCompression;
    FUZZ_CHECK((*v == "none" && cfg.compression == TraceCompression::kNone) ||
                   (*v == "deflate" && cfg.compression == TraceCompression::kDeflate) ||
                   (*v == "zstd" && cfg.compression == TraceCompression::kZstd),
               describe(env));
  }
}

// Config::validate's rules restated from the header and the README.
bool expected_valid(const jitscope::Config& c, bool tsc_ok) {
  if (c.output_path.empty()) return false;
  if (!c.metrics_path.empty() && c.metrics_path == c.output_path) return false;
  if (c.ring_capacity < jitscope::kMinRingCapacity ||
      c.ring_capacity > jitscope::kMaxRingCapacity) {
    return false;
  }
  if (c.flush_interval.count() < 1 || c.flush_interval.count() > 60000) return false;
  if (c.cupti_buffer_bytes < 64 * 1024 || c.cupti_buffer_bytes > 64 * 1024 * 1024 ||
      c.cupti_buffer_bytes % 8 != 0) {
    return false;
  }
  if (c.cupti_buffers < 2 || c.cupti_buffers > 1024) return false;
  for (std::uint64_t b : {c.max_trace_bytes, c.rotate_bytes}) {
    if (b != 0 && b < jitscope::kMinTraceBytes) return false;
  }
  if (c.clock == jitscope::ClockChoice::kTsc && !tsc_ok) return false;
  if (c.parent_pid < 0 || c.parent_pid > 0x7fffffff) return false;  // pid_t
  return true;
}

// A value near a bound, or any value: bounds are where the bugs are.
template <class T>
T near(FuzzedDataProvider& fdp, std::initializer_list<T> bounds) {
  const auto pick = fdp.ConsumeIntegral<std::uint8_t>();
  if (pick < 128) {
    const T b = *(bounds.begin() + pick % bounds.size());
    return static_cast<T>(b + static_cast<T>(static_cast<int>(pick % 5) - 2));
  }
  return fdp.ConsumeIntegral<T>();
}

void fuzz_validate(FuzzedDataProvider& fdp) {
  static const bool tsc_ok = [] {
    jitscope::Config c;
    c.output_path = "x";
    c.clock = jitscope::ClockChoice::kTsc;
    return c.validate().ok();
  }();
  jitscope::Config c;
  c.output_path = fdp.ConsumeRandomLengthString(8);
  c.metrics_path = fdp.ConsumeBool() ? c.output_path : fdp.ConsumeRandomLengthString(8);
  c.ring_capacity =
      near<std::size_t>(fdp, {jitscope::kMinRingCapacity, jitscope::kMaxRingCapacity, 0});
  c.overflow = static_cast<jitscope::OverflowPolicy>(fdp.ConsumeIntegralInRange(0, 1));
  c.flush_interval = std::chrono::milliseconds(near<std::int64_t>(fdp, {1, 60000, 0}));
  c.process_name = fdp.ConsumeRandomLengthString(8);
  c.clock = static_cast<jitscope::ClockChoice>(fdp.ConsumeIntegralInRange(0, 2));
  c.compile_times = static_cast<jitscope::CompileTimesReport>(fdp.ConsumeIntegralInRange(0, 2));
  c.nvtx_emit = fdp.ConsumeBool();
  c.nvtx_capture = fdp.ConsumeBool();
  c.cupti = static_cast<jitscope::CuptiMode>(fdp.ConsumeIntegralInRange(0, 2));
  c.cupti_buffer_bytes = near<std::size_t>(fdp, {64 * 1024, 64 * 1024 * 1024, 0});
  c.cupti_buffers = near<std::size_t>(fdp, {2, 1024, 0});
  c.crash_handler = fdp.ConsumeBool();
  c.max_trace_bytes = near<std::uint64_t>(fdp, {jitscope::kMinTraceBytes, 0});
  c.rotate_bytes = near<std::uint64_t>(fdp, {jitscope::kMinTraceBytes, 0});
  c.parent_pid = near<std::int64_t>(fdp, {0, 0x7fffffff});
  const jitscope::Status st = c.validate();
  FUZZ_CHECK(st.ok() == expected_valid(c, tsc_ok), st.message());
  FUZZ_CHECK(st.ok() || !st.message().empty(), "");
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) { return clear_real_env(); }

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  if ((data[0] & 1) == 0) {
    fuzz_env(data[0], std::string_view(reinterpret_cast<const char*>(data) + 1, size - 1));
  } else {
    FuzzedDataProvider fdp(data + 1, size - 1);
    fuzz_validate(fdp);
  }
  return 0;
}
