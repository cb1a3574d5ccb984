// Every jitscope_bench case, declared for jitscope_bench.cpp, which registers
// them all in one list (one translation unit keeps the registration order,
// and so the order of the output, fixed). Also the ring records one op of a
// case pushes, which sizes both the case and its batch.
#pragma once

#include <benchmark/benchmark.h>

#include <cstddef>

namespace jitscope::bench {

// Ring records one op of a case pushes (a plain span: 2, Begin and End).
// Begin + 3 args (one string, one payload slot) + End.
inline constexpr std::size_t kSpanArgsRecords = 6;
// A runtime-built name: Begin + one payload slot + End.
inline constexpr std::size_t kSpanDynRecords = 3;
// A unit's open and close: its slice with a copied name and two args.
inline constexpr std::size_t kUnitRecords = 8;
// A captured NVTX range: the record, its extra slot, the copied name.
inline constexpr std::size_t kCapturedAsciiRecords = 3;

// bench_producer.cpp: the floor, the bare rings, the producer calls.
void BM_Floor(benchmark::State& state);
void BM_RingPushBoost(benchmark::State& state);
void BM_RingPushOwn(benchmark::State& state);
void BM_Span(benchmark::State& state);
void BM_SpanOff(benchmark::State& state);
void BM_SpanArgs(benchmark::State& state);
void BM_SpanArgsOff(benchmark::State& state);
void BM_SpanDynamicName(benchmark::State& state);
void BM_SpanDynamicNameOff(benchmark::State& state);
void BM_Instant(benchmark::State& state);
void BM_InstantOff(benchmark::State& state);
void BM_Counter(benchmark::State& state);
void BM_CounterOff(benchmark::State& state);

// bench_compile_layer.cpp: phases and units (compile.hpp).
void BM_Phase(benchmark::State& state);
void BM_PhaseOff(benchmark::State& state);
void BM_PhaseColumn(benchmark::State& state);
void BM_CompileUnit(benchmark::State& state);

#if defined(JITSCOPE_BENCH_HAS_CUPTI)
// bench_cupti.cpp: the CUPTI collector, simulated, and its sessions.
void SessionOnCupti(const benchmark::State& state);
void SessionOnCuptiOff(const benchmark::State& state);
void SessionOnCuptiKernel(const benchmark::State& state);
void SessionOffCuptiKernel(const benchmark::State& state);
void BM_SpanCuptiOn(benchmark::State& state);
void BM_LaunchCallback(benchmark::State& state);
void BM_LaunchCallbackOff(benchmark::State& state);
#endif

#if defined(JITSCOPE_BENCH_NVTX)
// bench_nvtx.cpp: NVTX emission and capture.
void BM_SpanNvtx(benchmark::State& state);
void BM_NvtxCapturedRange(benchmark::State& state);
void BM_NvtxCapturedRegistered(benchmark::State& state);
void BM_NvtxCapturedRangeOff(benchmark::State& state);
#endif

// bench_flusher_memory.cpp: the writer's throughput, memory over a long run.
void BM_FlusherThroughput(benchmark::State& state);
void BM_FlusherThroughputPerfetto(benchmark::State& state);
void BM_FlusherThroughputPerfettoZstd(benchmark::State& state);
void BM_FlusherThroughputPerfettoDeflate(benchmark::State& state);
void BM_MemoryFlat(benchmark::State& state);

}  // namespace jitscope::bench
