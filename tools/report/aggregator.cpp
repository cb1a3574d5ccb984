#include "aggregator.hpp"

#include "metrics.hpp"

#include <simdjson.h>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <limits>
#include <map>
#include <set>
#include <tuple>
#include <unordered_set>

namespace jitscope::report {
namespace {

constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();
constexpr std::size_t kMaxOpenBegins = std::size_t{1} << 16;  // per thread
constexpr std::size_t kShrunkWindow = 1024;  // per thread, once the total window is full

void append_id(std::string& key, bool has, const tools::TraceId& id) {
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
void append_owned(std::string& key, bool has, const Id& id) {
  append_id(key, has, tools::TraceId{id.is_string, id.number, id.text});
}

// jitscope puts a GPU's slices on a fake pid, 10000000 * (device + 1) +
// host pid: the host process that launched them.
constexpr std::int64_t kGpuPidBase = 10000000;
Id host_pid(Id pid) {
  if (!pid.is_string && pid.number >= kGpuPidBase) pid.number %= kGpuPidBase;
  return pid;
}

Id owned(bool has, const tools::TraceId& id) {
  Id out;
  if (!has) return out;
  out.is_string = id.is_string;
  out.number = id.number;
  out.text = std::string(id.text);
  return out;
}

// "[3/1] model__fwd_4" -> "model__fwd_4".
std::string_view strip_unit_prefix(std::string_view display) {
  if (!display.empty() && display.front() == '[') {
    const std::size_t close = display.find("] ");
    if (close != std::string_view::npos) return display.substr(close + 2);
  }
  return display;
}

// Compile ids in numeric order ("2/0" < "10/0"), others after, by text.
auto compile_id_key(const std::string& id) {
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
bool pid_less(const std::optional<Id>& a, const std::optional<Id>& b) {
  if (a.has_value() != b.has_value()) return !a.has_value();
  if (!a) return false;
  if (a->is_string != b->is_string) return !a->is_string;
  return a->is_string ? a->text < b->text : a->number < b->number;
}

}  // namespace

struct Aggregator::NameStats {
  std::string name;
  std::uint64_t count = 0;
  std::int64_t total = 0, min = std::numeric_limits<std::int64_t>::max(),
               max = std::numeric_limits<std::int64_t>::min(), self = 0;
};

struct Aggregator::PhaseAgg {
  std::uint64_t count = 0;
  std::int64_t total = 0, self = 0;
};

struct Aggregator::UnitStats {
  bool has_pid = false;
  Id pid;  // units are keyed by (pid, compile id): ids restart in every process
  std::string id;
  std::string display;  // without the "[id] " prefix
  bool in_trace = false;
  std::int64_t start = std::numeric_limits<std::int64_t>::max();
  std::int64_t end = std::numeric_limits<std::int64_t>::min();
  bool has_own = false;
  std::int64_t own_start = 0, own_end = 0;
  std::uint64_t slices = 0;
  std::unordered_set<std::uint32_t> threads;
  std::unordered_map<std::uint32_t, PhaseAgg> phases;
  std::uint64_t gpu_kernels = 0, launched_inside = 0;
  std::int64_t gpu_ns = 0;
  bool has_first_launch = false;
  std::int64_t first_launch = 0;
  std::unordered_set<std::uint32_t> kernel_names;

  void add_thread(std::uint32_t t) { threads.insert(t); }
};

struct Aggregator::ThreadState {
  struct Begin {
    std::uint32_t name;
    std::uint32_t unit;
    std::int64_t ts;
    bool unit_slice, attached;
  };
  bool has_pid = false;
  Id pid, tid;
  std::string name;
  std::uint64_t events = 0;
  std::vector<Begin> begins;
  SelfTimeThread self;
};

struct Aggregator::TopEntry {
  std::int64_t dur, ts;
  std::uint64_t seq;
  std::uint32_t name, thread, unit;
};

namespace {
// true when a is a slower span than b (a ranks first).
template <typename T>
bool slower(const T& a, const T& b) noexcept {
  if (a.dur != b.dur) return a.dur > b.dur;
  if (a.ts != b.ts) return a.ts < b.ts;
  return a.seq < b.seq;
}
}  // namespace

Aggregator::Aggregator(Options opt) : opt_(opt) {}
Aggregator::~Aggregator() = default;

std::uint32_t Aggregator::name_id(std::string_view name) {
  if (auto it = names_index_.find(name); it != names_index_.end()) return it->second;
  const auto id = static_cast<std::uint32_t>(names_.size());
  names_.emplace_back().name = std::string(name);
  names_index_.emplace(std::string(name), id);
  return id;
}

std::uint32_t Aggregator::unit_id(bool has_pid, const Id& pid, std::string_view compile_id) {
  unit_key_.clear();
  append_owned(unit_key_, has_pid, pid);
  unit_key_.append(compile_id);
  if (auto it = units_index_.find(unit_key_); it != units_index_.end()) return it->second;
  const auto id = static_cast<std::uint32_t>(units_.size());
  UnitStats& u = units_.emplace_back();
  u.has_pid = has_pid;
  if (has_pid) u.pid = pid;
  u.id = std::string(compile_id);
  units_index_.emplace(unit_key_, id);
  return id;
}

std::uint32_t Aggregator::unit_id(std::uint32_t thread, std::string_view compile_id) {
  const ThreadState& t = threads_[thread];
  return unit_id(t.has_pid, t.pid, compile_id);
}

std::uint32_t Aggregator::thread_id(const tools::DecodedEvent& ev) {
  key_.clear();
  append_id(key_, ev.has_pid, ev.pid);
  append_id(key_, ev.has_tid, ev.tid);
  if (last_thread_ != kNone && key_ == last_thread_key_) return last_thread_;
  std::uint32_t id;
  if (auto it = threads_index_.find(key_); it != threads_index_.end()) {
    id = it->second;
  } else {
    id = static_cast<std::uint32_t>(threads_.size());
    ThreadState& t = threads_.emplace_back();
    t.has_pid = ev.has_pid;
    t.pid = owned(ev.has_pid, ev.pid);
    t.tid = owned(ev.has_tid, ev.tid);
    threads_index_.emplace(key_, id);
  }
  last_thread_ = id;
  last_thread_key_ = key_;
  return id;
}

void Aggregator::note_process(const tools::DecodedEvent& ev) {
  key_.clear();
  append_id(key_, ev.has_pid, ev.pid);
  if (key_ == last_process_key_) return;
  last_process_key_ = key_;
  if (processes_index_.find(key_) == processes_index_.end()) {
    processes_index_.emplace(key_, static_cast<std::uint32_t>(process_names_.size()));
    process_names_.emplace_back();
  }
}

void Aggregator::add(const tools::DecodedEvent& ev, tools::EventDecoder& decoder) {
  if (ev.ph.size() == 1 && static_cast<unsigned char>(ev.ph[0]) < 128) {
    ++ph_small_[static_cast<unsigned char>(ev.ph[0])];
  } else {
    ++ph_counts_[std::string(ev.ph)];
  }
  if (ev.has_pid) note_process(ev);
  const bool meta = ev.ph == "M";
  if (meta) {
    metadata(ev, decoder);
    return;
  }
  if (ev.has_ts) {
    std::int64_t end;
    if (__builtin_add_overflow(ev.ts_ns, ev.has_dur && ev.dur_ns > 0 ? ev.dur_ns : 0, &end)) {
      // ts + dur beyond int64 ns (hostile input): the event is skipped.
      ++end_overflow_;
      if (ev.ph.size() == 1 && ev.has_pid && ev.has_tid) ++threads_[thread_id(ev)].events;
      return;
    }
    if (!header_.has_time) {
      header_.has_time = true;
      header_.begin_ns = ev.ts_ns;
      header_.end_ns = end;
    } else {
      header_.begin_ns = std::min(header_.begin_ns, ev.ts_ns);
      header_.end_ns = std::max(header_.end_ns, end);
    }
  }
  if (ev.ph.size() != 1) return;
  switch (ev.ph[0]) {
    case 'X': {
      if (!ev.has_ts) {
        ++spans_without_ts_;
        return;
      }
      const std::uint32_t t = thread_id(ev);
      ++threads_[t].events;
      const bool gpu_side = ev.has_device && ev.has_stream;
      const std::int64_t dur = ev.has_dur && ev.dur_ns > 0 ? ev.dur_ns : 0;
      span(t, ev.name, ev.cat, ev.ts_ns, dur, ev.has_compile_id ? ev.compile_id : std::string_view(),
           ev.attached, gpu_side);
      if (gpu_side) gpu_slice(ev);
      return;
    }
    case 'B': {
      const std::uint32_t t = thread_id(ev);
      ThreadState& th = threads_[t];
      ++th.events;
      if (!ev.has_ts) {
        ++spans_without_ts_;
        return;
      }
      if (th.begins.size() >= kMaxOpenBegins) {
        ++begin_overflow_;
        return;
      }
      ThreadState::Begin b;
      b.name = name_id(ev.name);
      b.unit = ev.has_compile_id ? unit_id(t, ev.compile_id) : kNone;
      b.ts = ev.ts_ns;
      b.unit_slice = ev.cat == "compile_unit" && ev.has_compile_id;
      b.attached = ev.attached;
      threads_[t].begins.push_back(b);
      return;
    }
    case 'E': {
      const std::uint32_t t = thread_id(ev);
      ThreadState& th = threads_[t];
      ++th.events;
      if (th.begins.empty() || !ev.has_ts) {
        ++unmatched_ends_;
        return;
      }
      const ThreadState::Begin b = th.begins.back();
      th.begins.pop_back();
      std::int64_t dur;
      if (__builtin_sub_overflow(ev.ts_ns, b.ts, &dur)) {  // E - B beyond int64 ns: skipped
        ++end_overflow_;
        return;
      }
      std::uint32_t unit = b.unit;
      if (unit == kNone && ev.has_compile_id) unit = unit_id(t, ev.compile_id);
      // Copies: span() may grow names_/units_ and invalidate references.
      const std::string name = names_[b.name].name;
      const std::string cid = unit == kNone ? std::string() : units_[unit].id;
      span(t, name, b.unit_slice ? std::string_view("compile_unit") : std::string_view(), b.ts,
           std::max<std::int64_t>(0, dur), cid, b.attached, false);
      return;
    }
    default:
      if (ev.has_pid && ev.has_tid) ++threads_[thread_id(ev)].events;
      return;
  }
}

void Aggregator::span(std::uint32_t thread, std::string_view name, std::string_view cat,
                      std::int64_t start, std::int64_t dur, std::string_view compile_id, bool attached,
                      bool gpu_side) {
  ++header_.spans;
  const std::uint64_t seq = seq_++;
  const bool unit_slice = cat == "compile_unit" && !compile_id.empty();
  // A GPU slice's compile id names a unit of its host process.
  const ThreadState& th = threads_[thread];
  const std::uint32_t unit = compile_id.empty() ? kNone
                             : gpu_side         ? unit_id(th.has_pid, host_pid(th.pid), compile_id)
                                                : unit_id(thread, compile_id);
  const std::uint32_t name_index = name_id(name);
  std::uint32_t stats_name = name_index;
  if (unit_slice) {
    UnitStats& u = units_[unit];
    u.in_trace = true;
    ++u.slices;
    u.start = std::min(u.start, start);
    u.end = std::max(u.end, start + dur);
    u.add_thread(thread);
    if (!attached && (!u.has_own || dur > u.own_end - u.own_start)) {
      u.has_own = true;
      u.own_start = start;
      u.own_end = start + dur;
    }
    if (u.display.empty()) u.display = std::string(strip_unit_prefix(name));
    stats_name = kNone;  // the units table has it
  } else {
    NameStats& n = names_[name_index];
    ++n.count;
    n.total = sat_add(n.total, dur);
    n.min = std::min(n.min, dur);
    n.max = std::max(n.max, dur);
    if (unit != kNone && !gpu_side) {
      UnitStats& u = units_[unit];
      PhaseAgg& p = u.phases[name_index];
      ++p.count;
      p.total = sat_add(p.total, dur);
      u.add_thread(thread);
    }
  }
  // The slowest spans: a min-heap of opt_.top_n, the fastest on top.
  if (opt_.top_n > 0) {
    const TopEntry e{dur, start, seq, name_index, thread, unit};
    auto faster_first = [](const TopEntry& a, const TopEntry& b) { return slower(a, b); };
    if (top_.size() < opt_.top_n) {
      top_.push_back(e);
      std::push_heap(top_.begin(), top_.end(), faster_first);
    } else if (slower(e, top_.front())) {
      std::pop_heap(top_.begin(), top_.end(), faster_first);
      top_.back() = e;
      std::push_heap(top_.begin(), top_.end(), faster_first);
    }
  }
  // Self time: unit slices nest others but have no row of their own.
  SelfTimeThread& st = threads_[thread].self;
  const std::size_t before = st.window();
  const std::size_t cap = window_used_ >= opt_.window_total
                              ? std::min(opt_.window_per_thread, kShrunkWindow)
                              : opt_.window_per_thread;
  TimedSpan ts;
  ts.start = start;
  ts.end = start + dur;
  ts.seq = seq;
  ts.name = stats_name;
  ts.unit = (unit_slice || gpu_side) ? kNone : unit;
  st.add(ts, cap, *this);
  window_used_ = window_used_ + st.window() - before;
}

void Aggregator::on_self(const TimedSpan& s, std::int64_t self_ns) {
  if (s.name == kNone) return;
  names_[s.name].self = sat_add(names_[s.name].self, self_ns);
  if (s.unit != kNone) {
    PhaseAgg& p = units_[s.unit].phases[s.name];
    p.self = sat_add(p.self, self_ns);
  }
}

void Aggregator::gpu_slice(const tools::DecodedEvent& ev) {
  const std::int64_t dur = ev.has_dur && ev.dur_ns > 0 ? ev.dur_ns : 0;
  if (!ev.has_grid) {
    if (ev.name.substr(0, 6) == "Memset") {
      ++gpu_.memsets;
    } else {
      ++gpu_.memcpys;
    }
    return;
  }
  ++gpu_.kernels;
  gpu_.kernel_ns = sat_add(gpu_.kernel_ns, dur);
  // Its compile_id and compiled_by_id name units of the host process.
  const Id host = host_pid(owned(ev.has_pid, ev.pid));
  if (ev.has_compile_id) ++units_[unit_id(ev.has_pid, host, ev.compile_id)].launched_inside;
  if (ev.compiled_by_id.empty()) {
    ++gpu_.kernels_unattributed;
    return;
  }
  const std::uint32_t kname = name_id(ev.name);
  UnitStats& u = units_[unit_id(ev.has_pid, host, ev.compiled_by_id)];
  ++u.gpu_kernels;
  u.gpu_ns = sat_add(u.gpu_ns, dur);
  if (!u.has_first_launch || ev.ts_ns < u.first_launch) {
    u.has_first_launch = true;
    u.first_launch = ev.ts_ns;
  }
  u.kernel_names.insert(kname);
  if (u.display.empty() && !ev.compiled_by.empty()) {
    u.display = std::string(strip_unit_prefix(ev.compiled_by));
  }
}

void Aggregator::metadata(const tools::DecodedEvent& ev, tools::EventDecoder& decoder) {
  if (ev.name == "thread_name") {
    if (!ev.arg_name.empty()) threads_[thread_id(ev)].name = std::string(ev.arg_name);
  } else if (ev.name == "process_name") {
    key_.clear();
    append_id(key_, ev.has_pid, ev.pid);
    if (auto it = processes_index_.find(key_); it != processes_index_.end()) {
      process_names_[it->second] = std::string(ev.arg_name);
    }
  } else if (ev.name == "jitscope_session") {
    SessionInfo s;
    decoder.arg_string(ev, "version", &s.version);
    decoder.arg_string(ev, "clock", &s.clock);
    std::string_view cupti;
    if (decoder.arg(ev, "cupti", &cupti)) {
      simdjson::dom::parser p;
      simdjson::dom::object o;
      if (p.parse(cupti.data(), cupti.size()).get_object().get(o) == simdjson::SUCCESS) {
        std::string_view v;
        if (o["state"].get_string().get(v) == simdjson::SUCCESS) s.cupti_state = std::string(v);
        if (o["reason"].get_string().get(v) == simdjson::SUCCESS) s.cupti_reason = std::string(v);
        if (o["timestamps"].get_string().get(v) == simdjson::SUCCESS) s.cupti_timestamps = std::string(v);
      }
    }
    header_.session = std::move(s);
  } else if (ev.name == "jitscope_stats") {
    std::string_view dropped;
    std::int64_t n = 0;
    if (decoder.arg(ev, "events_dropped", &dropped) &&
        std::from_chars(dropped.data(), dropped.data() + dropped.size(), n).ec == std::errc()) {
      header_.events_dropped = n;
    }
  }
}

Report Aggregator::finish(const std::string& input, std::uint64_t bytes, std::uint64_t events,
                          bool unterminated, std::uint64_t fields_ignored, const MetricsFile* metrics) {
  std::uint64_t late = 0, overlapping = 0, unclosed = 0;
  for (ThreadState& t : threads_) {
    t.self.finish(*this);
    late += t.self.late();
    overlapping += t.self.overlapping();
    unclosed += t.begins.size();
  }
  Report r;
  r.header = std::move(header_);
  Header& h = r.header;
  h.input = input;
  h.bytes = bytes;
  h.events = events;
  h.unterminated = unterminated;
  h.processes = process_names_.size();
  for (const ThreadState& t : threads_) h.threads += t.events > 0 ? 1 : 0;
  std::map<std::string, std::uint64_t> phs(ph_counts_.begin(), ph_counts_.end());
  for (int c = 0; c < 128; ++c) {
    if (ph_small_[c] != 0) phs[std::string(1, static_cast<char>(c))] += ph_small_[c];
  }
  h.phase_counts.assign(phs.begin(), phs.end());
  auto warn = [&](std::uint64_t n, const std::string& what) {
    if (n > 0) h.warnings.push_back(std::to_string(n) + " " + what);
  };
  warn(late, "spans arrived too far out of order for exact self times (approximated)");
  warn(overlapping, "spans overlap a span on their thread without nesting in it");
  warn(unmatched_ends_, "'E' events with no open 'B' on their thread (ignored)");
  warn(unclosed, "'B' events never closed (ignored)");
  warn(begin_overflow_, "'B' events beyond 65536 open on one thread (ignored)");
  warn(spans_without_ts_, "spans without a usable ts (ignored)");
  warn(end_overflow_, "events whose end (ts + dur, or E - B) does not fit in int64 ns (ignored)");
  warn(fields_ignored, "event fields of an unexpected type (ignored)");
  if (h.events_dropped && *h.events_dropped > 0) {
    warn(static_cast<std::uint64_t>(*h.events_dropped), "events dropped by the jitscope writer (jitscope_stats)");
  }

  for (const NameStats& n : names_) {
    if (n.count == 0) continue;
    r.names.push_back(NameRow{n.name, n.count, n.total, n.min, n.max, n.self});
  }
  std::sort(r.names.begin(), r.names.end(), [](const NameRow& a, const NameRow& b) {
    return a.total_ns != b.total_ns ? a.total_ns > b.total_ns : a.name < b.name;
  });

  // Units: those with slices or phases in the trace, and those in the metrics file.
  // The metrics file (one process's) has no pid: a record joins the unit
  // of its compile id when exactly one process has that unit in the trace,
  // else it is a row of its own without a pid.
  auto listed = [](const UnitStats& u) { return u.in_trace || !u.phases.empty(); };
  std::vector<const UnitMetrics*> joined(units_.size(), nullptr);
  if (metrics != nullptr) {
    r.has_metrics = true;
    r.runtime_records = metrics->runtime_records;
    r.runtime_duration_ns = metrics->runtime_duration_ns;
    std::unordered_map<std::string, std::vector<std::uint32_t>> by_cid;
    for (std::uint32_t i = 0; i < units_.size(); ++i) {
      if (listed(units_[i])) by_cid[units_[i].id].push_back(i);
    }
    for (const auto& [id, m] : metrics->units) {
      auto it = by_cid.find(id);
      std::uint32_t target;
      if (it != by_cid.end() && it->second.size() == 1) {
        target = it->second.front();
      } else {
        target = unit_id(false, Id{}, id);
      }
      if (target >= joined.size()) joined.resize(units_.size(), nullptr);
      joined[target] = &m;
    }
  }
  std::set<std::string> unit_pids;  // distinct pid keys of the rows
  std::string pid_key;
  auto note_pid = [&](bool has, const Id& pid) {
    pid_key.clear();
    append_owned(pid_key, has, pid);
    unit_pids.insert(pid_key);
  };
  for (std::uint32_t i = 0; i < units_.size(); ++i) {
    const UnitStats& u = units_[i];
    const UnitMetrics* m = joined[i];
    if (!listed(u) && m == nullptr) continue;
    UnitRow row;
    if (u.has_pid) row.pid = u.pid;
    if (listed(u)) note_pid(u.has_pid, u.pid);
    row.compile_id = u.id;
    row.name = u.display;
    row.in_trace = u.in_trace;
    if (u.in_trace) {
      row.start_ns = u.start;
      row.end_ns = u.end;
      row.wall_ns = u.has_own ? u.own_end - u.own_start : sat_sub(u.end, u.start);
      row.compile_end_ns = u.has_own ? u.own_end : u.end;
    }
    row.slices = u.slices;
    row.threads = u.threads.size();
    for (const auto& [name, p] : u.phases) {
      row.phases.push_back(PhaseRow{names_[name].name, p.count, p.total, p.self});
    }
    std::sort(row.phases.begin(), row.phases.end(), [](const PhaseRow& a, const PhaseRow& b) {
      return a.total_ns != b.total_ns ? a.total_ns > b.total_ns : a.name < b.name;
    });
    if (m != nullptr) {
      row.metrics = *m;
      if (row.name.empty()) row.name = row.metrics->name;
    }
    r.units.push_back(std::move(row));
  }
  std::sort(r.units.begin(), r.units.end(), [](const UnitRow& a, const UnitRow& b) {
    const auto ka = compile_id_key(a.compile_id), kb = compile_id_key(b.compile_id);
    return ka != kb ? ka < kb : pid_less(a.pid, b.pid);
  });

  std::sort(top_.begin(), top_.end(), [](const TopEntry& a, const TopEntry& b) { return slower(a, b); });
  for (const TopEntry& e : top_) {
    SpanRow s;
    s.name = names_[e.name].name;
    s.ts_ns = e.ts;
    s.dur_ns = e.dur;
    s.pid = threads_[e.thread].pid;
    s.tid = threads_[e.thread].tid;
    s.thread = threads_[e.thread].name;
    if (e.unit != kNone) s.compile_id = units_[e.unit].id;
    r.top.push_back(std::move(s));
  }

  r.gpu = gpu_;
  for (const UnitStats& u : units_) {
    if (u.gpu_kernels == 0 && u.launched_inside == 0) continue;
    GpuUnitRow g;
    if (u.has_pid) g.pid = u.pid;
    note_pid(u.has_pid, u.pid);
    g.compile_id = u.id;
    g.name = u.display;
    g.kernels = u.gpu_kernels;
    g.distinct_kernels = u.kernel_names.size();
    g.gpu_ns = u.gpu_ns;
    g.launched_inside = u.launched_inside;
    if (u.has_first_launch) {
      g.first_launch_ns = u.first_launch;
      if (u.in_trace) g.latency_ns = sat_sub(u.first_launch, u.has_own ? u.own_end : u.end);
    }
    r.gpu.units.push_back(std::move(g));
  }
  std::sort(r.gpu.units.begin(), r.gpu.units.end(), [](const GpuUnitRow& a, const GpuUnitRow& b) {
    const auto ka = compile_id_key(a.compile_id), kb = compile_id_key(b.compile_id);
    return ka != kb ? ka < kb : pid_less(a.pid, b.pid);
  });
  r.multi_process_units = unit_pids.size() > 1;
  return r;
}

}  // namespace jitscope::report
