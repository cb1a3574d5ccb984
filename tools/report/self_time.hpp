// Self (exclusive) time of spans, exact whatever order the file has them in.
//
// A span's self time is its duration minus its direct children's, a child
// being a span on the same thread inside it. Nesting is decided on the spans
// sorted by (thread, start, end descending), never on file order: writers
// emit spans in end order (jitscope, LLVM's time profiler, B/E pairs:
// children first), in start order (Kineto), or mixed, and clang's root span
// comes after its whole tree. A span that overlaps the open span on its
// thread without fitting inside it ends that span's nesting (counted in
// overlapping(); proper traces have none).
//
// Identical intervals: one is the other's parent, and only the writing order
// says which. A thread whose X slices all came in end order (each ending at
// or after the one before: clang, jitscope) wrote the child first, so of two
// identical X slices the later-written is the parent; otherwise (start
// order) the earlier-written. A B/E pair counts as written at its B, so
// identical B/E pairs nest as their B's came.
//
// Memory: spans are 40-byte records, sorted in runs of run_spans (2^18 by
// default: 10 MiB). A trace with more spans writes each sorted run to an
// unlinked temporary file ($TMPDIR, else /tmp) and finish() merges the runs,
// with a 20 KiB buffer each: memory is one run plus 20 KiB per run (the 1 GiB
// bench trace, 3.4 M spans: 10 MiB + 13 runs), the disk 40 bytes per span, for the
// read's duration only. If the temporary file cannot be made or written, the
// runs stay in memory: still exact, only bigger.
// Cost: O(log run_spans) per span to sort, O(log runs) per span to merge,
// amortised O(1) per span for the nesting stack.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

namespace jitscope::report {

struct TimedSpan {
  std::int64_t start = 0, end = 0;
  std::uint64_t order = 0;  // when it was written (a B/E pair: at its B): identical intervals
  std::uint32_t thread = 0;
  std::uint32_t name = 0;  // the caller's ids, handed back with the self time
  std::uint32_t unit = 0;
  // Bit 0 (kFromX): an X slice (identical intervals follow its thread's
  // order). Bit 1 (kWantsGaps): every stretch of it outside its children
  // goes to SelfTimeSink::on_gap (the report's unit slices).
  std::uint32_t from_x = 0;
  static constexpr std::uint32_t kFromX = 1, kWantsGaps = 2;
};
static_assert(sizeof(TimedSpan) == 40, "the spill file's record");

// The longest stretch of a span outside all of its children: from `start`
// (a time of the trace), `ns` long; 0 long for a span whose children cover
// it (or an identical slice's parent).
struct Gap {
  std::int64_t start = 0, ns = 0;
};

// Receives each span's self time, its longest gap, and the span it nests in
// on its thread (nullptr: none), which is handed over after it (identical
// intervals too, by the rule above).
class SelfTimeSink {
 public:
  virtual void on_self(const TimedSpan& span, std::int64_t self_ns, const Gap& longest,
                       const TimedSpan* parent) = 0;
  // Each gap of a span with kWantsGaps, before its on_self.
  virtual void on_gap(const TimedSpan& span, const Gap& gap) {
    static_cast<void>(span), static_cast<void>(gap);
  }

 protected:
  ~SelfTimeSink() = default;
};

class SelfTime {
 public:
  static constexpr std::size_t kDefaultRunSpans = std::size_t{1} << 18;
  explicit SelfTime(std::size_t run_spans = kDefaultRunSpans);
  ~SelfTime();
  SelfTime(const SelfTime&) = delete;
  SelfTime& operator=(const SelfTime&) = delete;

  void add(const TimedSpan& s);
  // Hands every span added to sink.on_self, thread by thread.
  // x_end_ordered(thread): that thread's X slices all came in end order.
  void finish(const std::function<bool(std::uint32_t)>& x_end_ordered, SelfTimeSink& sink);

  std::uint64_t overlapping() const noexcept { return overlapping_; }
  // Spans whose record could not be read back from the temporary file (an
  // I/O error): left out of self times.
  std::uint64_t lost() const noexcept { return lost_; }
  // Runs written to the temporary file (tests check that a trace spilled).
  std::size_t spilled_runs() const noexcept { return spilled_runs_; }

 private:
  struct Run {
    std::vector<TimedSpan> memory;  // a run kept in memory, or
    std::uint64_t file_offset = 0;  // where it lies in the temporary file
    std::uint64_t count = 0;
  };
  class Merge;
  class Nesting;
  void end_run();
  bool spill(const std::vector<TimedSpan>& run, std::uint64_t* offset);

  std::size_t run_spans_;
  std::vector<TimedSpan> buffer_;
  std::vector<Run> runs_;
  int fd_ = -1;  // the temporary file, once made
  bool can_spill_ = true;
  std::uint64_t file_size_ = 0;
  std::size_t spilled_runs_ = 0;
  std::uint64_t overlapping_ = 0, lost_ = 0;
};

}  // namespace jitscope::report
