// A consumer built with JITSCOPE_DISABLE and linked with no jitscope library
// (tests/CMakeLists.txt: disabled_consumer): every public header, every
// public call at least once. Each call must be an inline no-op with the
// documented result; start() must fail, saying jitscope is compiled out, and
// what it said is printed for disabled_consumer.sh to check. Exit 0: all as
// documented; 1: a line per mismatch on stderr.
// Not covered: the symbols of the binary and the trace file left behind
// (disabled_consumer.sh); mixing with enabled TUs (disabled_test).
#if !defined(JITSCOPE_DISABLE)
#error "build this file with JITSCOPE_DISABLE"
#endif

#include <jitscope/jitscope.h>
#include <jitscope/autotune.hpp>
#include <jitscope/compile.hpp>
#include <jitscope/dedup.hpp>
#include <jitscope/jitscope.hpp>
#include <jitscope/nvtx.hpp>
#include <jitscope/step_log.hpp>
#include <jitscope/version.hpp>

#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <type_traits>

extern "C" int c_api_failures(void);  // disabled_consumer_c.c

namespace {

int g_failures = 0;
int g_evaluated = 0;

void expect(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "FAILED: %s\n", what);
    ++g_failures;
  }
}
#define EXPECT(cond) expect((cond), #cond)

[[maybe_unused]] std::string side_effect() {  // the macros never call it
  ++g_evaluated;
  return "evaluated";
}

// Written out, not JITSCOPE_COMPILED_OUT_MESSAGE: this file also compiles
// against headers older than the compiled-out API (and then fails to link).
constexpr const char* kCompiledOut =
    "jitscope is compiled out (JITSCOPE_DISABLE): no session is started";

static_assert(!jitscope::detail::kCompiledIn);
static_assert(std::is_void_v<decltype(JITSCOPE_SPAN("x"))>);

void session_calls() {
  jitscope::Config cfg;
  const jitscope::Status env = jitscope::Config::from_env(&cfg);
  EXPECT(!env.ok());
  EXPECT(env.message().find("compiled out") != std::string::npos);
  EXPECT(cfg.output_path.empty());  // untouched, though JITSCOPE_TRACE is set
  EXPECT(jitscope::Config::from_env(&cfg, false).message() == env.message());
  cfg.output_path = "disabled_consumer_never_written.json";
  EXPECT(cfg.validate().ok());
  const jitscope::Status st = jitscope::start(cfg);
  std::printf("start(): ok=%d message=\"%s\"\n", st.ok() ? 1 : 0, st.message().c_str());
  EXPECT(!st.ok() && !static_cast<bool>(st));
  EXPECT(st.message() == kCompiledOut);
  EXPECT(!jitscope::active());
  jitscope::SessionStats stats;
  stats.events_written = 7;
  EXPECT(jitscope::stop(&stats).ok());
  EXPECT(stats.events_written == 0 && stats.output_path.empty());
  EXPECT(jitscope::stop().ok());
  EXPECT(!jitscope::note_child_process(42, "child.json", "worker").ok());
  EXPECT(!jitscope::note_task_sent(7).ok());
  EXPECT(!jitscope::snapshot().ok());
  jitscope::mark_ready();
  EXPECT(!jitscope::snapshot("s.json").ok());
  EXPECT(!jitscope::note_task_received(42, 7).ok());
  jitscope::set_thread_name("main");
  EXPECT(!jitscope::Status::error("x").ok());
  EXPECT(!jitscope::Status::error(std::string("x")).ok());
  EXPECT(std::strlen(JITSCOPE_VERSION_STRING) > 0);
}

void span_calls() {
  JITSCOPE_SPAN("static");
  JITSCOPE_SPAN_ARGS("with_args", {"k", side_effect()});
  JITSCOPE_SPAN_DYN(side_effect());
  JITSCOPE_INSTANT("instant");
  JITSCOPE_INSTANT("instant_args", {"k", side_effect()});
  JITSCOPE_COUNTER("counter", side_effect().size());
  JITSCOPE_THREAD_NAME(side_effect());
  EXPECT(g_evaluated == 0);

  char buffer[16] = "buffer";
  const std::string dyn = "dynamic";
  jitscope::Span a("literal");
  jitscope::Span b("literal_args", {{"i", -1}, {"u", 2u}, {"d", 0.5}, {"b", true}});
  jitscope::Span c(buffer);
  jitscope::Span d(buffer, {{"s", "text"}});
  jitscope::Span e{std::string_view(dyn)};
  jitscope::Span f(std::string_view(dyn), {{"s", dyn}});
  a.arg("k", 1);
  a.arg(jitscope::Arg("k", std::string_view("v")));
  EXPECT(!a.recording() && !b.recording() && !c.recording() && !d.recording() && !e.recording() &&
         !f.recording());
  a.end();
  a.end();
  jitscope::instant("fn");
  jitscope::instant("fn", {{"k", 1}});
  jitscope::instant(std::string_view(dyn));
  jitscope::instant(buffer);
  jitscope::counter("fn", 1.0);
  jitscope::counter(std::string_view(dyn), 2.0);
  jitscope::counter(buffer, 3.0);
}

void compile_calls() {
  jitscope::set_model_name("resnet");
  EXPECT(jitscope::model_name() == "model");
  jitscope::GraphNameScope graph("outer");
  jitscope::register_recompile_context_hook([] { return std::string("ctx"); });
  jitscope::clear_recompile_context_hooks();
  {
    jitscope::CompileUnit unit({.frame = "f", .graph = "fwd", .recompile_reason = "shape"});
    JITSCOPE_PHASE("lower");
    JITSCOPE_PHASE("codegen", {.column = "codegen_time_us", .compile_event = true});
    EXPECT(unit.id() == jitscope::CompileId{});
    EXPECT(unit.name().empty());
    EXPECT(!unit.is_recompile());
    unit.cache_hit("k");
    unit.cache_miss("k", "disk");
    EXPECT(unit.set("kernels", 12).ok());
    EXPECT(unit.set("mode", "fast", true).ok());
    EXPECT(unit.increment("lower_time_us", 5).ok());
    EXPECT(unit.add_to_set("ops", std::string("add")).ok());
    EXPECT(unit.waits_for({.frame = 1, .attempt = 0}, 42).ok());
    unit.fail("Error", "reason");
    try {
      throw std::runtime_error("boom");
    } catch (...) {
      unit.fail_with_current_exception();
    }
    const jitscope::CompileUnitRef ref = unit.ref();
    EXPECT(!ref.valid());
    std::thread([&ref] { jitscope::UnitScope scope(ref); }).join();
    { jitscope::LoadScope loading(ref); }
    EXPECT(!jitscope::current_compile_unit().valid());
    jitscope::CompileId id{3, 1};
    EXPECT(!jitscope::current_compile_id(&id));
    EXPECT(id.str() == "3/1" && id.display() == "[3/1]");

    static const jitscope::PhaseKey key("keyed", {.column = "keyed_us"});
    EXPECT(key.status().ok() && key.stats() == nullptr);
    jitscope::Phase keyed(key);
    jitscope::Phase keyed_args(key, {{"n", 1}});
    jitscope::Phase by_name("by_name", {.compile_event = true});
    const jitscope::EventRef ev = by_name.event();
    EXPECT(!ev.found() && ev.lookup_error().empty());
    using jitscope::DataLevel;
    EXPECT(ev.set(DataLevel::kTrace, "k", 1).ok());
    EXPECT(ev.increment(DataLevel::kCompileEvent, "k").ok());
    EXPECT(ev.add_to_set(DataLevel::kMetric, "k", 2.5).ok());
    ev.try_set(DataLevel::kTrace, "k", false, true);
    ev.try_increment(DataLevel::kTrace, "k", 3);
    ev.try_add_to_set(DataLevel::kTrace, "k", "v");
    EXPECT(!jitscope::event("by_name").found());
    EXPECT(!jitscope::toplevel_event().found());
    by_name.end();
    keyed_args.end();
    jitscope::PhaseHandle handle = jitscope::begin_phase(key, {{"n", 1}});
    jitscope::PhaseHandle by_name_handle = jitscope::begin_phase("by_name");
    EXPECT(!handle.open() && !by_name_handle.open() && !handle.event().found());
    handle.end();
    jitscope::ThreadAttachment attachment = jitscope::attach_thread(ref);
    EXPECT(!attachment.attached());
    attachment.detach();
    jitscope::Span first("first");
    jitscope::Span moved(std::move(first));
    EXPECT(!moved.recording());
    EXPECT(!unit.is_open());

    jitscope::WaitCounter waits("pool");
    {
      jitscope::WaitCounter::Guard g = waits.wait();
      jitscope::WaitCounter::Guard moved(std::move(g));
      moved.end();
    }
    EXPECT(waits.count() == 0 && waits.total_ns() == 0);
    unit.close();
  }
  EXPECT(jitscope::recent_compile_records().empty());
  const jitscope::CompileRecord runtime = jitscope::runtime_record();
  EXPECT(runtime.is_runtime && runtime.columns.empty());
  EXPECT(runtime.to_json() == "{}");
  EXPECT(jitscope::phase_times().empty());
  EXPECT(jitscope::compile_times().empty());
  EXPECT(jitscope::compile_times(jitscope::TableFormat::kCsv, true).empty());
  EXPECT(jitscope::cumulative_time_report().empty());
  jitscope::reset_compile_state();
  jitscope::FieldValue v("s");
  EXPECT(v.type() == jitscope::FieldValue::Type::kString && v.as_string() == "s");
}

void step_log_dedup_nvtx_calls() {
  int sunk = 0;
  jitscope::set_step_sink([&sunk](jitscope::LogLevel, std::string_view) { ++sunk; });
  jitscope::set_progress_enabled(true);
  jitscope::reset_steps();
  {
    jitscope::CompileProgress bar("compile", 3);
    jitscope::CompileProgress negative("negative", -2);
    jitscope::StepLogger trace_log("trace");
    trace_log.log("captured 12 ops");
    trace_log.log("debug", jitscope::LogLevel::kDebug);
    bar.advance("manual");
    EXPECT(trace_log.step() == 0 && trace_log.stage().empty());
    EXPECT(bar.stages() == 3 && bar.done() == 0 && !bar.drawn());
    EXPECT(negative.stages() == 0);
  }
  jitscope::set_step_sink({});
  EXPECT(sunk == 0);

  jitscope::DuplicateWarningChecker checker(0);
  EXPECT(checker.capacity() == 1);
  EXPECT(checker.add("w") && checker.add("w"));  // keeps nothing: never hides
  EXPECT(checker.size() == 0);
  checker.reset();
  jitscope::DuplicateWarningChecker defaults;
  EXPECT(defaults.capacity() == jitscope::kDefaultDuplicateWarningCapacity);

  const jitscope::NvtxStatus nvtx = jitscope::nvtx_status();
  EXPECT(!nvtx.compiled_in && !nvtx.emitting && nvtx.captured_instances == 0);
}

void autotune_calls() {
  jitscope::Autotune tune("matmul");
  EXPECT(tune.id() == 0);
  jitscope::AutotuneTrial a = tune.trial({{"block", 128}, {"fast", true}});
  const jitscope::AutotuneTrial b = tune.trial({});
  EXPECT(a.index() == 0 && b.index() == 1 && tune.trials() == 2);
  {
    jitscope::AutotuneStep c = a.compile();
    jitscope::AutotuneStep moved = std::move(c);
    moved.end();
    jitscope::AutotuneStep bench = b.benchmark();
  }
  a.compiled_by(jitscope::CompileId{});
  a.result(1.5);
  b.failed("too big");
  tune.winner(a);
}

void c_api_from_cpp() {
  jitscope_config cfg;
  jitscope_config_init(&cfg);
  cfg.output_path = "never.json";
  EXPECT(jitscope_start(&cfg) == -1);
  EXPECT(std::strcmp(jitscope_last_error(), kCompiledOut) == 0);
  EXPECT(jitscope_active() == 0);
  EXPECT(jitscope_stop() == 0);
}

}  // namespace

int main() {
  session_calls();
  span_calls();
  compile_calls();
  step_log_dedup_nvtx_calls();
  autotune_calls();
  c_api_from_cpp();
  g_failures += c_api_failures();
  EXPECT(g_evaluated == 0);
  if (g_failures != 0) {
    std::fprintf(stderr, "%d check(s) failed\n", g_failures);
    return 1;
  }
  std::printf("all compiled-out calls behaved as documented\n");
  return 0;
}
