// The CUPTI collector's private state (cupti.hpp is its interface), shared by
// the files that each do one of its jobs:
//   activity_buffers.cpp  the buffer pool, CUPTI's buffer callbacks, the walk
//                         over a completed buffer and the inbox the flusher takes
//   activity_records.cpp  one CUpti_Activity record into a GpuActivity
//   api_callback.cpp      the API callback: which calls it watches, the
//                         kGpuCall records, the function-handle -> unit map
//   collector_control.cpp a session's begin and end, flush, counts, fork,
//                         and the simulation tests use without a GPU
//
// Locks: the pool, the inbox and the handle map each have a mutex held for a
// few operations and never across a CUPTI call. The session's control lock
// (api/session.cpp) and the collector's own `control` are held while starting
// and stopping CUPTI; no CUPTI callback takes either, so CUPTI calling back
// into us from there cannot deadlock.
#pragma once

#include "cupti/cupti.hpp"

#include "base/immortal.hpp"

#include <cupti.h>  // with the generated *_params structs of every CUDA call

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace jitscope::detail::cupti_collector {

struct Counters {
  // relaxed: independent totals, read as a snapshot at session edges.
  std::atomic<std::uint64_t> buffers_completed{0}, records{0}, skipped{0}, unreadable{0},
      truncated{0}, dropped{0}, pool_exhausted{0}, stale{0};
};

struct HandleEntry {
  const GpuUnitTag* tag = nullptr;
  const void* parent = nullptr;  // the module/library/kernel it came from
};

struct Collector {
  Counters counts;
  // Set while a session collects: the API callback writes calls only then.
  std::atomic<bool> active{false};
  std::atomic<bool> simulate{false};

  std::mutex control;  // begin/end; never taken by a CUPTI callback
  // CUPTI is collecting (not simulated); read by the flusher's cupti_flush.
  std::atomic<bool> started{false};
  bool ever_started = false;  // CUPTI ran in this process (a forked child must not use it)
  bool forked_child = false;  // this process is a fork of one where it ran
  bool timestamps_registered = false;
  bool timestamps_failed = false;
  CUpti_SubscriberHandle subscriber = nullptr;
  std::vector<CUpti_ActivityKind> enabled;

  std::mutex pool_mutex;
  std::vector<std::uint8_t*> free_buffers;  // capacity reserved: no allocation when returned
  std::size_t buffer_bytes = 0;
  std::size_t buffer_count = 0;

  std::mutex inbox_mutex;
  std::vector<GpuActivity> inbox;

  std::mutex handles_mutex;
  std::unordered_map<const void*, HandleEntry> handles;  // guarded by handles_mutex
  // Bumped (under handles_mutex) on every change to `handles`, so that a
  // launching thread can trust its own cache of units by handle without
  // taking the mutex.
  std::atomic<std::uint64_t> handles_generation{1};

  std::once_flag watch_once;
  std::array<std::vector<ApiWatch>, 2> watch;     // [0] runtime, [1] driver, by cbid
  std::array<std::vector<std::string>, 2> names;  // the same, without version suffixes
};

inline Collector& collector() noexcept { return immortal<Collector>(); }

// ---- activity_buffers.cpp ----
// Allocates the pool once per process (a later session's other sizes are
// not applied, and said so); false and `why` if it cannot.
bool ensure_pool(const Config& config, std::string& why);
// CUPTI's buffer callbacks (cuptiActivityRegisterCallbacks).
void CUPTIAPI on_buffer_requested(std::uint8_t** buffer, std::size_t* size,
                                  std::size_t* max_records);
void CUPTIAPI on_buffer_completed(CUcontext context, std::uint32_t stream, std::uint8_t* buffer,
                                  std::size_t size, std::size_t valid);

// ---- activity_records.cpp ----
// The size CUPTI steps by for the kinds the walk reads; 0 for others.
std::size_t record_size(CUpti_ActivityKind kind);
// One record into `out`; false for a kind the collector does not write.
bool convert_record(const CUpti_Activity* rec, std::vector<GpuActivity>& out);

// ---- api_callback.cpp ----
// What the callback does for a call (the tables are built on first use).
ApiWatch watch_for(std::uint32_t domain, std::uint32_t cbid);
// The call's name without its version suffix, or "cuda API <cbid>".
std::string api_name(CUpti_CallbackDomain domain, CUpti_CallbackId cbid);
// Forgets every handle (a context destroyed, a new session); `handles_mutex` not held.
void forget_all(Collector& c);
// CUPTI's API callback (cuptiSubscribe).
void CUPTIAPI on_api_callback(void* userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                              const void* data);

}  // namespace jitscope::detail::cupti_collector
