// Self (exclusive) time of spans on one thread, from spans that arrive in
// any order, with bounded memory.
//
// A span's self time is its duration minus its direct children's, where a
// child is a span on the same thread inside it. Nesting needs the spans in
// start order (parent first on equal starts); writers emit them in end order
// (jitscope, LLVM's time profiler: children first), in start order (Kineto),
// or mixed (jitscope's CUDA-call slices come a flush later). So each thread
// keeps a reorder window: a min-heap by (start, end descending, arrival)
// that releases its earliest span once it holds more than its cap. Spans
// released in order are exact; a span that comes more than the window late
// (its start is before one already released) is counted in late() and
// charged to the innermost still-open span containing it, its own self time
// taken as its whole duration: approximate, and said so in the report.
//
// Memory: at most `cap` spans of 32 bytes per thread in the window, plus the
// open nesting stack (its depth), whatever the trace length.
// Cost: O(log cap) per span for the window; a late span finds its parent
// in the open stack (a nested chain) by binary search, O(log depth).
#pragma once

#include <cstdint>
#include <vector>

namespace jitscope::report {

struct TimedSpan {
  std::int64_t start = 0, end = 0;
  std::uint64_t seq = 0;   // arrival order: the tie-break on identical intervals
  std::uint32_t name = 0;  // caller's ids, handed back on finish
  std::uint32_t unit = 0;
};

// Receives each span's self time once it is known.
class SelfTimeSink {
 public:
  virtual void on_self(const TimedSpan& span, std::int64_t self_ns) = 0;

 protected:
  ~SelfTimeSink() = default;
};

class SelfTimeThread {
 public:
  // Adds a span; releases the earliest while the window holds more than cap.
  void add(const TimedSpan& s, std::size_t cap, SelfTimeSink& sink);
  // Releases the earliest span (window not empty).
  void release_one(SelfTimeSink& sink);
  // Releases everything and closes every open span.
  void finish(SelfTimeSink& sink);

  std::size_t window() const noexcept { return heap_.size(); }
  std::uint64_t late() const noexcept { return late_; }
  std::uint64_t overlapping() const noexcept { return overlapping_; }

 private:
  struct Open {
    TimedSpan span;
    std::int64_t children = 0;
  };
  void process(const TimedSpan& s, SelfTimeSink& sink);
  void close_top(SelfTimeSink& sink);

  std::vector<TimedSpan> heap_;
  std::vector<Open> open_;
  bool released_any_ = false;
  TimedSpan last_;  // the last span released in order
  std::uint64_t late_ = 0, overlapping_ = 0;
};

}  // namespace jitscope::report
