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

#include <jitscope/detail/hot_lane.hpp>

#include <algorithm>
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
  // The producer's cursor is `producer` (a thread's HotThread, which the
  // inline hot path writes through too), or the ring's own. Positions count
  // bytes (RingProducer) from `start`, a multiple of kRecordBytes (a
  // thread's ring starts where no earlier ring's positions are: span
  // serials are positions, ring_start in ring/thread_registry.hpp).
  explicit Ring(std::size_t capacity, RingProducer* producer = nullptr, std::uint64_t start = 0)
      : capacity_(capacity),
        mask_(std::bit_ceil(capacity) - 1),
        start_(start),
        slots_(std::make_unique_for_overwrite<Record[]>(mask_ + 1)),  // pages touched on use
        own_(producer == nullptr ? std::make_unique<RingProducer>() : nullptr),
        producer_(producer != nullptr ? *producer : *own_),
        head_(start) {
    producer_.slots = slots_.get();
    producer_.mask = mask_ * kRecordBytes;
    // Half: the first time past it comes to refresh_room_early (below).
    producer_.room_end = start + capacity / 2 * kRecordBytes;
    producer_.tail.store(start, std::memory_order_relaxed);
  }
  Ring(const Ring&) = delete;
  Ring& operator=(const Ring&) = delete;

  std::size_t capacity() const noexcept { return capacity_; }
  // The position of the first record (bytes, as every position).
  std::uint64_t start() const noexcept { return start_; }

  // ---- producer side ----

  RingProducer& producer() noexcept { return producer_; }

  // True when `count` more records fit. Reloads the consumer's index only
  // when the cached one says they might not.
  bool has_room(std::size_t count) noexcept {
    if (producer_.fits(count)) return true;
    refresh_room();
    return producer_.fits(count);
  }
  // The producer's slow path (the cached view said no): rereads the
  // consumer's index, and returns whether the ring holds half its capacity
  // or more with `count` more records, so that the caller wakes the
  // flusher before a burst fills it. The cached limit is then the ring's
  // end; below half it is half the ring from the consumer, so that the
  // fast paths come back here when the ring reaches half (a reread each
  // half ring instead of each ring: rare).
  bool refresh_room_early(std::size_t count) noexcept {
    // acquire: the consumer is done reading the slots it released.
    const std::uint64_t head = head_.load(std::memory_order_acquire);
    const std::uint64_t half = capacity_ / 2 * kRecordBytes;
    const bool past_half =
        producer_.tail.load(std::memory_order_relaxed) + count * kRecordBytes > head + half;
    producer_.room_end = past_half ? head + capacity_ * kRecordBytes : head + half;
    return past_half;
  }
  std::size_t write_available() noexcept {
    refresh_room();
    return static_cast<std::size_t>(
        (producer_.room_end - producer_.tail.load(std::memory_order_relaxed)) / kRecordBytes);
  }
  // The i-th slot past the last committed one; write it, then commit().
  Record& slot(std::size_t i) noexcept { return producer_.slot(i); }
  void commit(std::size_t count) noexcept { producer_.commit(count); }
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
    return static_cast<std::size_t>(
        (producer_.tail.load(std::memory_order_acquire) - head_.load(std::memory_order_relaxed)) /
        kRecordBytes);
  }
  // Up to `max` records from the head, in place: the readable ones up to the
  // end of the storage (a run that wraps comes back in two calls). They stay
  // the consumer's until release(); decoding them where they lie saves a
  // copy per record (the flusher's drain).
  const Record* peek(std::size_t max, std::size_t& count) const noexcept {
    // relaxed: only the consumer writes head_.
    const std::uint64_t head = head_.load(std::memory_order_relaxed);
    const std::uint64_t tail =
        producer_.tail.load(std::memory_order_acquire);  // see read_available
    const std::size_t first = static_cast<std::size_t>((head / kRecordBytes) & mask_);
    count = std::min<std::size_t>(
        {static_cast<std::size_t>((tail - head) / kRecordBytes), max, mask_ + 1 - first});
    return &slots_[first];
  }
  // Hands the first `count` peeked records back to the producer.
  void release(std::size_t count) noexcept {
    // release: our reads of the slots happen before the producer reuses them.
    head_.store(head_.load(std::memory_order_relaxed) + count * kRecordBytes,
                std::memory_order_release);
  }
  // peek, copy, release: for a caller that keeps the records (the ring
  // bench drains ours and boost's queue alike).
  std::size_t pop(Record* out, std::size_t max) noexcept {
    std::size_t done = 0;
    for (std::size_t n = 1; done < max && n != 0; done += n) {
      const Record* run = peek(max - done, n);
      std::memcpy(static_cast<void*>(out + done), run, n * sizeof(Record));
      release(n);
    }
    return done;
  }

 private:
  void refresh_room() noexcept {
    // acquire: the consumer is done reading the slots it released.
    producer_.room_end = head_.load(std::memory_order_acquire) + capacity_ * kRecordBytes;
  }

  const std::size_t capacity_;
  const std::size_t mask_;  // records - 1: the consumer's, off the producer's line
  const std::uint64_t start_;
  const std::unique_ptr<Record[]> slots_;
  const std::unique_ptr<RingProducer> own_;  // when no producer was given
  RingProducer& producer_;
  // The consumer's position, on its own line.
  alignas(64) std::atomic<std::uint64_t> head_;  // the class's alignment pads this line
};

}  // namespace jitscope::detail
