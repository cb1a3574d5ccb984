// jitscope_bench: what one event costs the instrumented thread, what the
// flusher sustains, and whether memory stays flat. DESIGN.md "Performance
// budgets" says what the numbers must meet; README "Overhead" quotes them.
//
//   ./build/release/bench/jitscope_bench --benchmark_repetitions=5
//       --benchmark_report_aggregates_only=true
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
//
// The CUPTI collector's cases (BM_SpanCuptiOn, BM_LaunchCallback*; built with
// CUPTI only) need no GPU: their sessions act as if CUPTI had started
// (cupti_simulate_for_testing), and the bench calls the collector's API
// callback itself, as CUPTI would on each launch.
//
// Not covered here: the end-to-end NVRTC overhead (samples/), the kBlock
// policy, the shared library (its TLS access differs), the disk.
#include "clock/clock.hpp"
#include "ring/ring.hpp"
#include "ring/thread_registry.hpp"
#include "flush/trace_writer.hpp"

#include <jitscope/compile.hpp>
#include <jitscope/nvtx.hpp>

#if defined(JITSCOPE_BENCH_NVTX)
#include <nvtx3/nvToolsExt.h>
#endif
#if defined(JITSCOPE_BENCH_HAS_CUPTI)
#include "cupti/fake_cupti.hpp"  // tests/: cupti.hpp, <cupti.h>, the fake handles
#endif
#include <jitscope/jitscope.hpp>

#include <benchmark/benchmark.h>
#include <boost/lockfree/spsc_queue.hpp>

#include <dirent.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <barrier>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <type_traits>
#include <vector>

namespace {

using jitscope::detail::Record;
using jitscope::detail::RecordKind;
using jitscope::detail::Ring;
using jitscope::detail::ThreadState;
using jitscope::detail::ValueType;

constexpr std::size_t kRingCapacity = std::size_t{1} << 16;  // records: 2 MiB a thread
constexpr std::size_t kBatchRecords = kRingCapacity / 8;     // records one batch may push
constexpr std::chrono::milliseconds kFlushInterval{1};
constexpr double kMinTime = 0.1;  // seconds of timed batches per run (manual time)

// --- runs: sessions, barrier, failure flag -----------------------------------

std::atomic<bool> g_failed{false};          // main's exit status
std::unique_ptr<std::barrier<>> g_barrier;  // one per run, sized to its threads

void StartBarrier(const benchmark::State& state) {
  g_barrier = std::make_unique<std::barrier<>>(state.threads());
}

// The session's flusher thread, found as the one thread start() added; 0 if
// that could not be told.
std::atomic<int> g_flusher_tid{0};

std::vector<int> TaskIds() {
  std::vector<int> ids;
  if (DIR* dir = ::opendir("/proc/self/task")) {
    while (const dirent* e = ::readdir(dir)) {
      if (e->d_name[0] != '.') ids.push_back(std::atoi(e->d_name));
    }
    ::closedir(dir);
  }
  std::sort(ids.begin(), ids.end());
  return ids;
}

// True unless the flusher is running or runnable (state R).
bool FlusherIdle() {
  const int tid = g_flusher_tid.load(std::memory_order_relaxed);
  if (tid == 0) return true;
  char path[64];
  std::snprintf(path, sizeof path, "/proc/self/task/%d/stat", tid);
  std::FILE* f = std::fopen(path, "re");
  if (f == nullptr) return true;
  char buf[512];
  const std::size_t n = std::fread(buf, 1, sizeof buf - 1, f);
  std::fclose(f);
  buf[n] = '\0';
  const char* close = std::strrchr(buf, ')');  // "tid (comm) S ..."
  return close == nullptr || close[1] == '\0' || close[2] != 'R';
}

// The session's CUPTI collector: off (Config::cupti = kOff, so a GPU
// machine's driver does not change the other cases), or kSimulated: as if
// CUPTI had started (its API callback live, no GPU needed; only with CUPTI,
// JITSCOPE_BENCH_HAS_CUPTI). The teardown checks SessionStats::cupti_on.
enum class CollectorSetup { kOff, kSimulated };
CollectorSetup g_collector = CollectorSetup::kOff;

// Setup of a case that traces: a fresh session for the run.
void StartSession(const benchmark::State& state, bool nvtx_emit,
                  CollectorSetup collector = CollectorSetup::kOff) {
  (void)jitscope::stop();  // e.g. a JITSCOPE_TRACE session: each run has its own
  const std::vector<int> before = TaskIds();
  jitscope::Config cfg;
  cfg.nvtx_emit = nvtx_emit;
  cfg.output_path = "/dev/null";  // the writer's real work, no disk
  cfg.ring_capacity = kRingCapacity;
  cfg.flush_interval = kFlushInterval;
  cfg.overflow = jitscope::OverflowPolicy::kDrop;
  cfg.process_name = "jitscope_bench";
  g_collector = collector;
  cfg.cupti = jitscope::CuptiMode::kOff;
#if defined(JITSCOPE_BENCH_HAS_CUPTI)
  if (collector == CollectorSetup::kSimulated) {
    cfg.cupti = jitscope::CuptiMode::kOn;
    jitscope::detail::cupti_simulate_for_testing(true);
  }
#endif
  if (!jitscope::start(cfg)) g_failed = true;  // the body sees no session and says so
#if defined(JITSCOPE_BENCH_HAS_CUPTI)
  jitscope::detail::cupti_simulate_for_testing(false);  // read by start() only
#endif
  std::vector<int> added;
  const std::vector<int> after = TaskIds();
  std::set_difference(after.begin(), after.end(), before.begin(), before.end(),
                      std::back_inserter(added));
  g_flusher_tid = added.size() == 1 ? added[0] : 0;
  StartBarrier(state);
}
// Every case runs without NVTX emission except BM_SpanNvtx*.
void SessionOn(const benchmark::State& state) { StartSession(state, false); }
void SessionOnNvtx(const benchmark::State& state) { StartSession(state, true); }

// Teardown of a case that traces: the session's own totals must show no loss.
void SessionOff(const benchmark::State&) {
  jitscope::SessionStats stats;
  if (jitscope::Status st = jitscope::stop(&stats); !st) {
    std::fprintf(stderr, "jitscope_bench: stop failed: %s\n", st.message().c_str());
    g_failed = true;
  }
  if (stats.events_dropped != 0) {
    std::fprintf(stderr, "jitscope_bench: %llu events dropped in a run\n",
                 static_cast<unsigned long long>(stats.events_dropped));
    g_failed = true;
  }
  if (stats.cupti_on != (g_collector == CollectorSetup::kSimulated)) {
    std::fprintf(stderr, "jitscope_bench: the CUPTI collector was %s, not %s\n",
                 stats.cupti_on ? "on" : "off", stats.cupti_on ? "off" : "on (simulated)");
    g_failed = true;
  }
  g_collector = CollectorSetup::kOff;
  g_flusher_tid = 0;
  g_barrier.reset();
}

// Setup/Teardown of a disabled twin: compiled in, no session.
void NoSession(const benchmark::State& state) {
  (void)jitscope::stop();
  StartBarrier(state);
}
void NoSessionEnd(const benchmark::State&) { g_barrier.reset(); }

std::uint64_t ThreadCpuNs() noexcept {
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

constexpr const char* kFloorName = "bench.floor";

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
// run, batch by batch, as DESIGN.md's budget asks (robust to the machine's
// speed drifting between benchmarks).
// `Ref` (FloorOp by default) is the op the paired counters compare with:
// x_floor for the floor, x_span for a plain span (SpanOp).
template <class Op, class After, class Ref = FloorOp>
void Measure(benchmark::State& state, Mode mode, std::size_t records_per_op, Op&& op,
             After&& after, const Ref* floor = nullptr, const char* ref_name = "floor") {
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
    state.SkipWithError(("events dropped (" + std::to_string(lost) +
                         "): the timing would include the drop path")
                            .c_str());
  }
}

template <class Op>
void Measure(benchmark::State& state, Mode mode, std::size_t records_per_op, Op&& op) {
  Measure(state, mode, records_per_op, op, NoAfter{});
}

// --- the floor ------------------------------------------------------------------

void BM_Floor(benchmark::State& state) {
  const FloorOp floor;
  Measure(state, Mode::kFloor, 1, floor);
}

// Between the floor and a span: the two rings side by side, each taking two
// clock reads and a Begin/End pair with none of the SDK around them (no call,
// no TLS lookup, no reservation), drained untimed by this thread.
// boost::lockfree::spsc_queue copies a stack-built record in; ours
// (sdk/src/ring.hpp) is written in place, as emit.cpp does.
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
constexpr std::size_t kSpanArgsRecords = 6;
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
constexpr std::size_t kSpanDynRecords = 3;
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

// --- compile layer (compile.hpp): each beside a plain span -----------------------

// The plain span the compile cases are paired with (counter x_span).
struct SpanOp {
  JITSCOPE_ALWAYS_INLINE void operator()(std::uint64_t) const {
    JITSCOPE_SPAN("bench.span");
    benchmark::ClobberMemory();
  }
};

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
constexpr std::size_t kUnitRecords = 8;
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

// --- the CUPTI collector (cupti.hpp), simulated: no GPU, no driver ------------
#if defined(JITSCOPE_BENCH_HAS_CUPTI)
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
#endif

// --- NVTX ----------------------------------------------------------------------
#if defined(JITSCOPE_BENCH_NVTX)
// A span with NVTX emission asked for. In a plain run the bench's only NVTX
// tool is jitscope's own capture, so emission stays off (counter
// nvtx_emitting = 0): the cost of asking with no tool listening. With
// NVTX_INJECTION64_PATH=libjitscope_bench_nvtx_null.so it emits (1): the
// cost on jitscope's side of a range pushed and popped in a listening tool.
void BM_SpanNvtx(benchmark::State& state) {
  Measure(state, Mode::kTrace, 2, [](std::uint64_t) {
    JITSCOPE_SPAN("bench.span");
    benchmark::ClobberMemory();
  });
  state.counters["nvtx_emitting"] = benchmark::Counter(
      jitscope::nvtx_status().emitting ? 1 : 0, benchmark::Counter::kAvgThreads);
}

// Another library's NVTX range, captured (static form: the bench's own NVTX
// calls). x_span pairs it with a plain jitscope span.
bool CaptureAttached(benchmark::State& state) {
  nvtxMarkA("bench.init");  // initializes this binary's NVTX copy
  if (jitscope::nvtx_status().captured_instances != 0) return true;
  state.SkipWithError("NVTX capture is not attached (NVTX_INJECTION64_PATH names another tool)");
  for (auto _ : state) {
  }
  return false;
}
// Kept in the ring: the record, its extra slot, the copied name.
constexpr std::size_t kCapturedAsciiRecords = 3;
void BM_NvtxCapturedRange(benchmark::State& state) {
  if (!CaptureAttached(state)) return;
  const SpanOp span;
  Measure(
      state, Mode::kTrace, kCapturedAsciiRecords,
      [](std::uint64_t) {
        nvtxRangePushA("bench.nvtx");
        nvtxRangePop();
        benchmark::ClobberMemory();
      },
      NoAfter{}, &span, "span");
}
// A registered string in a named domain: the name is not copied.
void BM_NvtxCapturedRegistered(benchmark::State& state) {
  if (!CaptureAttached(state)) return;
  static nvtxDomainHandle_t domain = nvtxDomainCreateA("bench");
  static nvtxStringHandle_t name = nvtxDomainRegisterStringA(domain, "bench.registered");
  nvtxEventAttributes_t a{};
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
  a.message.registered = name;
  const SpanOp span;
  Measure(
      state, Mode::kTrace, 2,
      [&a](std::uint64_t) {
        nvtxDomainRangePushEx(domain, &a);
        nvtxDomainRangePop(domain);
        benchmark::ClobberMemory();
      },
      NoAfter{}, &span, "span");
}
// No session: the capture only keeps push/pop balance.
void BM_NvtxCapturedRangeOff(benchmark::State& state) {
  if (!CaptureAttached(state)) return;
  Measure(state, Mode::kOff, 0, [](std::uint64_t) {
    nvtxRangePushA("bench.nvtx");
    nvtxRangePop();
    benchmark::ClobberMemory();
  });
}
#endif

// --- the flusher ------------------------------------------------------------------

class CountingSink final : public jitscope::detail::TraceSink {
 public:
  void write(std::string_view bytes) noexcept override {
    benchmark::DoNotOptimize(bytes.data());
    bytes_ += bytes.size();
  }
  std::uint64_t bytes() const noexcept { return bytes_; }

 private:
  std::uint64_t bytes_ = 0;
};

// A calibrated TSC conversion (the flusher's real tick->ns math), or identity.
const jitscope::detail::ClockConversion& BenchConversion() {
  using namespace jitscope::detail;
  static const ClockConversion conversion = [] {
    if (!tsc_is_invariant()) return ClockConversion::identity();
    const ClockPoint a = sample_clock_point();
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    return ClockConversion::from_points(a, sample_clock_point());
  }();
  return conversion;
}

std::uint64_t NowTicks() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  if (!BenchConversion().is_identity()) return __rdtsc();
#endif
  return jitscope::detail::monotonic_ns();
}

// Records as the producer would push them: per cycle of 16 records, 7 spans
// with static names, nesting 1 to 3 deep, one of them with 2 int args.
std::vector<Record> FlusherPattern(std::size_t cycles, std::uint64_t start_ticks) {
  std::vector<Record> out;
  out.reserve(cycles * 16);
  std::uint64_t ticks = start_ticks;
  std::uint32_t rng = 12345;
  std::uint8_t depth = 0;
  auto step = [&] {  // 0.1 to ~80 us at 2.5 GHz, varied digits
    rng = rng * 1664525u + 1013904223u;
    ticks += 250 + (rng >> 12) % 200000;
    return ticks;
  };
  auto begin = [&](const char* name) {
    Record r{};
    r.ts = step();
    r.name = name;
    r.kind = RecordKind::kBegin;
    r.index = depth++;
    out.push_back(r);
  };
  auto end = [&] {
    Record r{};
    r.ts = step();
    r.kind = RecordKind::kEnd;
    --depth;
    out.push_back(r);
  };
  auto int_arg = [&](const char* key, std::int64_t v) {
    Record r{};
    r.name = key;
    r.value.i64 = v;
    r.kind = RecordKind::kArg;
    r.type = ValueType::kInt;
    r.index = static_cast<std::uint8_t>(depth - 1);
    out.push_back(r);
  };
  for (std::size_t c = 0; c < cycles; ++c) {
    begin("parse");  // depth 1
    end();
    begin("optimize");  // depth 2
    begin("inline");
    end();
    end();
    begin("codegen");  // depth 3
    begin("lower");
    begin("select");
    end();
    end();
    end();
    begin("ptxas");  // with args
    int_arg("regs", static_cast<std::int64_t>(32 + c % 200));
    int_arg("spills", static_cast<std::int64_t>(c % 7));
    end();
  }
  return out;
}

constexpr std::size_t kFlusherRing = std::size_t{1} << 20;  // 32 MiB
constexpr std::size_t kFlusherCycles = (kFlusherRing / 2) / 16;  // half the ring per fill

// Events/s of the JSON writer on one core: fill a ring (untimed), time
// TraceWriter::drain + the hand-off to a sink that only counts the bytes.
void BM_FlusherThroughput(benchmark::State& state) {
  using namespace jitscope::detail;
  CountingSink sink;
  SessionInfo info;
  info.process_name = "jitscope_bench";
  info.pid = static_cast<int>(::getpid());
  info.conversion = BenchConversion();
  info.clock = info.conversion.is_identity() ? ClockSource::kMonotonic : ClockSource::kTsc;
  info.ring_capacity = kFlusherRing;
  info.overflow = "drop";
  info.flush_interval_ms = 100;
  TraceWriter writer(sink, info);
  writer.begin_trace();
  auto thread = std::make_unique<ThreadState>(3u, kFlusherRing, jitscope::OverflowPolicy::kDrop,
                                              static_cast<int>(::gettid()), "flusher-bench");
  std::vector<Record> pattern = FlusherPattern(kFlusherCycles, NowTicks());
  const std::uint64_t span_ticks = pattern.back().ts - pattern.front().ts + 1000;
  auto fill = [&] {
    for (Record& r : pattern) {
      if (r.kind != RecordKind::kArg) r.ts += span_ticks;  // time moves on
    }
    for (const Record& r : pattern) thread->ring.push(r);  // the ring holds them all
  };
  for (int w = 0; w < 2; ++w) {  // warm-up: touches all the ring, the writer's buffers
    fill();
    writer.drain(*thread);
    writer.flush();
  }

  std::uint64_t events = 0, bytes = 0;
  for (auto _ : state) {
    fill();
    const std::uint64_t e0 = writer.events_written();
    const std::uint64_t b0 = sink.bytes();
    const auto t0 = std::chrono::steady_clock::now();
    writer.drain(*thread);
    writer.flush();
    const auto t1 = std::chrono::steady_clock::now();
    state.SetIterationTime(std::chrono::duration<double>(t1 - t0).count());
    events += writer.events_written() - e0;
    bytes += sink.bytes() - b0;
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(events));  // events (spans) per second
  state.SetBytesProcessed(static_cast<std::int64_t>(bytes));   // JSON bytes per second
  if (writer.decode_errors() != 0) state.SkipWithError("the writer reported decode errors");
  if (events != static_cast<std::uint64_t>(state.iterations()) * kFlusherCycles * 7) {
    state.SkipWithError("the writer wrote fewer events than were pushed");
  }
}

// --- memory -------------------------------------------------------------------------

std::int64_t RssKib() {
  std::FILE* f = std::fopen("/proc/self/statm", "re");
  if (f == nullptr) return -1;
  long size = 0, resident = 0;
  const int got = std::fscanf(f, "%ld %ld", &size, &resident);
  std::fclose(f);
  if (got != 2) return -1;
  return static_cast<std::int64_t>(resident) * (::sysconf(_SC_PAGESIZE) / 1024);
}

// "Memory flat as the trace grows": RSS after the warm-up (the ring and the
// writer's buffer touched once) and after `spans` more spans. Run with 10x
// the spans, the growth must not be 10x: it should be ~0 both times.
void BM_MemoryFlat(benchmark::State& state) {
  const auto spans = static_cast<std::uint64_t>(state.range(0));
  constexpr std::uint64_t kBatch = kBatchRecords / 2;
  if (!jitscope::active()) {
    state.SkipWithError("no session: start() failed");
    for (auto _ : state) {
    }
    return;
  }
  RingWatch watch;
  auto batch = [&](std::uint64_t count) {
    for (std::uint64_t i = 0; i < count; ++i) {
      JITSCOPE_SPAN("bench.memory");
      benchmark::ClobberMemory();
    }
    if (!watch.attached()) watch.attach();
    watch.wait_drained();
  };
  for (std::uint64_t w = 0; w < kRingCapacity / kBatch + 1; ++w) batch(kBatch);  // 2x the ring
  const std::int64_t before = RssKib();
  std::uint64_t done = 0;
  double seconds = 0;
  for (auto _ : state) {
    while (done < spans) {
      const std::uint64_t count = std::min(kBatch, spans - done);
      const auto t0 = std::chrono::steady_clock::now();
      batch(count);  // includes the wait: this case is about memory, not speed
      seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      done += count;
    }
    state.SetIterationTime(seconds);
  }
  const std::int64_t after = RssKib();
  state.SetItemsProcessed(static_cast<std::int64_t>(done));
  state.counters["rss_before_kib"] = static_cast<double>(before);
  state.counters["rss_after_kib"] = static_cast<double>(after);
  state.counters["rss_growth_kib"] = static_cast<double>(after - before);
  if (watch.stuck()) state.SkipWithError("the flusher did not drain the ring within 10 s");
  if (watch.lost() != 0) state.SkipWithError("events dropped");
}

// --- registration -----------------------------------------------------------------

void Traced(benchmark::internal::Benchmark* b) {
  b->Setup(SessionOn)->Teardown(SessionOff)->UseManualTime()->MinTime(kMinTime)
      ->ThreadRange(1, 2)->Unit(benchmark::kMicrosecond)->ArgName("batch");
}
void TracedNvtx(benchmark::internal::Benchmark* b) {
  b->Setup(SessionOnNvtx)->Teardown(SessionOff)->UseManualTime()->MinTime(kMinTime)
      ->ThreadRange(1, 2)->Unit(benchmark::kMicrosecond)->ArgName("batch");
}
void Untraced(benchmark::internal::Benchmark* b) {
  b->Setup(NoSession)->Teardown(NoSessionEnd)->UseManualTime()->MinTime(kMinTime)
      ->ThreadRange(1, 2)->Unit(benchmark::kMicrosecond)->ArgName("batch");
}
#if defined(JITSCOPE_BENCH_HAS_CUPTI)
void TracedCupti(benchmark::internal::Benchmark* b) {
  b->Setup(SessionOnCupti)->Teardown(SessionOff)->UseManualTime()->MinTime(kMinTime)
      ->ThreadRange(1, 2)->Unit(benchmark::kMicrosecond)->ArgName("batch");
}
void TracedCuptiKernel(benchmark::internal::Benchmark* b) {
  b->Setup(SessionOnCuptiKernel)->Teardown(SessionOffCuptiKernel)->UseManualTime()
      ->MinTime(kMinTime)->ThreadRange(1, 2)->Unit(benchmark::kMicrosecond)->ArgName("batch");
}
void TracedCuptiOff(benchmark::internal::Benchmark* b) {
  b->Setup(SessionOnCuptiOff)->Teardown(SessionOff)->UseManualTime()->MinTime(kMinTime)
      ->ThreadRange(1, 2)->Unit(benchmark::kMicrosecond)->ArgName("batch");
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

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return g_failed ? 1 : 0;
}
