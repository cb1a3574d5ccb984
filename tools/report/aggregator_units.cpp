// The units table: one row per compile unit (by pid and compile id) seen in
// the trace, joined with its record from the metrics file, in compile-id
// order. Separate because the join of trace and metrics file, and the pid
// rules it needs, are the units' alone.
#include "aggregator.hpp"

#include "aggregator_state.hpp"
#include "distribution.hpp"
#include "metrics.hpp"

#include <algorithm>

namespace jitscope::report {
namespace {

// The rows by compile id (numeric order, see compile_id_key), then pid.
// Each row's key is made once and each row moved about once: a row is
// about 500 bytes, and sorting the rows themselves re-made both keys and
// moved rows at every step (a tenth of a 10,000-unit report's instructions).
void sort_unit_rows(std::vector<UnitRow>& rows) {
  using Key = decltype(compile_id_key(std::string()));
  std::vector<std::pair<Key, std::size_t>> order;
  order.reserve(rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i)
    order.emplace_back(compile_id_key(rows[i].compile_id), i);
  std::sort(order.begin(), order.end(), [&](const auto& a, const auto& b) {
    return a.first != b.first ? a.first < b.first
                              : pid_less(rows[a.second].pid, rows[b.second].pid);
  });
  // In place, cycle by cycle: a second vector of rows would hold them all twice.
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (order[i].second == i) continue;
    UnitRow held = std::move(rows[i]);
    std::size_t at = i;
    for (;;) {
      const std::size_t from = order[at].second;
      order[at].second = at;  // placed
      if (from == i) {
        rows[at] = std::move(held);
        break;
      }
      rows[at] = std::move(rows[from]);
      at = from;
    }
  }
}

}  // namespace

const char* unit_status_name(UnitStatus s) {
  switch (s) {
    case UnitStatus::kFailed: return "failed";
    case UnitStatus::kCrashed: return "crashed";
    case UnitStatus::kIncomplete: return "incomplete";
    case UnitStatus::kOk: break;
  }
  return "ok";
}

void Aggregator::place_spans(const UnitStats& u, UnitRow& row) const {
  auto lane_of = [this](std::uint32_t t) { return UnitLane{threads_[t].tid, threads_[t].name}; };
  const std::uint32_t main_thread = u.own_thread != kNone ? u.own_thread : u.first_thread;
  if (main_thread != kNone) row.thread = lane_of(main_thread);
  std::vector<UnitStats::Placed> spans = u.longest;
  std::sort(spans.begin(), spans.end(), [](const auto& a, const auto& b) {
    return a.start != b.start ? a.start < b.start : a.dur > b.dur;  // parents first
  });
  std::int64_t base = u.in_trace ? u.start : spans.empty() ? 0 : spans.front().start;
  std::vector<std::uint32_t> lane_threads;
  if (main_thread != kNone) lane_threads.push_back(main_thread);
  for (const UnitStats::Placed& s : spans) {
    auto it = std::find(lane_threads.begin(), lane_threads.end(), s.thread);
    if (it == lane_threads.end()) it = lane_threads.insert(lane_threads.end(), s.thread);
    row.spans.push_back(UnitSpan{names_[s.name].name, sat_sub(s.start, base), s.dur,
                                 static_cast<std::uint32_t>(it - lane_threads.begin())});
  }
  for (std::uint32_t t : lane_threads) row.lanes.push_back(lane_of(t));
  row.spans_total = u.spans_total;
}

void Aggregator::unit_rows(Report& r, const MetricsFile* metrics, PidKeys& unit_pids) {
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
    r.autotune_records = metrics->autotune_records;
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
  r.units.reserve(units_.size());  // exact: a unit's row is most of its memory
  r.waterfall_limit = opt_.waterfall_units;
  r.waterfalls_dropped = waterfalls_dropped_;
  for (std::uint32_t i = 0; i < units_.size(); ++i) {
    UnitStats& u = units_[i];
    const UnitMetrics* m = joined[i];
    if (!listed(u) && m == nullptr) continue;
    UnitRow row;
    if (u.has_pid) row.pid = u.pid;
    if (listed(u)) note_pid(unit_pids, u.has_pid, u.pid);
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
    place_spans(u, row);
    row.waterfall_dropped = u.waterfall_dropped;
    // What the row now holds, let go: later tables read only the unit's
    // ids and GPU counts.
    u.threads.release();
    u.phases.release();
    std::vector<UnitStats::Placed>().swap(u.longest);
    row.self_ns = u.self;
    row.gap_start_ns = u.gap.start;
    row.gap_ns = u.gap.ns;
    row.in_children_ns = u.in_children;
    row.unit_key = u.unit_key;
    row.frame = u.frame;
    if (m != nullptr) {
      row.metrics = std::make_shared<const UnitMetrics>(*m);
      if (row.name.empty()) row.name = row.metrics->name;
      if (row.unit_key.empty()) row.unit_key = m->unit_key;
      if (row.frame.empty()) row.frame = m->frame;
    }
    if (m != nullptr && !m->fail_type.empty()) {
      row.status = UnitStatus::kFailed;
      row.fail_type = m->fail_type;
      row.fail_reason = m->fail_reason;
    } else if (u.incomplete) {
      // Open when the trace ended: at its process's crash, or at stop().
      if (const CrashNote* crash = crash_of(u.has_pid, u.pid)) {
        row.status = UnitStatus::kCrashed;
        row.fail_type = "crash";
        row.fail_reason = crash->text;
      } else {
        row.status = UnitStatus::kIncomplete;
      }
    }
    r.units.push_back(std::move(row));
  }
  Distribution walls;  // the units' wall times (their metrics duration without a slice)
  for (const UnitRow& u : r.units) {
    if (u.in_trace) {
      walls.add(u.wall_ns);
    } else if (u.metrics && u.metrics->duration_ns) {
      walls.add(*u.metrics->duration_ns);
    }
  }
  const Summary w = walls.summary();
  r.unit_walls = UnitWallSummary{w.count,  w.total_ns, w.mean_ns, w.min_ns,   w.max_ns,
                                 w.p50_ns, w.p90_ns,   w.p99_ns,  w.stddev_ns};
  sort_unit_rows(r.units);
  // A snapshot's triggering unit first: the reason the file exists.
  if (r.header.snapshot && !r.header.snapshot->compile_id.empty()) {
    const SnapshotInfo& snap = *r.header.snapshot;
    // Its process's unit only: merged traces have a "3/0" in each process.
    const auto same_pid = [&](const UnitRow& u) {
      return !snap.pid || !u.pid || (!pid_less(u.pid, snap.pid) && !pid_less(snap.pid, u.pid));
    };
    std::stable_partition(r.units.begin(), r.units.end(), [&](const UnitRow& u) {
      return u.compile_id == snap.compile_id && same_pid(u);
    });
  }
}

void Aggregator::failed_rows(Report& r) const {
  // The units' rows by (pid, compile id), for their names and failures.
  std::unordered_map<std::string, const UnitRow*> rows;
  for (const UnitRow& u : r.units) {
    std::string key;
    append_owned(key, u.pid.has_value(), u.pid.value_or(Id{}));
    key += u.compile_id;
    rows.emplace(std::move(key), &u);
  }
  auto fill = [&](FailedPass& p, std::uint32_t thread, std::uint32_t unit) {
    const ThreadState& t = threads_[thread];
    if (t.has_pid) p.pid = t.pid;
    p.tid = t.tid;
    p.thread = t.name;
    if (unit == kNone) return static_cast<const UnitRow*>(nullptr);
    const UnitStats& u = units_[unit];
    p.compile_id = u.id;
    std::string key;
    append_owned(key, u.has_pid, u.pid);
    key += u.id;
    const auto it = rows.find(key);
    p.unit = it != rows.end() ? it->second->name : u.display;
    return it != rows.end() ? it->second : nullptr;
  };
  for (const FailedSpan& f : failed_) {
    FailedPass p;
    p.name = names_[f.name].name;
    p.ts_ns = f.start;
    p.dur_ns = f.dur;
    p.reason = f.reason;
    const UnitRow* row = fill(p, f.thread, f.unit);
    if (row != nullptr && row->status == UnitStatus::kFailed) {
      p.reason += (p.reason.empty() ? "" : "; ") + std::string("unit failed: ") + row->fail_type +
                  (row->fail_reason.empty() ? "" : ": " + row->fail_reason);
    }
    r.failed_passes.push_back(std::move(p));
  }
  // Where each crashed thread was: its innermost span still open.
  for (std::uint32_t t = 0; t < threads_.size(); ++t) {
    const ThreadState& th = threads_[t];
    if (!th.has_incomplete) continue;
    const CrashNote* crash = crash_of(th.has_pid, th.pid);
    if (crash == nullptr || (crash->has_tid && crash->tid.str() != th.tid.str())) continue;
    FailedPass p;
    p.name = names_[th.incomplete_name].name;
    p.crashed = true;
    p.ts_ns = th.incomplete_start;
    p.dur_ns = th.incomplete_dur;
    p.reason = "crash: " + crash->text;
    fill(p, t, th.incomplete_unit);
    r.failed_passes.push_back(std::move(p));
  }
  r.failed_passes_total = failed_total_ + (r.failed_passes.size() - failed_.size());
  std::stable_sort(r.failed_passes.begin(), r.failed_passes.end(),
                   [](const FailedPass& a, const FailedPass& b) { return a.ts_ns < b.ts_ns; });
}

}  // namespace jitscope::report
