// The hot path's cases: the floor (two clock reads and one record store),
// the two bare rings beside it, and the producer calls (span, span with
// args, runtime-named span, instant, counter), each with its disabled twin.
// These are the numbers the per-event budgets in docs/performance.md are about.
#include "bench_cases.hpp"
#include "bench_support.hpp"

#include <jitscope/jitscope.hpp>

#include <benchmark/benchmark.h>
#include <boost/lockfree/spsc_queue.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace jitscope::bench {

// --- the floor ------------------------------------------------------------------

void BM_Floor(benchmark::State& state) {
  const FloorOp floor;
  Measure(state, Mode::kFloor, 1, floor);
}

// Between the floor and a span: the two rings side by side, each taking two
// clock reads and a Begin/End pair with none of the SDK around them (no call,
// no TLS lookup, no reservation), drained untimed by this thread.
// boost::lockfree::spsc_queue copies a stack-built record in; ours
// (sdk/src/ring/ring.hpp) is written in place, as ring/producer.cpp does.
template <class RingType, class PushPair>
void RingPushCase(benchmark::State& state, PushPair push_pair) {
  auto ring = std::make_unique<RingType>(kRingCapacity);
  std::vector<Record> sink(kRingCapacity);
  std::uint32_t word = jitscope::detail::session_word();
  benchmark::DoNotOptimize(word);
  Measure(
      state, Mode::kFloor, 2,
      [&ring, word, push_pair](std::uint64_t) {
        push_pair(*ring, word);
        benchmark::ClobberMemory();
      },
      [&] {
        while (ring->pop(sink.data(), sink.size()) != 0) {
        }
      });
}

void BM_RingPushBoost(benchmark::State& state) {
  using BoostRing = boost::lockfree::spsc_queue<Record>;
  RingPushCase<BoostRing>(state, [](BoostRing& ring, std::uint32_t word) {
    Record b{};
    b.ts = jitscope::detail::read_clock(word);
    b.name = kFloorName;
    b.kind = RecordKind::kBegin;
    ring.push(b);
    Record e{};
    e.ts = jitscope::detail::read_clock(word);
    e.kind = RecordKind::kEnd;
    ring.push(e);
  });
}

// Writes one record straight into the next slot of our ring.
[[gnu::always_inline]] inline void PushInPlace(Ring& ring, std::uint64_t ts, const char* name,
                                               RecordKind kind) {
  if (!ring.has_room(1)) return;
  Record& r = ring.slot(0);
  r.ts = ts;
  r.name = name;
  r.value.u64 = 0;
  r.name_len = 0;
  r.kind = kind;
  r.type = jitscope::detail::ValueType::kNone;
  r.flags = 0;
  r.index = 0;
  ring.commit(1);
}

void BM_RingPushOwn(benchmark::State& state) {
  RingPushCase<Ring>(state, [](Ring& ring, std::uint32_t word) {
    PushInPlace(ring, jitscope::detail::read_clock(word), kFloorName, RecordKind::kBegin);
    PushInPlace(ring, jitscope::detail::read_clock(word), nullptr, RecordKind::kEnd);
  });
}

// --- producer cases and their disabled twins ----------------------------------

// Also times a floor batch per iteration: counters floor_ns_per_op, x_floor.
void BM_Span(benchmark::State& state) {
  const FloorOp floor;
  Measure(
      state, Mode::kTrace, 2,
      [](std::uint64_t) {
        JITSCOPE_SPAN("bench.span");
        benchmark::ClobberMemory();
      },
      NoAfter{}, &floor);
}
void BM_SpanOff(benchmark::State& state) {
  Measure(state, Mode::kOff, 0, [](std::uint64_t) {
    JITSCOPE_SPAN("bench.span");
    benchmark::ClobberMemory();
  });
}

// Begin + 3 args (one string, one payload slot) + End.
[[gnu::always_inline]] inline void SpanWithArgs(std::uint64_t n) {
  // The macro builds the args only when a session is on; the class form
  // (Span s("x", {{...}})) builds them before it can check.
  JITSCOPE_SPAN_ARGS("bench.span_args", {"ops", static_cast<int>(n)}, {"regs", 42},
                     {"mode", "fast"});
  benchmark::ClobberMemory();
}
void BM_SpanArgs(benchmark::State& state) {
  Measure(state, Mode::kTrace, kSpanArgsRecords, [](std::uint64_t n) { SpanWithArgs(n); });
}
void BM_SpanArgsOff(benchmark::State& state) {
  Measure(state, Mode::kOff, 0, [](std::uint64_t n) { SpanWithArgs(n); });
}

// A 24-byte runtime-built name: Begin + one payload slot + End.
void BM_SpanDynamicName(benchmark::State& state) {
  const std::string name = "kernel::gemm_f16_128x128";
  Measure(state, Mode::kTrace, kSpanDynRecords, [&name](std::uint64_t) {
    JITSCOPE_SPAN_DYN(name);
    benchmark::ClobberMemory();
  });
}
void BM_SpanDynamicNameOff(benchmark::State& state) {
  const std::string name = "kernel::gemm_f16_128x128";
  Measure(state, Mode::kOff, 0, [&name](std::uint64_t) {
    JITSCOPE_SPAN_DYN(name);
    benchmark::ClobberMemory();
  });
}

void BM_Instant(benchmark::State& state) {
  Measure(state, Mode::kTrace, 1, [](std::uint64_t) {
    JITSCOPE_INSTANT("bench.instant");
    benchmark::ClobberMemory();
  });
}
void BM_InstantOff(benchmark::State& state) {
  Measure(state, Mode::kOff, 0, [](std::uint64_t) {
    JITSCOPE_INSTANT("bench.instant");
    benchmark::ClobberMemory();
  });
}

void BM_Counter(benchmark::State& state) {
  Measure(state, Mode::kTrace, 1, [](std::uint64_t n) {
    JITSCOPE_COUNTER("bench.counter", n);
    benchmark::ClobberMemory();
  });
}
void BM_CounterOff(benchmark::State& state) {
  Measure(state, Mode::kOff, 0, [](std::uint64_t n) {
    JITSCOPE_COUNTER("bench.counter", n);
    benchmark::ClobberMemory();
  });
}

}  // namespace jitscope::bench
