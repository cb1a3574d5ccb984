// The cases on the far side of the ring: the JSON writer's throughput on
// one core (BM_FlusherThroughput, a TraceWriter driven directly) and memory
// staying flat as a traced run grows (BM_MemoryFlat). Neither times a
// producer call, so they share none of Measure()'s batching.
#include "bench_cases.hpp"
#include "bench_support.hpp"
#include "format/trace_writer.hpp"
#include "sink/compressing_sink.hpp"

#include <benchmark/benchmark.h>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string_view>
#include <thread>
#include <vector>

namespace jitscope::bench {

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

constexpr std::size_t kFlusherRing = std::size_t{1} << 20;       // 32 MiB
constexpr std::size_t kFlusherCycles = (kFlusherRing / 2) / 16;  // half the ring per fill

namespace {

// Events/s of the writer on one core: fill a ring (untimed), time
// TraceWriter::drain + the hand-off to a sink that only counts the bytes.
// Every event here is a span; bytes_per_event is the trace's bytes per span.
void FlusherThroughput(benchmark::State& state, bool perfetto,
                       TraceCompression compression = TraceCompression::kNone) {
  using namespace jitscope::detail;
  CountingSink counted;
  std::unique_ptr<CompressingSink> compressing;
  if (compression != TraceCompression::kNone) {
    std::string why;
    compressing = std::make_unique<CompressingSink>(counted, compression, why);
    if (!compressing->ok()) {
      state.SkipWithError(why.c_str());
      for (auto _ : state) {
      }
      return;
    }
  }
  // The file's bytes are counted after compression.
  TraceSink& sink = compressing ? static_cast<TraceSink&>(*compressing) : counted;
  SessionInfo info;
  info.process_name = "jitscope_bench";
  info.pid = static_cast<int>(::getpid());
  info.conversion = BenchConversion();
  info.clock = info.conversion.is_identity() ? ClockSource::kMonotonic : ClockSource::kTsc;
  info.ring_capacity = kFlusherRing;
  info.overflow = "drop";
  info.flush_interval_ms = 100;
  info.perfetto = perfetto;
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
    const std::uint64_t b0 = counted.bytes();
    const auto t0 = std::chrono::steady_clock::now();
    writer.drain(*thread);
    writer.flush();
    const auto t1 = std::chrono::steady_clock::now();
    state.SetIterationTime(std::chrono::duration<double>(t1 - t0).count());
    events += writer.events_written() - e0;
    bytes += counted.bytes() - b0;
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(events));  // events (spans) per second
  state.SetBytesProcessed(static_cast<std::int64_t>(bytes));   // trace bytes per second
  state.counters["bytes_per_event"] =
      events != 0 ? static_cast<double>(bytes) / static_cast<double>(events) : 0.0;
  if (writer.decode_errors() != 0) state.SkipWithError("the writer reported decode errors");
  if (events != static_cast<std::uint64_t>(state.iterations()) * kFlusherCycles * 7) {
    state.SkipWithError("the writer wrote fewer events than were pushed");
  }
}

}  // namespace

// The JSON form (Chrome Trace Event Format).
void BM_FlusherThroughput(benchmark::State& state) { FlusherThroughput(state, false); }
// The Perfetto protobuf form (docs/perfetto-format.md), the same records.
void BM_FlusherThroughputPerfetto(benchmark::State& state) { FlusherThroughput(state, true); }
// The same with compressed packets (Config::compression), one codec each.
void BM_FlusherThroughputPerfettoZstd(benchmark::State& state) {
  FlusherThroughput(state, true, TraceCompression::kZstd);
}
void BM_FlusherThroughputPerfettoDeflate(benchmark::State& state) {
  FlusherThroughput(state, true, TraceCompression::kDeflate);
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

}  // namespace jitscope::bench
