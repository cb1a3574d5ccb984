// The per-thread single-producer/single-consumer ring: Boost.Lockfree's
// spsc_queue over 32-byte Records (bench/ compares it with the floor).
// Producer: the thread that owns it. Consumer: the flusher, one at a time.
#pragma once

#include <jitscope/detail/record.hpp>

#include <boost/lockfree/spsc_queue.hpp>

#include <cstddef>

namespace jitscope::detail {

class Ring {
 public:
  explicit Ring(std::size_t capacity) : queue_(capacity), capacity_(capacity) {}

  std::size_t capacity() const noexcept { return capacity_; }

  // Producer side.
  std::size_t write_available() const noexcept { return queue_.write_available(); }
  bool push(const Record& r) noexcept { return queue_.push(r); }
  std::size_t push(const Record* records, std::size_t count) noexcept {
    return queue_.push(records, count);
  }

  // Consumer side.
  std::size_t read_available() const noexcept { return queue_.read_available(); }
  std::size_t pop(Record* out, std::size_t count) noexcept { return queue_.pop(out, count); }

 private:
  boost::lockfree::spsc_queue<Record> queue_;
  std::size_t capacity_;
};

}  // namespace jitscope::detail
