// The harness every jitscope_bench case shares: the run's session setups
// and teardowns (bench_support.cpp), the per-thread ring watch, the floor op
// and Measure(), which times a case in batches. Separate from the cases so
// that each case file holds only what it measures.
//
// How the producer cases are timed. With a session on, a producer (tens of ns
// per span) outruns the flusher, so a plain `for (auto _ : state)` loop would
// fill the ring within milliseconds and then time the cheaper drop path. Here
// one benchmark iteration is one batch of `batch` events that fills at most an
// eighth of a ring that is empty when the batch starts, so no event can be
// dropped; the batch alone is timed (UseManualTime, steady_clock around it),
// then, untimed, the thread sleeps until the flusher (flush_interval 1 ms) has
// drained its ring and gone back to sleep (its /proc state is no longer R).
// The flusher then sleeps a whole interval, so the batch (a few hundred us)
// normally runs with the flusher idle and not competing for a core;
// `flusher_overlap` is the fraction of batches during which it popped records
// anyway. Each run (Setup/Teardown) has its own session writing to /dev/null
// with the default kDrop policy, i.e. the production path; a run that lost
// any event is reported as an error, not as a number.
//
// Reading the output: `Time` is per batch (per benchmark iteration); the
// per-event numbers are the counters `ns_per_op` (wall, per thread, averaged
// over threads) and `cpu_ns_per_op` (the thread's CPU clock; lower than wall
// when the thread was preempted), and items_per_second (all threads together).
// With 2 threads both start each batch together (a barrier), so they really
// trace at once; the two-thread budget compares ns_per_op at threads:2 with
// threads:1. BM_Span also times a BM_Floor batch after each of its own
// batches: `x_floor` is span/floor from those pairs, the budget ratio with
// both sides measured under the same conditions (BM_Floor on its own runs hot
// and back to back, and on a shared machine at a different moment).
// Each benchmark sets its own MinTime, which overrides --benchmark_min_time;
// --benchmark_enable_random_interleaving=true spreads repetitions out in time
// on a noisy machine.
#pragma once

#include "clock/clock.hpp"
#include "ring/ring.hpp"
#include "ring/thread_registry.hpp"

#include <jitscope/jitscope.hpp>

#include <benchmark/benchmark.h>

#include <time.h>

#include <algorithm>
#include <atomic>
#include <barrier>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <type_traits>

namespace jitscope::bench {

using jitscope::detail::Record;
using jitscope::detail::RecordKind;
using jitscope::detail::Ring;
using jitscope::detail::ThreadState;
using jitscope::detail::ValueType;

inline constexpr std::size_t kRingCapacity = std::size_t{1} << 16;  // records: 2 MiB a thread
inline constexpr std::size_t kBatchRecords = kRingCapacity / 8;     // records one batch may push
inline constexpr std::chrono::milliseconds kFlushInterval{1};
inline constexpr double kMinTime = 0.1;  // seconds of timed batches per run (manual time)

// --- runs: sessions, barrier, failure flag (bench_support.cpp) ---------------

extern std::atomic<bool> g_failed;                 // main's exit status
extern std::unique_ptr<std::barrier<>> g_barrier;  // one per run, sized to its threads

// True unless the session's flusher is running or runnable (state R).
bool FlusherIdle();

// The session's CUPTI collector: off (Config::cupti = kOff, so a GPU
// machine's driver does not change the other cases), or kSimulated: as if
// CUPTI had started (its API callback live, no GPU needed; only with CUPTI,
// JITSCOPE_BENCH_HAS_CUPTI). The teardown checks SessionStats::cupti_on.
enum class CollectorSetup { kOff, kSimulated };

// Setup of a case that traces: a fresh session for the run.
void StartSession(const benchmark::State& state, bool nvtx_emit,
                  CollectorSetup collector = CollectorSetup::kOff);
// Every case runs without NVTX emission except BM_SpanNvtx*.
void SessionOn(const benchmark::State& state);
void SessionOnNvtx(const benchmark::State& state);
// Teardown of a case that traces: the session's own totals must show no loss.
void SessionOff(const benchmark::State& state);
// Setup/Teardown of a disabled twin: compiled in, no session.
void NoSession(const benchmark::State& state);
void NoSessionEnd(const benchmark::State& state);

// --- measuring ----------------------------------------------------------------

inline std::uint64_t ThreadCpuNs() noexcept {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000u +
         static_cast<std::uint64_t>(ts.tv_nsec);
}

// The calling thread's ring in the active session, watched from the producer
// side (write_available is the producer's call).
class RingWatch {
 public:
  // After the thread's first event of the session.
  bool attach() noexcept {
    ts_ = jitscope::detail::current_thread_state_if_registered();
    if (ts_ != nullptr && ts_->session != jitscope::detail::session_word()) ts_ = nullptr;
    return ts_ != nullptr;
  }
  std::size_t queued() const noexcept {
    return ts_ == nullptr ? 0 : ts_->ring.capacity() - ts_->ring.write_available();
  }
  // Untimed: sleeps until the flusher has popped everything and finished
  // writing it out.
  void wait_drained() {
    if (ts_ == nullptr) return;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (queued() != 0 || !FlusherIdle()) {
      if (std::chrono::steady_clock::now() > deadline) {
        stuck_ = true;
        return;
      }
      std::this_thread::sleep_for(std::chrono::microseconds(20));
    }
  }
  std::uint64_t lost() const noexcept {
    if (ts_ == nullptr) return 0;
    return ts_->dropped.load(std::memory_order_relaxed) +
           ts_->args_dropped.load(std::memory_order_relaxed);
  }
  bool attached() const noexcept { return ts_ != nullptr; }
  bool stuck() const noexcept { return stuck_; }

 private:
  ThreadState* ts_ = nullptr;
  bool stuck_ = false;
};

enum class Mode { kTrace, kFloor, kOff };

inline constexpr const char* kFloorName = "bench.floor";

// The physical floor of a span: read the session's clock twice (the session
// word picks the clock, as in the SDK), store one 32-byte record into this
// thread's own array (as big as a ring, index wrapping).
class FloorOp {
 public:
  FloorOp() : buf_(Buffer()), word_(jitscope::detail::session_word()) {
    benchmark::DoNotOptimize(word_);
  }
  JITSCOPE_ALWAYS_INLINE void operator()(std::uint64_t n) const {
    const std::uint64_t begin = jitscope::detail::read_clock(word_);
    const std::uint64_t end = jitscope::detail::read_clock(word_);
    Record& r = buf_[n & (kRingCapacity - 1)];
    r.ts = begin;
    r.name = kFloorName;
    r.value.u64 = end;
    r.name_len = 0;
    r.kind = RecordKind::kBegin;
    r.type = ValueType::kNone;
    r.flags = 0;
    r.index = 0;
    benchmark::ClobberMemory();
  }

 private:
  static Record* Buffer() {
    thread_local std::unique_ptr<Record[]> t_floor;
    if (!t_floor) t_floor.reset(new Record[kRingCapacity]);
    return t_floor.get();
  }
  Record* buf_;
  std::uint32_t word_;
};

struct NoAfter {
  void operator()() const noexcept {}
};

// Runs `op(n)` in timed batches of state.range(0). `records_per_op`: ring
// slots one op pushes (kTrace). `after` runs untimed after each batch. With
// `floor`, each iteration also times one floor batch of the same size once
// the flusher is idle again, so `x_floor` compares the two within the same
// run, batch by batch, as the budget in docs/performance.md asks (robust to the machine's
// speed drifting between benchmarks).
// `Ref` (FloorOp by default) is the op the paired counters compare with:
// x_floor for the floor, x_span for a plain span (SpanOp).
template <class Op, class After, class Ref = FloorOp>
void Measure(benchmark::State& state, Mode mode, std::size_t records_per_op, Op&& op, After&& after,
             const Ref* floor = nullptr, const char* ref_name = "floor") {
  const auto batch = static_cast<std::uint64_t>(state.range(0));
  std::uint64_t n = 0;
  const bool session = jitscope::active();
  if ((mode == Mode::kOff) == session) {
    state.SkipWithError(session ? "a session is active (JITSCOPE_TRACE set?)"
                                : "no session: start() failed (see the jitscope: line)");
    for (auto _ : state) {
    }
    return;
  }
  RingWatch watch;
  auto run_batch = [&] {
    for (std::uint64_t i = 0; i < batch; ++i) op(n++);
  };
  std::uint64_t floor_n = 0;
  auto run_floor_batch = [&] {
    for (std::uint64_t i = 0; i < batch; ++i) (*floor)(floor_n++);
  };
  auto settle = [&] {
    if (mode == Mode::kTrace) {
      if (!watch.attached()) watch.attach();
      watch.wait_drained();
    }
    after();
  };
  // Warm-up, untimed: registers the thread (its one allocation) and touches
  // every page of its ring (or of the floor's array) once.
  const std::uint64_t per_batch = batch * std::max<std::size_t>(records_per_op, 1);
  const std::uint64_t warm = (kRingCapacity + per_batch - 1) / per_batch + 1;
  for (std::uint64_t w = 0; w < warm; ++w) {
    run_batch();
    settle();
  }
  if (floor != nullptr) {
    for (std::uint64_t w = 0; w < kRingCapacity / batch + 1; ++w) {
      run_floor_batch();
      if constexpr (!std::is_same_v<Ref, FloorOp>) settle();
    }
  }
  // Reported after the loop: skipping here would leave the other threads
  // waiting at the barrier.
  const bool unregistered = mode == Mode::kTrace && !watch.attached();

  double wall_ns = 0, floor_ns = 0;
  std::uint64_t cpu_ns = 0, batches = 0, overlapped = 0;
  for (auto _ : state) {
    g_barrier->arrive_and_wait();
    const std::uint64_t cpu0 = ThreadCpuNs();
    const auto t0 = std::chrono::steady_clock::now();
    run_batch();
    const auto t1 = std::chrono::steady_clock::now();
    const std::uint64_t cpu1 = ThreadCpuNs();
    const std::chrono::duration<double> dt = t1 - t0;
    state.SetIterationTime(dt.count());
    wall_ns += dt.count() * 1e9;
    cpu_ns += cpu1 - cpu0;
    ++batches;
    if (mode == Mode::kTrace && watch.queued() < batch * records_per_op) ++overlapped;
    settle();
    if (floor != nullptr) {
      const auto f0 = std::chrono::steady_clock::now();
      run_floor_batch();
      const auto f1 = std::chrono::steady_clock::now();
      floor_ns += std::chrono::duration<double, std::nano>(f1 - f0).count();
      if constexpr (!std::is_same_v<Ref, FloorOp>) settle();  // a traced ref fills the ring
    }
  }

  const std::uint64_t ops = batches * batch;
  state.SetItemsProcessed(static_cast<std::int64_t>(ops));
  using benchmark::Counter;
  if (ops != 0) {
    const double per_op = wall_ns / static_cast<double>(ops);
    state.counters["ns_per_op"] = Counter(per_op, Counter::kAvgThreads);
    state.counters["cpu_ns_per_op"] =
        Counter(static_cast<double>(cpu_ns) / static_cast<double>(ops), Counter::kAvgThreads);
    if (floor != nullptr && floor_ns > 0) {
      const double floor_per_op = floor_ns / static_cast<double>(ops);
      state.counters[std::string(ref_name) + "_ns_per_op"] =
          Counter(floor_per_op, Counter::kAvgThreads);
      state.counters[std::string("x_") + ref_name] =
          Counter(per_op / floor_per_op, Counter::kAvgThreads);
    }
  }
  if (mode == Mode::kTrace && batches != 0) {
    state.counters["flusher_overlap"] = Counter(
        static_cast<double>(overlapped) / static_cast<double>(batches), Counter::kAvgThreads);
  }
  if (unregistered) state.SkipWithError("the thread did not register with the session");
  if (watch.stuck()) state.SkipWithError("the flusher did not drain the ring within 10 s");
  if (const std::uint64_t lost = watch.lost(); lost != 0) {
    state.SkipWithError(
        ("events dropped (" + std::to_string(lost) + "): the timing would include the drop path")
            .c_str());
  }
}

template <class Op>
void Measure(benchmark::State& state, Mode mode, std::size_t records_per_op, Op&& op) {
  Measure(state, mode, records_per_op, op, NoAfter{});
}

// The plain span the compile, CUPTI and NVTX cases are paired with (counter x_span).
struct SpanOp {
  JITSCOPE_ALWAYS_INLINE void operator()(std::uint64_t) const {
    JITSCOPE_SPAN("bench.span");
    benchmark::ClobberMemory();
  }
};

}  // namespace jitscope::bench
