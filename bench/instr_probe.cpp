// jitscope_instr_probe: N operations of one form in a session, nothing else,
// for bench/instructions.sh to count instructions under callgrind as
// (Ir(2N) - Ir(N)) / N per thread: the caller's thread is the hot path, the
// flusher's thread what writing each event costs. Deterministic, so a
// hot-path change is judged in instructions, not in this VM's noisy time.
//
// usage: jitscope_instr_probe FORM N [json|perfetto]
//   FORM: span | args | args_macro | args_string | off | dynamic | dynamic_long | instant
//         | counter | phase | phase_off | unit_span | unit | unit_phase | floor
//   the trace's form (default json): what the flusher's column counts
// floor is the physical minimum for comparison: two TSC reads and one
// 24-byte store into a thread-local array, with no session.
#include <jitscope/compile.hpp>
#include <jitscope/jitscope.hpp>

#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

namespace {

struct FloorRecord {
  std::uint64_t begin, end;
  const char* name;
};
thread_local std::array<FloorRecord, 1024> t_floor;

[[gnu::noinline]] void floor_op(long i) {
#if defined(__x86_64__) || defined(__i386__)
  const std::uint64_t b = __rdtsc();
  const std::uint64_t e = __rdtsc();
#else
  const std::uint64_t b = jitscope::detail::monotonic_ns();
  const std::uint64_t e = jitscope::detail::monotonic_ns();
#endif
  FloorRecord& slot = t_floor[static_cast<std::size_t>(i) & 1023];
  slot = {b, e, "x"};
#if defined(__GNUC__)
  // Nothing reads t_floor: without this GCC drops the store, and the floor
  // was two clock reads alone (8 instructions with the loop; 23 with the
  // store, the call and the loop).
  asm volatile("" : : "r"(&slot) : "memory");
#endif
}

// A compiler barrier after every operation (benchmark::ClobberMemory()'s),
// as users' code behaves: without it the compiler keeps the session word
// and ring pointers in registers across iterations and merges work that a
// real call site, surrounded by other code, pays each time.
#define JITSCOPE_PROBE_LOOP(body)      \
  [](long n) {                         \
    for (long i = 0; i < n; ++i) {     \
      body;                            \
      asm volatile("" : : : "memory"); \
    }                                  \
  }

const std::string kDynamicName = "a name of 24 characters";
// A kernel's name as Triton and Inductor make them: 72 bytes, three slots.
const std::string kLongDynamicName =
    "triton_per_fused__softmax_add_native_layer_norm_mul_view_0_xblock_128_v2";

// Called through a pointer: each loop is a function of its own.
struct Form {
  std::string_view name;
  void (*run)(long n);
};
// "off" is "span" with no session; "phase_off" is "phase" with none.
const Form kForms[] = {
    {"span", JITSCOPE_PROBE_LOOP(JITSCOPE_SPAN("x"))},
    {"off", JITSCOPE_PROBE_LOOP(JITSCOPE_SPAN("x"))},
    {"args", JITSCOPE_PROBE_LOOP(jitscope::Span span("x", {{"a", i}, {"b", 2 * i}}))},
    {"args_macro", JITSCOPE_PROBE_LOOP(JITSCOPE_SPAN_ARGS("x", {"a", i}, {"b", 2 * i}))},
    // BM_SpanArgs's list: its string arg sends the span through the library.
    {"args_string",
     JITSCOPE_PROBE_LOOP(JITSCOPE_SPAN_ARGS("x", {"a", i}, {"b", 42}, {"s", "fast"}))},
    {"dynamic", JITSCOPE_PROBE_LOOP(JITSCOPE_SPAN_DYN(kDynamicName))},
    {"dynamic_long", JITSCOPE_PROBE_LOOP(JITSCOPE_SPAN_DYN(kLongDynamicName))},
    {"instant", JITSCOPE_PROBE_LOOP(JITSCOPE_INSTANT("x"))},
    {"counter", JITSCOPE_PROBE_LOOP(JITSCOPE_COUNTER("x", static_cast<double>(i)))},
    {"phase", JITSCOPE_PROBE_LOOP(JITSCOPE_PHASE("x"))},
    // A span inside an open compile unit (opened before the loop): the
    // flusher stamps its compile id on the event.
    {"unit_span", JITSCOPE_PROBE_LOOP(JITSCOPE_SPAN("x"))},
    // A compile unit of one frame, alone and with one phase inside (the
    // Python budget's shape: jitscope.compile_unit + one jitscope.phase).
    {"unit", JITSCOPE_PROBE_LOOP(jitscope::CompileUnit unit({.frame = "f"}))},
    {"unit_phase",
     JITSCOPE_PROBE_LOOP(jitscope::CompileUnit unit({.frame = "f"}); JITSCOPE_PHASE("p"))},
    {"floor", JITSCOPE_PROBE_LOOP(floor_op(i))},
};

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3 && argc != 4) {
    std::fprintf(stderr, "usage: %s FORM N [json|perfetto] (FORM: see the source)\n", argv[0]);
    return 2;
  }
  const std::string_view trace_form = argc == 4 ? argv[3] : "json";
  if (trace_form != "json" && trace_form != "perfetto") {
    std::fprintf(stderr, "unknown trace form %s\n", argv[3]);
    return 2;
  }
  const std::string_view form = argv[1];
  const long n = std::atol(argv[2]);
  bool known = form == "phase_off";
  for (const Form& f : kForms) known = known || f.name == form;
  if (!known) {
    std::fprintf(stderr, "unknown form %s\n", argv[1]);
    return 2;
  }
  const bool session = form != "off" && form != "phase_off" && form != "floor";
  jitscope::Config config;
  config.output_path = "/dev/null";
  // JITSCOPE_CLOCK=monotonic counts the library's path (the inline one reads
  // only the TSC on x86); the fields below override the rest.
  if (const jitscope::Status st = jitscope::Config::from_env(&config, false); !st) {
    std::fprintf(stderr, "%s\n", st.message().c_str());
    return 2;
  }
  config.output_path = "/dev/null";
  config.format =
      trace_form == "perfetto" ? jitscope::TraceFormat::kPerfetto : jitscope::TraceFormat::kJson;
  config.cupti = jitscope::CuptiMode::kOff;
  config.crash_handler = false;
  config.ring_capacity = 1 << 20;
  config.overflow = jitscope::OverflowPolicy::kBlock;  // every event is written
  if (session && !jitscope::start(config).ok()) return 1;
  // One loop per form, each in a function of its own: nothing else in the
  // loop counts against it, and no other form's code shapes its registers.
  {
    std::optional<jitscope::CompileUnit> unit;
    if (form == "unit_span") unit.emplace(jitscope::CompileUnitOptions{.frame = "probe"});
    for (const Form& f : kForms) {
      if (f.name == form || (form == "phase_off" && f.name == "phase")) {
        f.run(n);
        break;
      }
    }
  }
  if (session && !jitscope::stop().ok()) return 1;
  return 0;
}
