// jitscope_bench: what one event costs the instrumented thread, what the
// flusher sustains, and whether memory stays flat. docs/performance.md says what
// the numbers must meet and quotes them.
//
//   ./build/release/bench/jitscope_bench --benchmark_repetitions=5
//       --benchmark_report_aggregates_only=true
//
// How the cases are timed and how to read their counters: bench_support.hpp.
// The cases, by what they measure: bench_producer.cpp (the floor and the
// producer calls), bench_compile_layer.cpp, bench_cupti.cpp (CUPTI builds),
// bench_nvtx.cpp (NVTX builds), bench_flusher_memory.cpp. This file
// registers them, all in one list so that their order stays fixed.
//
// Not covered here: the end-to-end NVRTC overhead (samples/), the kBlock
// policy, the shared library (its TLS access differs), the disk.
#include "bench_cases.hpp"
#include "bench_support.hpp"

#include <benchmark/benchmark.h>

#include <cstddef>
#include <cstdint>

namespace jitscope::bench {
namespace {

void Traced(benchmark::internal::Benchmark* b) {
  b->Setup(SessionOn)
      ->Teardown(SessionOff)
      ->UseManualTime()
      ->MinTime(kMinTime)
      ->ThreadRange(1, 2)
      ->Unit(benchmark::kMicrosecond)
      ->ArgName("batch");
}
void TracedNvtx(benchmark::internal::Benchmark* b) {
  b->Setup(SessionOnNvtx)
      ->Teardown(SessionOff)
      ->UseManualTime()
      ->MinTime(kMinTime)
      ->ThreadRange(1, 2)
      ->Unit(benchmark::kMicrosecond)
      ->ArgName("batch");
}
void Untraced(benchmark::internal::Benchmark* b) {
  b->Setup(NoSession)
      ->Teardown(NoSessionEnd)
      ->UseManualTime()
      ->MinTime(kMinTime)
      ->ThreadRange(1, 2)
      ->Unit(benchmark::kMicrosecond)
      ->ArgName("batch");
}
#if defined(JITSCOPE_BENCH_HAS_CUPTI)
void TracedCupti(benchmark::internal::Benchmark* b) {
  b->Setup(SessionOnCupti)
      ->Teardown(SessionOff)
      ->UseManualTime()
      ->MinTime(kMinTime)
      ->ThreadRange(1, 2)
      ->Unit(benchmark::kMicrosecond)
      ->ArgName("batch");
}
void TracedCuptiKernel(benchmark::internal::Benchmark* b) {
  b->Setup(SessionOnCuptiKernel)
      ->Teardown(SessionOffCuptiKernel)
      ->UseManualTime()
      ->MinTime(kMinTime)
      ->ThreadRange(1, 2)
      ->Unit(benchmark::kMicrosecond)
      ->ArgName("batch");
}
void TracedCuptiOff(benchmark::internal::Benchmark* b) {
  b->Setup(SessionOnCuptiOff)
      ->Teardown(SessionOff)
      ->UseManualTime()
      ->MinTime(kMinTime)
      ->ThreadRange(1, 2)
      ->Unit(benchmark::kMicrosecond)
      ->ArgName("batch");
}
#endif

// Batch sizes: an eighth of a ring of records for the traced case; its twin
// runs the same count of ops.
constexpr std::int64_t Ops(std::size_t records_per_op) {
  return static_cast<std::int64_t>(kBatchRecords / records_per_op);
}

BENCHMARK(BM_Floor)->Arg(Ops(2))->Apply(Traced);
BENCHMARK(BM_RingPushBoost)->Arg(Ops(2))->Apply(Traced);
BENCHMARK(BM_RingPushOwn)->Arg(Ops(2))->Apply(Traced);
BENCHMARK(BM_Span)->Arg(Ops(2))->Apply(Traced);
BENCHMARK(BM_SpanOff)->Arg(Ops(2))->Apply(Untraced);
BENCHMARK(BM_SpanArgs)->Arg(Ops(kSpanArgsRecords))->Apply(Traced);
BENCHMARK(BM_SpanArgsOff)->Arg(Ops(kSpanArgsRecords))->Apply(Untraced);
BENCHMARK(BM_SpanDynamicName)->Arg(Ops(kSpanDynRecords))->Apply(Traced);
BENCHMARK(BM_SpanDynamicNameOff)->Arg(Ops(kSpanDynRecords))->Apply(Untraced);
BENCHMARK(BM_Instant)->Arg(Ops(1))->Apply(Traced);
BENCHMARK(BM_InstantOff)->Arg(Ops(1))->Apply(Untraced);
BENCHMARK(BM_Counter)->Arg(Ops(1))->Apply(Traced);
BENCHMARK(BM_CounterOff)->Arg(Ops(1))->Apply(Untraced);
BENCHMARK(BM_Phase)->Arg(Ops(2))->Apply(Traced);
BENCHMARK(BM_PhaseOff)->Arg(Ops(2))->Apply(Untraced);
BENCHMARK(BM_PhaseColumn)->Arg(Ops(2))->Apply(Traced);
BENCHMARK(BM_CompileUnit)->Arg(Ops(kUnitRecords))->Apply(Traced);
#if defined(JITSCOPE_BENCH_HAS_CUPTI)
BENCHMARK(BM_SpanCuptiOn)->Arg(Ops(2))->Apply(TracedCupti);
// Ops(2), not Ops(1): the paired span batch pushes 2 records per op.
BENCHMARK(BM_LaunchCallback)->Arg(Ops(2))->Apply(TracedCuptiKernel);
BENCHMARK(BM_LaunchCallbackOff)->Arg(Ops(2))->Apply(TracedCuptiOff);
#endif
#if defined(JITSCOPE_BENCH_NVTX)
BENCHMARK(BM_SpanNvtx)->Arg(Ops(2))->Apply(TracedNvtx);
BENCHMARK(BM_NvtxCapturedRange)->Arg(Ops(kCapturedAsciiRecords))->Apply(Traced);
BENCHMARK(BM_NvtxCapturedRegistered)->Arg(Ops(2))->Apply(Traced);
BENCHMARK(BM_NvtxCapturedRangeOff)->Arg(Ops(kCapturedAsciiRecords))->Apply(Untraced);
#endif
BENCHMARK(BM_FlusherThroughput)->UseManualTime()->MinTime(0.2)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_FlusherThroughputPerfetto)
    ->UseManualTime()
    ->MinTime(0.2)
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_FlusherThroughputPerfettoZstd)
    ->UseManualTime()
    ->MinTime(0.2)
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_FlusherThroughputPerfettoDeflate)
    ->UseManualTime()
    ->MinTime(0.2)
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_MemoryFlat)
    ->Setup(SessionOn)
    ->Teardown(SessionOff)
    ->ArgName("spans")
    ->Arg(200'000)
    ->Arg(2'000'000)
    ->Iterations(1)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace jitscope::bench

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return jitscope::bench::g_failed ? 1 : 0;
}
