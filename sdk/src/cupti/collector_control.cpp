// The CUPTI collector's control: a session's begin (CUPTI's callbacks
// registered, the watched calls' callbacks and the activity kinds enabled,
// GPU times put on jitscope's clock) and end, the flush the flusher asks for,
// the counts, fork, and the simulation tests use without a GPU. See
// collector_state.hpp.
#include "cupti/collector_state.hpp"
#include "cupti/cupti_api.hpp"

#include "base/boundary.hpp"
#include "base/log.hpp"

#include <jitscope/detail/hot.hpp>

#include <dlfcn.h>

#include <string_view>

namespace jitscope::detail {

using cupti_collector::Collector;
using cupti_collector::collector;
using cupti_collector::Counters;

namespace {

std::string cupti_error(CUptiResult r) {
  const char* s = nullptr;
  if (cupti_api().cuptiGetResultString(r, &s) != CUPTI_SUCCESS || s == nullptr) {
    return "CUPTI error " + std::to_string(static_cast<int>(r));
  }
  return s;
}

std::uint64_t monotonic_now() noexcept { return monotonic_ns(); }

uint64_t CUPTIAPI timestamp_callback() { return monotonic_now(); }

// Paired reads of CUPTI's clock between two CLOCK_MONOTONIC reads; the
// tightest pair fixes the offset (both clocks count ns: slope 1). False if
// CUPTI's clock could not be read at all.
bool fit_linear_clock(GpuClock& clock) {
  clock.kind = GpuClock::Kind::kLinear;
  std::uint64_t best = ~std::uint64_t{0};
  for (int i = 0; i < 64; ++i) {
    const std::uint64_t before = monotonic_now();
    std::uint64_t cupti = 0;
    if (cupti_api().cuptiGetTimestamp(&cupti) != CUPTI_SUCCESS) continue;
    const std::uint64_t after = monotonic_now();
    if (after - before < best) {
      best = after - before;
      clock.cupti_ref = cupti;
      clock.mono_ref = before + (after - before) / 2;
    }
  }
  clock.slope = 1.0;
  clock.uncertainty_ns = (best + 1) / 2;
  return best != ~std::uint64_t{0};
}

// CUPTI_ACTIVITY_KIND_<name> for the kinds the collector enables.
std::string_view kind_name(CUpti_ActivityKind k) {
  switch (k) {
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: return "CONCURRENT_KERNEL";
    case CUPTI_ACTIVITY_KIND_MEMCPY: return "MEMCPY";
    case CUPTI_ACTIVITY_KIND_MEMSET: return "MEMSET";
    case CUPTI_ACTIVITY_KIND_RUNTIME: return "RUNTIME";
    case CUPTI_ACTIVITY_KIND_DRIVER: return "DRIVER";
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: return "SYNCHRONIZATION";
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: return "EXTERNAL_CORRELATION";
    case CUPTI_ACTIVITY_KIND_JIT: return "JIT";
    case CUPTI_ACTIVITY_KIND_OVERHEAD: return "OVERHEAD";
    default: return "OTHER";
  }
}

constexpr CUpti_ActivityKind kRequiredKind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
constexpr CUpti_ActivityKind kOptionalKinds[] = {
    CUPTI_ACTIVITY_KIND_MEMCPY,
    CUPTI_ACTIVITY_KIND_MEMSET,
    CUPTI_ACTIVITY_KIND_RUNTIME,
    CUPTI_ACTIVITY_KIND_DRIVER,
    CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,
    CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION,
    CUPTI_ACTIVITY_KIND_JIT,
    CUPTI_ACTIVITY_KIND_OVERHEAD,
};

// Undoes a partial start; `c.control` held.
void stop_cupti(Collector& c) {
  for (CUpti_ActivityKind k : c.enabled) (void)cupti_api().cuptiActivityDisable(k);
  c.enabled.clear();
  if (c.subscriber != nullptr) {
    (void)cupti_api().cuptiUnsubscribe(c.subscriber);
    c.subscriber = nullptr;
  }
  c.started.store(false, std::memory_order_relaxed);
}

// Off, and why (also the session's reason): one line per reason per process.
CuptiSessionState off(std::string_view reason) noexcept {
  CuptiSessionState s;
  (void)guarded("recording why CUPTI is off", [&] {
    s.reason.assign(reason);
    log_unique("CUPTI off: " + s.reason);  // once per process per reason
  });
  return s;
}

// begin's work, `c.control` held; throws only when out of memory.
CuptiSessionState start(Collector& c, const Config& config) {
  {
    std::lock_guard<std::mutex> inbox(c.inbox_mutex);
    c.inbox.clear();  // records a stopped session left behind
  }
  // Unloads between sessions were not seen: handles may have been reused.
  cupti_collector::forget_all(c);
  if (c.simulate.load(std::memory_order_relaxed)) {
    std::string why;
    // The tests' records go through CUPTI's own record iterator.
    if (!load_cupti(why)) return off(why);
    if (!cupti_collector::ensure_pool(config, why)) return off(why);
    CuptiSessionState s;
    s.on = true;
    s.kinds.emplace_back(kind_name(kRequiredKind));
    for (CUpti_ActivityKind k : kOptionalKinds) s.kinds.emplace_back(kind_name(k));
    c.active.store(true, std::memory_order_relaxed);
    return s;
  }
  if (c.forked_child) {
    return off("this process is a fork of one that ran CUPTI; a forked child does not collect");
  }
  if (config.cupti == CuptiMode::kAuto) {
    // CUPTI would load the driver itself; asking first keeps the reason clear.
    void* driver = ::dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
    if (driver == nullptr) {
      const char* e = ::dlerror();
      return off(std::string("no CUDA driver (") + (e != nullptr ? e : "libcuda.so.1 not found") +
                 ")");
    }
    // Kept loaded: CUPTI uses it.
  }
  std::string why;
  if (!load_cupti(why)) return off(why);
  if (!cupti_collector::ensure_pool(config, why)) return off(why);
  // The subscriber first: it is CUPTI's one-client lock. A client that holds
  // it (Nsight Systems, torch.profiler's Kineto) keeps its buffer callbacks
  // and its timestamps: nothing else is touched when this fails.
  CUptiResult r =
      cupti_api().cuptiSubscribe(&c.subscriber, cupti_collector::on_api_callback, nullptr);
  if (r != CUPTI_SUCCESS) {
    c.subscriber = nullptr;
    std::string reason = "cuptiSubscribe: " + cupti_error(r);
    if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
      reason +=
          " (another CUPTI client holds it: Nsight Systems, or torch.profiler, which keeps it "
          "once it has run; docs/gpu-activity.md)";
    } else if (r == CUPTI_ERROR_UNKNOWN) {
      reason += " (no usable CUDA driver: CUPTI could not load libcuda.so.1)";
    }
    return off(reason);
  }
  // Once per process, before any kind is enabled, as CUPTI requires. Not
  // again: CUPTI does not say it may be set after kinds were enabled, and
  // the client seen holding CUPTI between sessions (Kineto) never lets go.
  if (!c.timestamps_registered && !c.timestamps_failed) {
    if (cupti_api().cuptiActivityRegisterTimestampCallback(timestamp_callback) == CUPTI_SUCCESS) {
      c.timestamps_registered = true;
    } else {
      c.timestamps_failed = true;
    }
  }
  // At every start: a client that held CUPTI since the last session set its
  // own, and records would go to its buffers.
  r = cupti_api().cuptiActivityRegisterCallbacks(cupti_collector::on_buffer_requested,
                                                 cupti_collector::on_buffer_completed);
  if (r != CUPTI_SUCCESS) {
    stop_cupti(c);
    return off("cuptiActivityRegisterCallbacks: " + cupti_error(r));
  }
  // Subscribed, so CUPTI works here. System thread ids in API and JIT records: the ids
  // jitscope's threads have.
  if (const CUptiResult t = cupti_api().cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
      t != CUPTI_SUCCESS) {
    log_unique("CUPTI: cuptiSetThreadIdType(SYSTEM): " + cupti_error(t) +
               "; CUDA calls may land on tracks of their own");
  }
  for (CUpti_CallbackDomain domain : {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_CB_DOMAIN_DRIVER_API}) {
    const std::size_t n = domain == CUPTI_CB_DOMAIN_RUNTIME_API
                              ? static_cast<std::size_t>(CUPTI_RUNTIME_TRACE_CBID_SIZE)
                              : static_cast<std::size_t>(CUPTI_DRIVER_TRACE_CBID_SIZE);
    for (std::size_t cbid = 1; cbid < n; ++cbid) {
      if (cupti_collector::watch_for(domain, static_cast<std::uint32_t>(cbid)) == ApiWatch::kNone)
        continue;
      (void)cupti_api().cuptiEnableCallback(1, c.subscriber, domain,
                                            static_cast<CUpti_CallbackId>(cbid));
    }
  }
  r = cupti_api().cuptiActivityEnable(kRequiredKind);
  if (r != CUPTI_SUCCESS) {
    stop_cupti(c);
    std::string reason = "cuptiActivityEnable(CONCURRENT_KERNEL): " + cupti_error(r);
    if (r == CUPTI_ERROR_UNKNOWN) reason += " (no usable CUDA driver?)";
    return off(reason);
  }
  c.enabled.push_back(kRequiredKind);
  for (CUpti_ActivityKind k : kOptionalKinds) {
    const CUptiResult kr = cupti_api().cuptiActivityEnable(k);
    if (kr == CUPTI_SUCCESS) {
      c.enabled.push_back(k);
    } else {
      log_unique("CUPTI activity kind " + std::string(kind_name(k)) + " unavailable: " +
                 cupti_error(kr) + "; the others are collected (see jitscope_session.cupti.kinds)");
    }
  }
  CuptiSessionState s;
  if (!c.timestamps_registered && !fit_linear_clock(s.clock)) {
    // Neither our clock in CUPTI's records nor a way to map CUPTI's onto ours.
    stop_cupti(c);
    return off(
        "CUPTI refused the timestamp callback and cuptiGetTimestamp failed: "
        "GPU times could not be put on the trace's clock");
  }
  // relaxed: same session, set before the flusher starts.
  c.started.store(true, std::memory_order_relaxed);
  c.ever_started = true;
  s.on = true;
  for (CUpti_ActivityKind k : c.enabled) s.kinds.emplace_back(kind_name(k));
  c.active.store(true, std::memory_order_relaxed);
  return s;
}

}  // namespace

GpuCollectorCounts cupti_counts() noexcept {
  const Counters& k = collector().counts;
  GpuCollectorCounts out;
  out.buffers_completed = k.buffers_completed.load(std::memory_order_relaxed);
  out.records = k.records.load(std::memory_order_relaxed);
  out.records_skipped = k.skipped.load(std::memory_order_relaxed);
  out.records_unreadable = k.unreadable.load(std::memory_order_relaxed);
  out.buffers_truncated = k.truncated.load(std::memory_order_relaxed);
  out.cupti_dropped = k.dropped.load(std::memory_order_relaxed);
  out.pool_exhausted = k.pool_exhausted.load(std::memory_order_relaxed);
  out.records_stale = k.stale.load(std::memory_order_relaxed);
  return out;
}

void cupti_lock_for_fork() noexcept {
  Collector& c = collector();
  c.pool_mutex.lock();
  c.inbox_mutex.lock();
  c.handles_mutex.lock();
  lock_unit_tags_for_fork();
}

void cupti_unlock_after_fork(bool child) noexcept {
  Collector& c = collector();
  if (child) {
    // CUPTI's state is the parent's: the child neither stops nor uses it.
    c.active.store(false, std::memory_order_relaxed);
    c.started.store(false, std::memory_order_relaxed);
    c.subscriber = nullptr;
    c.enabled.clear();
    c.forked_child = c.forked_child || c.ever_started;
    c.inbox.clear();
  }
  unlock_unit_tags_after_fork();
  c.handles_mutex.unlock();
  c.inbox_mutex.unlock();
  c.pool_mutex.unlock();
}

void cupti_simulate_for_testing(bool on) noexcept {
  collector().simulate.store(on, std::memory_order_relaxed);
}

CuptiSessionState cupti_begin_session(const Config& config) noexcept {
  Collector& c = collector();
  if (config.cupti == CuptiMode::kOff) {
    CuptiSessionState s;
    // Quiet: turned off by the config, which says no line (cupti.hpp); out
    // of memory only leaves the reason empty.
    (void)guarded_quiet([&] { s.reason = std::string(kCuptiOffByConfig); });
    return s;
  }
  std::lock_guard<std::mutex> lock(c.control);
  CuptiSessionState s;
  const Status started = guarded_status("starting the collector", [&] {
    s = start(c, config);
    return Status();
  });
  if (started.ok()) return s;
  if (c.subscriber != nullptr) stop_cupti(c);  // a partial start: undone (control is held)
  return off(started.message());
}

void cupti_flush(bool forced) noexcept {
  Collector& c = collector();
  // relaxed: begin set it before this session's flusher thread started.
  if (!c.started.load(std::memory_order_relaxed)) return;
  (void)cupti_api().cuptiActivityFlushAll(forced ? CUPTI_ACTIVITY_FLAG_FLUSH_FORCED : 0);
}

void cupti_end_session() noexcept {
  Collector& c = collector();
  std::lock_guard<std::mutex> lock(c.control);
  c.active.store(false, std::memory_order_relaxed);
  if (!c.started.load(std::memory_order_relaxed)) return;
  stop_cupti(c);
  // The flusher's final cycle took everything up to its forced flush; what
  // CUPTI still holds is not this session's. Flushed now and discarded, so
  // the next session does not get it. buffer_completed takes no lock held here.
  (void)cupti_api().cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  std::lock_guard<std::mutex> inbox(c.inbox_mutex);
  c.counts.stale.fetch_add(c.inbox.size(), std::memory_order_relaxed);
  c.inbox.clear();
}

}  // namespace jitscope::detail
