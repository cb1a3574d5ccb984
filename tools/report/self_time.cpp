#include "self_time.hpp"

#include "report_data.hpp"  // sat_add

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <string>

namespace jitscope::report {
namespace {

// The nesting order: by thread; earlier start first; on equal starts the
// longer (the parent) first; on identical intervals the earlier-written.
// (A function object, not a function: std::sort inlines it, where a function
// pointer costs a call per comparison, a third of the sort's time.)
// `order` is unique, so the order is total: any sort gives the same result.
struct Before {
  bool operator()(const TimedSpan& a, const TimedSpan& b) const noexcept {
    if (a.thread != b.thread) return a.thread < b.thread;
    if (a.start != b.start) return a.start < b.start;
    if (a.end != b.end) return a.end > b.end;
    return a.order < b.order;
  }
};
constexpr Before before{};

constexpr std::size_t kBlockSpans = 512;  // read from the temporary file at a time (20 KiB)

// An unlinked temporary file: it goes away with the descriptor, whatever happens.
int make_temp_file() {
  const char* dir = std::getenv("TMPDIR");
  std::string path =
      std::string(dir != nullptr && *dir != '\0' ? dir : "/tmp") + "/jitscope-report-spans-XXXXXX";
  const int fd = ::mkostemp(path.data(), O_CLOEXEC);
  if (fd >= 0) ::unlink(path.c_str());
  return fd;
}

bool write_all(int fd, const char* p, std::size_t n) {
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= static_cast<std::size_t>(w);
  }
  return true;
}

// Reads up to n bytes at offset; how many it got (fewer only at an error or the end).
std::size_t read_at(int fd, char* p, std::size_t n, std::uint64_t offset) {
  std::size_t got = 0;
  while (got < n) {
    const ssize_t r = ::pread(fd, p + got, n - got, static_cast<off_t>(offset + got));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    got += static_cast<std::size_t>(r);
  }
  return got;
}

}  // namespace

// The runs merged into one stream in nesting order (a heap of run cursors).
class SelfTime::Merge {
 public:
  Merge(const std::vector<Run>& runs, int fd, std::uint64_t* lost) : fd_(fd), lost_(lost) {
    cursors_.reserve(runs.size());
    for (const Run& r : runs) {
      cursors_.emplace_back();
      cursors_.back().run = &r;
      if (refill(cursors_.back())) heap_.push_back(cursors_.size() - 1);
    }
    std::make_heap(heap_.begin(), heap_.end(), later_);
  }

  bool next(TimedSpan* out) {
    if (heap_.empty()) return false;
    std::pop_heap(heap_.begin(), heap_.end(), later_);
    Cursor& c = cursors_[heap_.back()];
    *out = c.head();
    ++c.pos;
    if (c.pos < c.size || refill(c)) {
      std::push_heap(heap_.begin(), heap_.end(), later_);
    } else {
      heap_.pop_back();
    }
    return true;
  }

 private:
  struct Cursor {
    const Run* run = nullptr;
    std::uint64_t taken = 0;  // records of the run in blocks so far
    std::vector<TimedSpan> block;
    const TimedSpan* data = nullptr;  // the block, or the run in memory
    std::size_t pos = 0, size = 0;
    const TimedSpan& head() const { return data[pos]; }
  };
  // The cursor's next block; false when its run is done.
  bool refill(Cursor& c) {
    const std::uint64_t left = c.run->count - c.taken;
    if (left == 0) return false;
    if (!c.run->memory.empty()) {  // the whole run is one block
      c.data = c.run->memory.data();
      c.pos = 0;
      c.size = c.run->memory.size();
      c.taken = c.run->count;
      return true;
    }
    const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(left, kBlockSpans));
    c.block.resize(n);
    const std::size_t bytes =
        read_at(fd_, reinterpret_cast<char*>(c.block.data()), n * sizeof(TimedSpan),
                c.run->file_offset + c.taken * sizeof(TimedSpan));
    const std::size_t got = bytes / sizeof(TimedSpan);
    if (got < n) {  // an I/O error: the rest of the run is lost, and counted
      *lost_ += left - got;
      c.taken = c.run->count;
    } else {
      c.taken += n;
    }
    c.data = c.block.data();
    c.pos = 0;
    c.size = got;
    return got > 0;
  }

  struct Later {  // std heaps keep the largest on top: the latest is "largest"
    const std::vector<Cursor>* cursors;
    bool operator()(std::size_t a, std::size_t b) const {
      return before((*cursors)[b].head(), (*cursors)[a].head());
    }
  };
  int fd_;
  std::uint64_t* lost_;
  std::vector<Cursor> cursors_;
  std::vector<std::size_t> heap_;
  Later later_{&cursors_};
};

// The spans of one thread after another, in nesting order, as a stack of
// the open (enclosing) spans.
class SelfTime::Nesting {
 public:
  Nesting(const std::function<bool(std::uint32_t)>& x_end_ordered, SelfTimeSink& sink,
          std::uint64_t* overlapping)
      : x_end_ordered_(x_end_ordered), sink_(sink), overlapping_(overlapping) {}

  void add(const TimedSpan& s) {
    if (!started_ || s.thread != thread_) {
      close_all();
      started_ = true;
      thread_ = s.thread;
      end_ordered_ = x_end_ordered_(s.thread);
    }
    while (!open_.empty()) {
      Open& top = open_.back();
      if (top.span.end <= s.start) {  // ended before s began
        close_top();
        continue;
      }
      if (s.end <= top.span.end) {  // inside top (s.start >= top's by the order)
        if (end_ordered_ && (s.from_x & TimedSpan::kFromX) != 0 && same_slice(top.span, s)) {
          // Written after an identical slice by an end-order writer: its
          // parent, whose only child is that slice (top has no other yet:
          // its children sort after s): no self time, no gap, and its own
          // parent's children are unchanged (the same duration). It goes
          // below the identical slices on top, to close after them.
          std::size_t at = open_.size() - 1;
          while (at > 0 && same_slice(open_[at - 1].span, s)) --at;
          open_.insert(open_.begin() + static_cast<std::ptrdiff_t>(at),
                       Open{s, s.end - s.start, s.end, Gap{}});
          return;
        }
        top.children = sat_add(top.children, s.end - s.start);
        if (s.end > s.start) {  // a mark (0 long: a spawn) leaves the stretch whole
          gap_before(top, s.start);
          top.covered_to = std::max(top.covered_to, s.end);
        }
        break;
      }
      ++*overlapping_;  // top ends inside s: not nested; top is done
      close_top();
    }
    open_.push_back(Open{s, 0, s.start, Gap{}});
  }

  void close_all() {
    while (!open_.empty()) close_top();
  }

 private:
  struct Open {
    TimedSpan span;
    std::int64_t children;
    std::int64_t covered_to;  // the end of its children so far (its start: none)
    Gap longest;
  };
  // The stretch of `o` from its children so far to `at` (a child's start,
  // or its end): kept if the longest yet, and handed over if wanted.
  void gap_before(Open& o, std::int64_t at) {
    if (at <= o.covered_to) return;
    const Gap g{o.covered_to, at - o.covered_to};
    if (g.ns > o.longest.ns) o.longest = g;
    if ((o.span.from_x & TimedSpan::kWantsGaps) != 0) sink_.on_gap(o.span, g);
  }
  static bool same_slice(const TimedSpan& a, const TimedSpan& b) {
    return (a.from_x & TimedSpan::kFromX) != 0 && a.start == b.start && a.end == b.end;
  }
  // The span the innermost open one nests in (nullptr: it is outermost).
  const TimedSpan* parent_of_top() const {
    return open_.size() < 2 ? nullptr : &open_[open_.size() - 2].span;
  }
  void close_top() {
    Open& o = open_.back();
    gap_before(o, o.span.end);
    sink_.on_self(o.span, std::max<std::int64_t>(0, (o.span.end - o.span.start) - o.children),
                  o.longest, parent_of_top());
    open_.pop_back();
  }

  const std::function<bool(std::uint32_t)>& x_end_ordered_;
  SelfTimeSink& sink_;
  std::uint64_t* overlapping_;
  std::vector<Open> open_;
  bool started_ = false, end_ordered_ = false;
  std::uint32_t thread_ = 0;
};

SelfTime::SelfTime(std::size_t run_spans) : run_spans_(run_spans == 0 ? 1 : run_spans) {}

SelfTime::~SelfTime() {
  if (fd_ >= 0) ::close(fd_);
}

void SelfTime::add(const TimedSpan& s) {
  buffer_.push_back(s);
  if (buffer_.size() >= run_spans_) end_run();
}

bool SelfTime::spill(const std::vector<TimedSpan>& run, std::uint64_t* offset) {
  if (fd_ < 0) fd_ = make_temp_file();
  const std::size_t bytes = run.size() * sizeof(TimedSpan);
  if (fd_ < 0 || !write_all(fd_, reinterpret_cast<const char*>(run.data()), bytes)) {
    // No temporary file, or a full disk: this run and the next stay in
    // memory (the runs already written stay readable; a partial write after
    // them is never read).
    can_spill_ = false;
    return false;
  }
  *offset = file_size_;
  file_size_ += bytes;
  return true;
}

void SelfTime::end_run() {
  std::sort(buffer_.begin(), buffer_.end(), before);
  Run run;
  run.count = buffer_.size();
  if (can_spill_ && spill(buffer_, &run.file_offset)) {
    ++spilled_runs_;
    buffer_.clear();  // keeps its capacity: the next run reuses it
  } else {
    run.memory = std::move(buffer_);
    buffer_ = {};
  }
  runs_.push_back(std::move(run));
}

void SelfTime::finish(const std::function<bool(std::uint32_t)>& x_end_ordered, SelfTimeSink& sink) {
  if (!buffer_.empty()) {  // the last run stays in memory
    std::sort(buffer_.begin(), buffer_.end(), before);
    Run run;
    run.count = buffer_.size();
    run.memory = std::move(buffer_);
    runs_.push_back(std::move(run));
  }
  Nesting nesting(x_end_ordered, sink, &overlapping_);
  if (runs_.size() == 1 && !runs_[0].memory.empty()) {
    for (const TimedSpan& s : runs_[0].memory) nesting.add(s);
  } else {
    Merge merge(runs_, fd_, &lost_);
    for (TimedSpan s; merge.next(&s);) nesting.add(s);
  }
  nesting.close_all();
  runs_.clear();
  buffer_ = {};
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  file_size_ = 0;
  can_spill_ = true;
}

}  // namespace jitscope::report
