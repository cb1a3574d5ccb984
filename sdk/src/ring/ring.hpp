// The per-thread single-producer/single-consumer ring of 32-byte Records.
// Producer: the thread that owns it. Consumer: the flusher, one at a time.
//
// Ours rather than boost::lockfree::spsc_queue (bench: BM_RingPushBoost vs
// BM_RingPushOwn) for two reasons: the producer writes a record's fields
// straight into its slot, where spsc_queue copies a finished record in (a
// stack-built record read back with wide loads stalls store forwarding); and
// each side caches the other side's index, so a push touches the shared line
// only when the cached view says the ring might be full.
#pragma once

#include "ring/record.hpp"

#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>

namespace jitscope::detail {

class Ring {
 public:
  // Holds up to `capacity` records (storage rounds up to a power of two).
  explicit Ring(std::size_t capacity)
      : capacity_(capacity),
        mask_(std::bit_ceil(capacity) - 1),
        slots_(std::make_unique_for_overwrite<Record[]>(mask_ + 1)) {}  // pages touched on use

  std::size_t capacity() const noexcept { return capacity_; }

  // ---- producer side ----

  // True when `count` more records fit. Reloads the consumer's index only
  // when the cached one says they might not.
  bool has_room(std::size_t count) noexcept {
    if (tail_local_ + count - head_cached_ <= capacity_) return true;
    // acquire: the consumer is done reading the slots it released.
    head_cached_ = head_.load(std::memory_order_acquire);
    return tail_local_ + count - head_cached_ <= capacity_;
  }
  std::size_t write_available() noexcept {
    head_cached_ = head_.load(std::memory_order_acquire);  // as in has_room
    return capacity_ - static_cast<std::size_t>(tail_local_ - head_cached_);
  }
  // The i-th slot past the last committed one; write it, then commit().
  Record& slot(std::size_t i) noexcept { return slots_[(tail_local_ + i) & mask_]; }
  void commit(std::size_t count) noexcept {
    tail_local_ += count;
    // release: the records written into the slots are visible to a consumer
    // that acquires this index.
    tail_.store(tail_local_, std::memory_order_release);
  }
  // Convenience for whole records (tests, bench).
  bool push(const Record& r) noexcept {
    if (!has_room(1)) return false;
    slot(0) = r;
    commit(1);
    return true;
  }

  // ---- consumer side ----

  std::size_t read_available() const noexcept {
    // acquire: pairs with commit(); the slots up to tail are fully written.
    return static_cast<std::size_t>(tail_.load(std::memory_order_acquire) -
                                    head_.load(std::memory_order_relaxed));
  }
  std::size_t pop(Record* out, std::size_t max) noexcept {
    // relaxed: only the consumer writes head_.
    const std::uint64_t head = head_.load(std::memory_order_relaxed);
    const std::uint64_t tail = tail_.load(std::memory_order_acquire);  // see read_available
    std::size_t n = static_cast<std::size_t>(tail - head);
    if (n > max) n = max;
    const std::size_t first = static_cast<std::size_t>(head & mask_);
    const std::size_t run = n < mask_ + 1 - first ? n : mask_ + 1 - first;
    std::memcpy(static_cast<void*>(out), &slots_[first], run * sizeof(Record));
    std::memcpy(static_cast<void*>(out + run), &slots_[0], (n - run) * sizeof(Record));
    // release: our reads of the slots happen before the producer reuses them.
    head_.store(head + n, std::memory_order_release);
    return n;
  }

 private:
  const std::size_t capacity_;
  const std::size_t mask_;
  const std::unique_ptr<Record[]> slots_;
  // Producer line: its own tail and its cached view of head.
  alignas(64) std::uint64_t tail_local_ = 0;
  std::uint64_t head_cached_ = 0;
  // Shared indices, each on its own line.
  alignas(64) std::atomic<std::uint64_t> tail_{0};
  alignas(64) std::atomic<std::uint64_t> head_{0};  // the class's alignment pads this line
};

}  // namespace jitscope::detail
