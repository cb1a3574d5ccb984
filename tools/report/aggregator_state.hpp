// What the Aggregator keeps between events (its private per-name, per-unit
// and per-thread state, the top-N entries) and the key and id helpers its
// parts share. Internal to aggregator*.cpp: the intake (aggregator.cpp),
// the span accounting (aggregator_spans.cpp), the units table
// (aggregator_units.cpp) and GPU attribution (aggregator_gpu.cpp) all read
// and write this state, so it is defined once here, not in the public header.
#pragma once

#include "aggregator.hpp"
#include "distribution.hpp"
#include "report_data.hpp"
#include "self_time.hpp"

#include <event_decoder.hpp>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

namespace jitscope::report {

// Keeps the `n` greatest items seen, by `less`, in `heap`: a min-heap (the
// least kept item on top, replaced by a greater one), so memory stays at n
// items whatever the count. The slowest spans and each unit's longest
// phase spans both use it.
template <class T, class Less>
void keep_greatest(std::vector<T>& heap, std::size_t n, const T& item, Less less) {
  if (n == 0) return;
  const auto least_on_top = [&less](const T& a, const T& b) { return less(b, a); };
  if (heap.size() < n) {
    heap.push_back(item);
    std::push_heap(heap.begin(), heap.end(), least_on_top);
  } else if (less(heap.front(), item)) {
    std::pop_heap(heap.begin(), heap.end(), least_on_top);
    heap.back() = item;
    std::push_heap(heap.begin(), heap.end(), least_on_top);
  }
}

inline constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();

// An id in a lookup key (threads, processes, units): a tag, then the number
// or the length-prefixed text.
inline void append_id(std::string& key, bool has, const tools::TraceId& id) {
  if (!has) {
    key.push_back('-');
  } else if (id.is_string) {
    key.push_back('s');
    const auto n = static_cast<std::uint32_t>(id.text.size());
    key.append(reinterpret_cast<const char*>(&n), sizeof n);
    key.append(id.text);
  } else {
    key.push_back('n');
    key.append(reinterpret_cast<const char*>(&id.number), sizeof id.number);
  }
}

// The same key for an id the report keeps (it owns its text).
inline void append_owned(std::string& key, bool has, const Id& id) {
  append_id(key, has, tools::TraceId{id.is_string, id.number, id.text});
}

// jitscope puts a GPU's slices on a fake pid, 10000000 * (device + 1) +
// host pid: the host process that launched them.
inline constexpr std::int64_t kGpuPidBase = 10000000;
inline Id host_pid(Id pid) {
  if (!pid.is_string && pid.number >= kGpuPidBase) pid.number %= kGpuPidBase;
  return pid;
}

inline Id owned(bool has, const tools::TraceId& id) {
  Id out;
  if (!has) return out;
  out.is_string = id.is_string;
  out.number = id.number;
  out.text = std::string(id.text);
  return out;
}

// "[3/1] model__fwd_4" -> "model__fwd_4".
inline std::string_view strip_unit_prefix(std::string_view display) {
  if (!display.empty() && display.front() == '[') {
    const std::size_t close = display.find("] ");
    if (close != std::string_view::npos) return display.substr(close + 2);
  }
  return display;
}

// Compile ids in numeric order ("2/0" < "10/0"), others after, by text.
inline auto compile_id_key(const std::string& id) {
  std::uint64_t frame = 0, attempt = 0;
  const char* b = id.data();
  const char* e = b + id.size();
  auto [p, ec] = std::from_chars(b, e, frame);
  bool numeric = ec == std::errc() && p < e && *p == '/';
  if (numeric) {
    auto [q, ec2] = std::from_chars(p + 1, e, attempt);
    numeric = ec2 == std::errc() && q == e;
  }
  return std::make_tuple(!numeric, numeric ? frame : 0, numeric ? attempt : 0, id);
}

// Rows without a pid first, then numbers in order, then strings.
inline bool pid_less(const std::optional<Id>& a, const std::optional<Id>& b) {
  if (a.has_value() != b.has_value()) return !a.has_value();
  if (!a) return false;
  if (a->is_string != b->is_string) return !a->is_string;
  return a->is_string ? a->text < b->text : a->number < b->number;
}

// The distinct pids of the units and GPU rows: a pid column when more than one.
using PidKeys = std::set<std::string>;
inline void note_pid(PidKeys& pids, bool has, const Id& pid) {
  std::string key;
  append_owned(key, has, pid);
  pids.insert(std::move(key));
}

// true when a is a slower span than b (a ranks first).
template <typename T>
bool slower(const T& a, const T& b) noexcept {
  if (a.dur != b.dur) return a.dur > b.dur;
  if (a.ts != b.ts) return a.ts < b.ts;
  return a.seq < b.seq;
}

// A set of durations: count, total, extremes, and their distribution
// (percentiles and stddev, in bounded memory).
struct DurationStats {
  std::uint64_t count = 0;
  std::int64_t total = 0, min = std::numeric_limits<std::int64_t>::max(),
               max = std::numeric_limits<std::int64_t>::min();
  Distribution durations;
  void add(std::int64_t ns) {
    ++count;
    total = sat_add(total, ns);
    min = std::min(min, ns);
    max = std::max(max, ns);
    durations.add(ns);
  }
  // Its row in the report, as `name` with `self` time.
  NameRow row(std::string name, std::int64_t self, GpuWork gpu) const {
    const Summary d = durations.summary();
    return NameRow{std::move(name), count,    total,    min,         max, self,
                   d.p50_ns,        d.p90_ns, d.p99_ns, d.stddev_ns, gpu, durations.log_bins()};
  }
};

// A pass run's "ir_size_before" or "ir_size_after" (aggregator_passes.cpp):
// a count written as a plain number up to kMaxIrSize, else -1.
inline constexpr std::int64_t kMaxIrSize = std::int64_t{1} << 62;
std::int64_t ir_size_arg(tools::EventDecoder& decoder, const tools::DecodedEvent& ev,
                         std::string_view key);

struct Aggregator::NameStats : DurationStats {
  std::string name;
  std::int64_t self = 0;
  GpuWork gpu = GpuWork::kNone;  // set for a name of GPU work (its own entry)
  // A compiler pass (args "ir" or "pass", not an analysis): decided by the
  // first span of the name that has args.
  enum class Pass : std::uint8_t { kUndecided, kYes, kNo };
  Pass pass = Pass::kUndecided;
};

// The runs of one pipeline: the span that ran outermost passes, by name.
struct Aggregator::PipelineStats : DurationStats {};

struct Aggregator::PhaseAgg {
  std::uint64_t count = 0;
  std::int64_t total = 0, self = 0;
};

// A unit's few threads and phases, by id, sorted: a unit touches them at
// every span, and a hash table's bucket array and nodes cost more than a
// binary search of a few entries, in time and in memory (a report holds
// every unit).
template <typename Value>
class SmallIdMap {
 public:
  Value& operator[](std::uint32_t id) {
    auto it = std::lower_bound(entries_.begin(), entries_.end(), id,
                               [](const auto& e, std::uint32_t k) { return e.first < k; });
    if (it == entries_.end() || it->first != id) it = entries_.insert(it, {id, Value{}});
    return it->second;
  }
  bool empty() const noexcept { return entries_.empty(); }
  std::size_t size() const noexcept { return entries_.size(); }
  auto begin() const noexcept { return entries_.begin(); }
  auto end() const noexcept { return entries_.end(); }
  void release() { std::vector<std::pair<std::uint32_t, Value>>().swap(entries_); }

 private:
  std::vector<std::pair<std::uint32_t, Value>> entries_;
};
struct NoValue {};

struct Aggregator::UnitStats {
  bool has_pid = false;
  Id pid;  // units are keyed by (pid, compile id): ids restart in every process
  std::string id;
  std::string display;          // without the "[id] " prefix
  std::string unit_key, frame;  // its slices' args (the first that has them)
  bool incomplete = false;      // a slice of it marked "incomplete" (open at a crash or stop)
  std::int64_t self = 0;        // its slices' self time
  Gap gap;                      // the longest of its slices' gaps (after children: below)
  // Its slices' kMaxGaps longest gaps, for the child processes spawned in
  // them (aggregator_children.cpp), and the time those children covered.
  struct ThreadGap {
    std::int64_t start, ns;
    std::uint32_t thread;
  };
  static constexpr std::size_t kMaxGaps = 16;
  std::vector<ThreadGap> gaps;
  Gap unkept_gap;  // the longest of its gaps not in `gaps`
  std::int64_t in_children = 0;
  bool in_trace = false;
  std::int64_t start = std::numeric_limits<std::int64_t>::max();
  std::int64_t end = std::numeric_limits<std::int64_t>::min();
  bool has_own = false;
  std::int64_t own_start = 0, own_end = 0;
  std::uint64_t slices = 0;
  SmallIdMap<NoValue> threads;
  SmallIdMap<PhaseAgg> phases;
  std::uint64_t gpu_kernels = 0, launched_inside = 0;
  std::int64_t gpu_ns = 0;
  bool has_first_launch = false;
  std::int64_t first_launch = 0;
  std::unordered_set<std::uint32_t> kernel_names;
  std::uint32_t own_thread = kNone, first_thread = kNone;  // of its own / first unit slice
  // Its longest phase spans for the waterfall: a min-heap of at most
  // UnitRow::kMaxSpans (the shortest on top, replaced by a longer one), so
  // a unit with thousands of spans costs 24 bytes x kMaxSpans at most.
  using Placed = Aggregator::Placed;
  std::vector<Placed> longest;
  std::uint64_t spans_total = 0;
  bool waterfall_settled = false;  // its own slice was weighed (settle_waterfall)
  bool waterfall_dropped = false;  // its spans let go: not among the slowest units

  void add_thread(std::uint32_t t) {
    if (t == last_thread) return;  // spans come in runs of one thread: one compare
    threads[t];
    last_thread = t;
  }
  std::uint32_t last_thread = kNone;
};

struct Aggregator::ThreadState {
  struct Begin {
    std::uint32_t name;  // kNone for a unit slice (its name: unit_slice_names)
    std::uint32_t unit;
    std::int64_t ts;
    std::uint64_t order;
    bool has_ts, unit_slice, attached;
    bool failed;             // args "failed": true (the adapters' mark of a failed pass)
    std::int64_t ir_before;  // its "ir_size_before" (Options::ir_size), else -1
  };
  bool has_pid = false;
  Id pid, tid;
  std::string name;
  std::uint64_t events = 0;
  // The unit its last event named (its events come in runs of one unit):
  // found again without building the (pid, compile id) key.
  std::string last_compile_id;
  std::uint32_t last_unit = kNone;
  std::vector<Begin> begins;
  // The reasons of the B's on the stack marked failed, innermost last.
  std::vector<std::string> failed_reasons;
  // The names of the unit slices' B's on the stack, innermost last (a unit
  // slice's name is not interned: one per unit).
  std::vector<std::string> unit_slice_names;
  // B's past the stack's bound, still open: the next E's close them (and
  // are ignored with them), not a B on the stack.
  std::uint64_t begins_beyond = 0;
  // Its X slices came in end order so far (self time's tie rule).
  bool x_end_ordered = true;
  bool has_x = false;
  std::int64_t last_x_end = 0;
  // Its innermost span marked "incomplete" (the latest to start; of equal
  // starts the first written, as the writer closes the innermost first):
  // where it was when its process crashed.
  bool has_incomplete = false;
  std::int64_t incomplete_start = 0, incomplete_dur = 0;
  std::uint32_t incomplete_name = 0, incomplete_unit = 0;
};

// A crash instant ("crash: SIGSEGV", cat "jitscope") of one process.
struct Aggregator::CrashNote {
  Id tid;
  bool has_tid = false;
  std::string text;  // "SIGSEGV at 0x0 on thread 4242"
};

// A span marked "failed", kept until finish() names its unit and thread.
struct Aggregator::FailedSpan {
  std::uint32_t name, thread, unit;
  std::int64_t start, dur;
  std::string reason;  // its own reason or op, without the unit's failure
};

struct Aggregator::TopEntry {
  std::int64_t dur, ts;
  std::uint64_t seq;
  std::uint32_t name, thread, unit;
};

}  // namespace jitscope::report
