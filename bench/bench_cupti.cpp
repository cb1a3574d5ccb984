// The CUPTI collector's cases (cupti.hpp), simulated: no GPU, no driver.
// Built with CUPTI only (bench/CMakeLists.txt adds this file). Their sessions
// act as if CUPTI had started (cupti_simulate_for_testing), and the bench
// calls the collector's API callback itself, as CUPTI would on each launch.
#include "bench_cases.hpp"
#include "bench_support.hpp"
#include "cupti/fake_cupti.hpp"  // tests/: cupti.hpp, <cupti.h>, the fake handles

#include <jitscope/compile.hpp>

#include <benchmark/benchmark.h>

#include <cstdint>

namespace jitscope::bench {

// A session with the collector on (started as if CUPTI had), and the same
// with it off (Config::cupti = kOff).
void SessionOnCupti(const benchmark::State& state) {
  StartSession(state, false, CollectorSetup::kSimulated);
}
void SessionOnCuptiOff(const benchmark::State& state) {
  StartSession(state, false, CollectorSetup::kOff);
}

// The fake kernel BM_LaunchCallback launches: a module loaded inside a
// compile unit, then a function got from it, both through the collector's
// callback as CUPTI would call it, so the launch's compiled_by lookup (the
// handle map, under its mutex) finds a unit. Correlation ids 1 and 2; the
// launches use ids from kLaunchCorrelationBase up.
constexpr std::uintptr_t kBenchModule = 0xbe0c0000;
constexpr std::uintptr_t kBenchFunction = 0xbe0c1000;
void SessionOnCuptiKernel(const benchmark::State& state) {
  SessionOnCupti(state);
  jitscope::CompileUnitOptions options;
  options.frame = "bench.kernel";
  jitscope::CompileUnit unit(options);
  jitscope::testing::load_module(1, jitscope::testing::fake_module(kBenchModule));
  jitscope::testing::get_function(2, jitscope::testing::fake_function(kBenchFunction),
                                  jitscope::testing::fake_module(kBenchModule));
}
// Unloads the module first: the handle map forgets the module and the function.
void SessionOffCuptiKernel(const benchmark::State& state) {
  jitscope::testing::unload_module(3, jitscope::testing::fake_module(kBenchModule));
  SessionOff(state);
}

// Whether the collector's API callback writes calls in this session: one
// memcpy call through it, before any timing, must leave a kGpuCall record as
// this thread's last (the slot just committed, kept until written over).
bool CollectorLive() {
  jitscope::testing::copy_to_device(4);
  ThreadState* ts = jitscope::detail::current_thread_state_if_registered();
  if (ts == nullptr || ts->session != jitscope::detail::session_word()) return false;
  const Record& r = ts->ring.slot(kRingCapacity - 1);
  return r.kind == RecordKind::kGpuCall && r.value.u64 == 4;
}

// BM_Span's loop in a session with the collector on: a span does nothing
// more then (no external-correlation push/pop; calls are correlated by the
// launch callback alone), so its x_floor should match BM_Span's in the same
// run. The two cannot be paired batch by batch: the collector is on or off
// for a whole session; x_floor is the like-for-like ratio.
void BM_SpanCuptiOn(benchmark::State& state) {
  const bool live = CollectorLive();
  BM_Span(state);
  if (!live) state.SkipWithError("the CUPTI collector's callback is not live (simulation off?)");
}

// One cuLaunchKernel as CUPTI reports it to our callback: API enter (the
// handle-map lookup, then one kGpuCall record into this thread's ring) and
// API exit (nothing for a launch). Each thread counts its correlation ids
// from its own base, one more each launch, as CUPTI numbers calls.
constexpr std::uint32_t kLaunchCorrelationBase = std::uint32_t{1} << 28;
struct LaunchCall {
  cuLaunchKernel_params params{};
  int result = 0;  // CUDA_SUCCESS, what the exit site reads
  CUpti_CallbackData cb{};
  std::uint32_t next = 0;  // the next launch's correlation id

  explicit LaunchCall(int thread) {
    params.f = jitscope::testing::fake_function(kBenchFunction);
    cb.functionName = "cuLaunchKernel";
    cb.functionParams = &params;
    cb.functionReturnValue = &result;
    next = kLaunchCorrelationBase * static_cast<std::uint32_t>(thread + 1);
  }
  JITSCOPE_ALWAYS_INLINE void operator()(std::uint64_t) {
    cb.correlationId = next++;
    cb.callbackSite = CUPTI_API_ENTER;
    jitscope::detail::cupti_on_api_callback(CUPTI_CB_DOMAIN_DRIVER_API,
                                            CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, &cb);
    cb.callbackSite = CUPTI_API_EXIT;
    jitscope::detail::cupti_on_api_callback(CUPTI_CB_DOMAIN_DRIVER_API,
                                            CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, &cb);
    benchmark::ClobberMemory();
  }
};

// After one launch: whether its record is this thread's last one, with the
// unit found for the function (compiled_by set). Reads the slot just
// committed, which the ring keeps until this thread writes over it.
static_assert((kRingCapacity & (kRingCapacity - 1)) == 0, "slot(capacity - 1) is the last one");
bool LaunchAttributed(LaunchCall& launch) {
  const std::uint32_t correlation = launch.next;
  launch(0);
  ThreadState* ts = jitscope::detail::current_thread_state_if_registered();
  if (ts == nullptr || ts->session != jitscope::detail::session_word()) return false;
  const Record& r = ts->ring.slot(kRingCapacity - 1);
  return r.kind == RecordKind::kGpuCall && r.value.u64 == correlation && r.name != nullptr &&
         r.index == static_cast<std::uint8_t>(jitscope::detail::GpuCallRole::kLaunch);
}

// Counters: x_span pairs each launch batch with a batch of plain spans, and
// compiled_by_hit says the lookup found the unit (1) on every thread.
void BM_LaunchCallback(benchmark::State& state) {
  LaunchCall launch(state.thread_index());
  const bool attributed = LaunchAttributed(launch);
  const SpanOp span;
  Measure(state, Mode::kTrace, 1, launch, NoAfter{}, &span, "span");
  state.counters["compiled_by_hit"] =
      benchmark::Counter(attributed ? 1 : 0, benchmark::Counter::kAvgThreads);
  if (!attributed) state.SkipWithError("the launch was not written with its compile unit");
}
// The collector off (its session with Config::cupti = kOff): the callback
// returns at its first check. Nothing reaches the ring, so it is timed as
// the floor is (a session on, no ring to drain).
void BM_LaunchCallbackOff(benchmark::State& state) {
  LaunchCall launch(state.thread_index());
  Measure(state, Mode::kFloor, 1, launch);
}

}  // namespace jitscope::bench
