#include "self_time.hpp"

#include "report_data.hpp"  // sat_add

#include <algorithm>

namespace jitscope::report {
namespace {

// Start order: earlier start first; on equal starts the longer (the parent)
// first; on identical intervals the earlier arrival first.
bool before(const TimedSpan& a, const TimedSpan& b) noexcept {
  if (a.start != b.start) return a.start < b.start;
  if (a.end != b.end) return a.end > b.end;
  return a.seq < b.seq;
}
// std::push_heap keeps the largest on top: invert for a min-heap. (A type,
// not a function pointer, so the heap operations inline it.)
struct HeapLess {
  bool operator()(const TimedSpan& a, const TimedSpan& b) const noexcept { return before(b, a); }
};
constexpr HeapLess heap_less{};

}  // namespace

void SelfTimeThread::add(const TimedSpan& s, std::size_t cap, SelfTimeSink& sink) {
  heap_.push_back(s);
  std::push_heap(heap_.begin(), heap_.end(), heap_less);
  while (heap_.size() > cap) release_one(sink);
}

void SelfTimeThread::release_one(SelfTimeSink& sink) {
  std::pop_heap(heap_.begin(), heap_.end(), heap_less);
  const TimedSpan s = heap_.back();
  heap_.pop_back();
  process(s, sink);
}

void SelfTimeThread::close_top(SelfTimeSink& sink) {
  const Open& o = open_.back();
  const std::int64_t self = std::max<std::int64_t>(0, (o.span.end - o.span.start) - o.children);
  sink.on_self(o.span, self);
  open_.pop_back();
}

void SelfTimeThread::process(const TimedSpan& s, SelfTimeSink& sink) {
  const std::int64_t dur = s.end - s.start;
  if (released_any_ && before(s, last_)) {
    // Too late for the window: charge the innermost open span that contains it.
    // The open spans are a nested chain (starts ascending, ends descending:
    // each is inside the one below it), so the spans starting at or before
    // s are a prefix, those ending at or after s too, and the containing
    // ones are the shorter prefix: two binary searches, O(log depth).
    ++late_;
    const auto starts_by = std::partition_point(
        open_.begin(), open_.end(), [&](const Open& o) { return o.span.start <= s.start; });
    const auto ends_after = std::partition_point(
        open_.begin(), open_.end(), [&](const Open& o) { return o.span.end >= s.end; });
    const auto containing = std::min(starts_by, ends_after);
    if (containing != open_.begin()) {
      Open& parent = *(containing - 1);
      parent.children = sat_add(parent.children, dur);
    }
    sink.on_self(s, dur);
    return;
  }
  released_any_ = true;
  last_ = s;
  while (!open_.empty()) {
    const TimedSpan& top = open_.back().span;
    if (top.end <= s.start) {  // ended before s began
      close_top(sink);
      continue;
    }
    if (s.end <= top.end) {  // inside top (s.start >= top.start by the order)
      open_.back().children = sat_add(open_.back().children, dur);
      break;
    }
    ++overlapping_;  // top ends inside s: not nested; top is done
    close_top(sink);
  }
  open_.push_back(Open{s, 0});
}

void SelfTimeThread::finish(SelfTimeSink& sink) {
  while (!heap_.empty()) release_one(sink);
  while (!open_.empty()) close_top(sink);
}

}  // namespace jitscope::report
