// The compile layer's cases (compile.hpp): a phase, a column phase inside
// an open unit, a unit's open and close, each timed beside a plain span
// (counter x_span): what the compile layer adds to a span.
#include "bench_cases.hpp"
#include "bench_support.hpp"

#include <jitscope/compile.hpp>

#include <benchmark/benchmark.h>

#include <cstdint>

namespace jitscope::bench {

// A phase with no column: a span plus its key's duration list.
void BM_Phase(benchmark::State& state) {
  const SpanOp span;
  Measure(
      state, Mode::kTrace, 2,
      [](std::uint64_t) {
        JITSCOPE_PHASE("bench.phase");
        benchmark::ClobberMemory();
      },
      NoAfter{}, &span, "span");
}
void BM_PhaseOff(benchmark::State& state) {
  // No session: the bookkeeping still runs (compile_times works untraced).
  Measure(state, Mode::kOff, 0, [](std::uint64_t) {
    JITSCOPE_PHASE("bench.phase");
    benchmark::ClobberMemory();
  });
}

// A column phase inside an open unit: also charges the unit's record.
void BM_PhaseColumn(benchmark::State& state) {
  const SpanOp span;
  jitscope::CompileUnit unit({.frame = "bench"});
  Measure(
      state, Mode::kTrace, 2,
      [](std::uint64_t) {
        JITSCOPE_PHASE("bench.phase_column", {.column = "bench_us"});
        benchmark::ClobberMemory();
      },
      NoAfter{}, &span, "span");
}

// Open + close of a unit (new frame each time): its slice with a copied
// name and two args, its record built and kept in the recent ring.
void BM_CompileUnit(benchmark::State& state) {
  const SpanOp span;
  Measure(
      state, Mode::kTrace, kUnitRecords,
      [](std::uint64_t) {
        jitscope::CompileUnit unit;
        benchmark::ClobberMemory();
      },
      NoAfter{}, &span, "span");
}

}  // namespace jitscope::bench
