// The CUPTI collector (its files are listed in collector_state.hpp; off.cpp
// without CUPTI).
//
// Per session: activity kinds on, API callbacks on for the calls it
// correlates, buffers from a bounded pool. CUPTI hands full buffers to
// consume_buffer() (its buffer-completed callback), which turns records into
// GpuActivity and queues them; the flusher takes them each cycle and joins
// them (gpu_trace.hpp) with the kGpuCall records the API callback wrote into
// the calling thread's ring. No jitscope lock is held across a CUPTI call
// that can call back into us.
#pragma once

#include "cupti/gpu_activity.hpp"

#include <jitscope/jitscope.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace jitscope::detail {

inline constexpr std::string_view kCuptiOffByConfig =
    "turned off (Config::cupti / JITSCOPE_CUPTI=off)";

struct CuptiSessionState {
  bool on = false;
  std::string reason;  // why it is off ("" when on)
  GpuClock clock;
  std::vector<std::string> kinds;  // the activity kinds collected (CUPTI_ACTIVITY_KIND_*)
};

// Called by start() under its control lock (no CUPTI callback takes it).
// Off: one `jitscope: CUPTI off: <reason>` line per reason (auto mode
// without a driver included), never with kOff.
CuptiSessionState cupti_begin_session(const Config& config) noexcept;
// Hands CUPTI's buffers to consume_buffer: completed records only, or
// (`forced`, at stop) everything. From the flusher or stop(), no lock held.
void cupti_flush(bool forced) noexcept;
// Turns activity and callbacks off, then flushes (forced) and discards what
// CUPTI still held: records after the flusher's final, forced flush are not
// this session's. After the flusher has stopped.
void cupti_end_session() noexcept;
// The records consumed since the last call.
void take_gpu_activities(std::vector<GpuActivity>& out);
// Counts since process start (take a difference over a session).
GpuCollectorCounts cupti_counts() noexcept;
// fork(): the collector's locks held across it; the child never uses a
// CUPTI its parent started (it is off there, and says why).
void cupti_lock_for_fork() noexcept;
void cupti_unlock_after_fork(bool child) noexcept;

// Configuration limits, also checked by Config::validate.
inline constexpr std::size_t kMinCuptiBufferBytes = 64 * 1024;
inline constexpr std::size_t kMaxCuptiBufferBytes = 64 * 1024 * 1024;
inline constexpr std::size_t kMinCuptiBuffers = 2;
inline constexpr std::size_t kMaxCuptiBuffers = 1024;

// ---- the functions CUPTI's callbacks call, exposed for tests ----
// The buffer-completed path: walks `buffer` (`valid` bytes) with
// cuptiActivityGetNextRecord and queues what it understands. Never frees it.
void cupti_consume_buffer(std::uint8_t* buffer, std::size_t valid) noexcept;
// CUPTI's buffer callbacks themselves: a buffer from the pool (nullptr and
// counted when none is free), and one back (consumed, then returned).
void cupti_buffer_requested(std::uint8_t** buffer, std::size_t* size,
                            std::size_t* max_records) noexcept;
void cupti_buffer_completed(void* context, std::uint32_t stream, std::uint8_t* buffer,
                            std::size_t size, std::size_t valid) noexcept;
// Adds CUPTI's dropped-record count (what buffer_completed reads from CUPTI).
void cupti_count_dropped(std::size_t records) noexcept;
// The API callback: `data` is a CUpti_CallbackData* for `domain`/`cbid`.
void cupti_on_api_callback(std::uint32_t domain, std::uint32_t cbid, const void* data) noexcept;
// Tests without a GPU: the next sessions act as if CUPTI had started (the
// pool, the callback and consume paths live; no other CUPTI call made).
// Off again with false.
void cupti_simulate_for_testing(bool on) noexcept;
// What the collector does for a CUDA function, by its CUPTI name
// ("cuModuleLoadData", "cudaLaunchKernel_v7000"...).
enum class ApiWatch : std::uint8_t {
  kNone,
  kLaunch,        // kernel launch: function handle is the first parameter
  kLaunchSecond,  // kernel launch: function handle is the second (…Ex forms)
  kCopyOrSet,     // a memcpy/memset/graph launch: correlate only
  kLoad,          // first parameter: out pointer to a new module/library
  kDerive,        // first: out pointer to a handle got from the second
  kUnload,        // first: the module/library going away
  kForgetAll,     // a context destroyed or reset: its modules go with it
  kGraphLaunch,   // a graph launch: correlate only; it starts many GPU records
};
ApiWatch classify_api(std::string_view function_name) noexcept;

}  // namespace jitscope::detail
