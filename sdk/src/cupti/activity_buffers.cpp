// The CUPTI collector's activity buffers: a bounded pool allocated once per
// process, CUPTI's buffer-requested and buffer-completed callbacks, the walk
// that turns a completed buffer's records into GpuActivity (through
// activity_records.cpp) and queues them in the inbox the flusher takes, and
// the counts of what was lost on the way (pool exhausted, records CUPTI
// dropped, skipped, unreadable or cut). See collector_state.hpp.
#include "cupti/collector_state.hpp"
#include "cupti/cupti_api.hpp"

#include "base/boundary.hpp"
#include "base/log.hpp"

#include <cstdlib>
#include <iterator>
#include <utility>

namespace jitscope::detail {

namespace cupti_collector {

void CUPTIAPI on_buffer_requested(std::uint8_t** buffer, std::size_t* size,
                                  std::size_t* max_records) {
  cupti_buffer_requested(buffer, size, max_records);
}

void CUPTIAPI on_buffer_completed(CUcontext context, std::uint32_t stream, std::uint8_t* buffer,
                                  std::size_t size, std::size_t valid) {
  cupti_buffer_completed(context, stream, buffer, size, valid);
}

bool ensure_pool(const Config& config, std::string& why) {
  Collector& c = collector();
  std::lock_guard<std::mutex> lock(c.pool_mutex);
  if (c.buffer_count != 0) {
    if (c.buffer_bytes != config.cupti_buffer_bytes || c.buffer_count != config.cupti_buffers) {
      log_unique("the CUPTI buffer pool is sized once per process; keeping " +
                 std::to_string(c.buffer_count) + " x " + std::to_string(c.buffer_bytes) +
                 " bytes");
    }
    return true;
  }
  c.free_buffers.reserve(config.cupti_buffers);
  for (std::size_t i = 0; i < config.cupti_buffers; ++i) {
    // 8-byte alignment is CUPTI's requirement; pages are touched only when used.
    void* p = std::aligned_alloc(8, config.cupti_buffer_bytes);
    if (p == nullptr) {
      for (std::uint8_t* b : c.free_buffers) std::free(b);
      c.free_buffers.clear();
      why = "cannot allocate the CUPTI buffer pool (" + std::to_string(config.cupti_buffers) +
            " x " + std::to_string(config.cupti_buffer_bytes) + " bytes)";
      return false;
    }
    c.free_buffers.push_back(static_cast<std::uint8_t*>(p));
  }
  c.buffer_bytes = config.cupti_buffer_bytes;
  c.buffer_count = config.cupti_buffers;
  return true;
}

}  // namespace cupti_collector

using cupti_collector::Collector;
using cupti_collector::collector;

void cupti_buffer_requested(std::uint8_t** buffer, std::size_t* size,
                            std::size_t* max_records) noexcept {
  Collector& c = collector();
  *max_records = 0;  // as many as fit
  std::lock_guard<std::mutex> lock(c.pool_mutex);
  if (c.free_buffers.empty()) {
    // CUPTI drops records until a buffer comes back; it counts them, we count this.
    *buffer = nullptr;
    *size = 0;
    c.counts.pool_exhausted.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  *buffer = c.free_buffers.back();
  c.free_buffers.pop_back();
  *size = c.buffer_bytes;
}

void cupti_buffer_completed(void* context, std::uint32_t stream, std::uint8_t* buffer,
                            std::size_t /*size*/, std::size_t valid) noexcept {
  if (buffer == nullptr) return;
  cupti_consume_buffer(buffer, valid);
  std::size_t dropped = 0;
  if (cupti_api().cuptiActivityGetNumDroppedRecords(static_cast<CUcontext>(context), stream,
                                                    &dropped) == CUPTI_SUCCESS) {
    cupti_count_dropped(dropped);
  }
  Collector& c = collector();
  std::lock_guard<std::mutex> lock(c.pool_mutex);
  c.free_buffers.push_back(buffer);  // capacity reserved for every pool buffer: no allocation
}

void cupti_count_dropped(std::size_t records) noexcept {
  if (records != 0) collector().counts.dropped.fetch_add(records, std::memory_order_relaxed);
}

void cupti_consume_buffer(std::uint8_t* buffer, std::size_t valid) noexcept {
  Collector& c = collector();
  (void)guarded("reading a CUPTI buffer", [&] {
    std::vector<GpuActivity> out;
    std::uint64_t skipped = 0;
    std::size_t known_end = 0;  // where the last record of a known size ended
    bool end_known = true;
    CUpti_Activity* rec = nullptr;
    for (;;) {
      const CUptiResult r = cupti_api().cuptiActivityGetNextRecord(buffer, valid, &rec);
      if (r == CUPTI_SUCCESS) {
        const std::size_t size = cupti_collector::record_size(rec->kind);
        end_known = size != 0;
        known_end = static_cast<std::size_t>(reinterpret_cast<std::uint8_t*>(rec) - buffer) + size;
        if (!cupti_collector::convert_record(rec, out)) ++skipped;
        continue;
      }
      if (r == CUPTI_ERROR_MAX_LIMIT_REACHED) {
        // The end; bytes left after the last whole record are a cut one.
        if (end_known && known_end < valid) {
          c.counts.truncated.fetch_add(1, std::memory_order_relaxed);
        }
      } else {
        // CUPTI cannot size this record (a kind it does not know): the rest
        // of the buffer cannot be walked.
        c.counts.unreadable.fetch_add(1, std::memory_order_relaxed);
      }
      break;
    }
    c.counts.records.fetch_add(out.size(), std::memory_order_relaxed);
    c.counts.skipped.fetch_add(skipped, std::memory_order_relaxed);
    c.counts.buffers_completed.fetch_add(1, std::memory_order_relaxed);
    if (out.empty()) return;
    std::lock_guard<std::mutex> lock(c.inbox_mutex);
    if (c.inbox.empty()) {
      c.inbox.swap(out);
    } else {
      c.inbox.insert(c.inbox.end(), std::make_move_iterator(out.begin()),
                     std::make_move_iterator(out.end()));
    }
  });
}

void take_gpu_activities(std::vector<GpuActivity>& out) {
  Collector& c = collector();
  std::lock_guard<std::mutex> lock(c.inbox_mutex);
  out.swap(c.inbox);
  c.inbox.clear();
}

}  // namespace jitscope::detail
