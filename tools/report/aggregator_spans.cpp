// The span accounting: each span's share of the per-name totals, of its
// unit's slice or phases, of the slowest-spans heap and of self time; then
// the names and slowest-spans rows of the report. Separate from the intake,
// which only decides what a span is.
#include "aggregator.hpp"

#include "aggregator_state.hpp"

#include <algorithm>

namespace jitscope::report {

std::uint32_t Aggregator::span(std::uint32_t thread, std::string_view name, std::string_view cat,
                               std::int64_t start, std::int64_t dur, std::string_view compile_id,
                               bool attached, Side side, std::uint64_t order, bool from_x) {
  ++header_.spans;
  const std::uint64_t seq = seq_++;
  const bool gpu_side = side == Side::kGpu;
  const bool host_span = side == Side::kHost;
  const bool unit_slice = host_span && cat == "compile_unit" && !compile_id.empty();
  // A GPU slice's compile id names a unit of its host process.
  const ThreadState& th = threads_[thread];
  const std::uint32_t unit = compile_id.empty() || side == Side::kCudaCall ? kNone
                             : gpu_side ? unit_id(th.has_pid, host_pid(th.pid), compile_id)
                                        : unit_id(thread, compile_id);
  // A unit slice's name is not interned (one per unit): the units table
  // has it, and the slowest spans take it only if it is among them.
  const std::uint32_t name_index = unit_slice  ? kNone
                                   : host_span ? name_id(name)
                                               : gpu_name_id(name);
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
      u.own_thread = thread;
    }
    if (!attached && !u.waterfall_settled) settle_waterfall(unit, dur);
    if (u.first_thread == kNone) u.first_thread = thread;
    if (u.display.empty()) u.display = std::string(strip_unit_prefix(name));
    stats_name = kNone;  // the units table has it
  } else {
    names_[name_index].add(dur);
    if (unit != kNone && host_span) {
      UnitStats& u = units_[unit];
      PhaseAgg& p = u.phases[name_index];
      ++p.count;
      p.total = sat_add(p.total, dur);
      u.add_thread(thread);
      keep_waterfall_span(unit, start, dur, name_index, thread);
    }
  }
  // The slowest spans: the opt_.top_n greatest by slower(), the fastest on
  // top; host spans only (GPU work and CUDA calls have their own table).
  if (opt_.top_n > 0 && host_span) {
    const auto less = [](const TopEntry& a, const TopEntry& b) { return slower(b, a); };
    TopEntry entry{dur, start, seq, name_index, thread, unit};
    if (unit_slice && (top_.size() < opt_.top_n || less(top_.front(), entry)))
      entry.name = name_id(name);  // it goes in
    keep_greatest(top_, opt_.top_n, entry, less);
  }
  // A CUDA call stays in its parent's self time: a phase's self time is the
  // compiler's own, driver calls included, as without CUPTI.
  if (side == Side::kCudaCall) return name_index;
  // Self time: unit slices nest others but have no row of their own.
  TimedSpan ts;
  ts.start = start;
  ts.end = start + dur;
  ts.order = order;
  ts.thread = thread;
  ts.name = stats_name;  // kNone for a unit slice: its self time is its unit's
  ts.unit = gpu_side ? kNone : unit;
  ts.from_x = (from_x ? TimedSpan::kFromX : 0) |
              (stats_name == kNone && ts.unit != kNone ? TimedSpan::kWantsGaps : 0);
  self_.add(ts);
  return name_index;
}

void Aggregator::keep_waterfall_span(std::uint32_t unit, std::int64_t start, std::int64_t dur,
                                     std::uint32_t name, std::uint32_t thread) {
  UnitStats& u = units_[unit];
  ++u.spans_total;
  if (u.waterfall_dropped) return;
  if (opt_.waterfall_units == 0) {
    drop_waterfall(unit);
    return;
  }
  if (u.longest.empty() && !u.waterfall_settled) {
    // Held unweighed until its own slice ends (SDK traces write a unit's
    // phases first). Past a few times the limit, the oldest such unit lets
    // its spans go: its slice may never come (lost to a full ring, open at
    // a crash, or a trace without unit slices), and memory stays bounded.
    const auto stale = [this](std::uint32_t v) {
      return units_[v].waterfall_settled || units_[v].waterfall_dropped;
    };
    while (!unsettled_.empty() && stale(unsettled_.front())) unsettled_.pop_front();
    unsettled_.push_back(unit);
    ++unsettled_with_spans_;
    while (unsettled_with_spans_ > 4 * opt_.waterfall_units + 64) {
      const std::uint32_t oldest = unsettled_.front();
      unsettled_.pop_front();
      if (!stale(oldest)) drop_waterfall(oldest);
    }
  }
  if (u.longest.capacity() == 0 && !spare_waterfalls_.empty()) {
    u.longest = std::move(spare_waterfalls_.back());  // a dropped unit's room, reused
    spare_waterfalls_.pop_back();
  }
  keep_greatest(
      u.longest, UnitRow::kMaxSpans, UnitStats::Placed{start, dur, name, thread},
      [](const UnitStats::Placed& a, const UnitStats::Placed& b) { return a.dur < b.dur; });
}

void Aggregator::settle_waterfall(std::uint32_t unit, std::int64_t wall_ns) {
  UnitStats& u = units_[unit];
  u.waterfall_settled = true;
  if (u.waterfall_dropped) return;
  if (!u.longest.empty()) --unsettled_with_spans_;
  const auto slower = [](const auto& a, const auto& b) { return a > b; };  // min-heap
  waterfalls_.emplace_back(wall_ns, unit);
  std::push_heap(waterfalls_.begin(), waterfalls_.end(), slower);
  if (waterfalls_.size() <= opt_.waterfall_units) return;
  std::pop_heap(waterfalls_.begin(), waterfalls_.end(), slower);
  drop_waterfall(waterfalls_.back().second);
  waterfalls_.pop_back();
}

void Aggregator::drop_waterfall(std::uint32_t unit) {
  UnitStats& u = units_[unit];
  if (u.waterfall_dropped) return;
  if (!u.waterfall_settled && !u.longest.empty()) --unsettled_with_spans_;
  u.waterfall_dropped = true;
  ++waterfalls_dropped_;
  // Its room goes to the next unit (most units are dropped: without this,
  // each one's heap grew from nothing, 7 allocations for 42 spans).
  u.longest.clear();
  if (spare_waterfalls_.size() < kSpareWaterfalls && u.longest.capacity() > 0) {
    spare_waterfalls_.push_back(std::move(u.longest));
  }
  std::vector<UnitStats::Placed>().swap(u.longest);
}

void Aggregator::on_self(const TimedSpan& s, std::int64_t self_ns, const Gap& longest,
                         const TimedSpan* parent) {
  pipeline_step(s, parent);
  if (s.name == kNone) {  // a unit slice
    if (s.unit != kNone) {
      UnitStats& u = units_[s.unit];
      u.self = sat_add(u.self, self_ns);
      if (longest.ns > u.gap.ns) u.gap = longest;
    }
    return;
  }
  names_[s.name].self = sat_add(names_[s.name].self, self_ns);
  if (s.unit != kNone) {
    PhaseAgg& p = units_[s.unit].phases[s.name];
    p.self = sat_add(p.self, self_ns);
  }
}

void Aggregator::name_rows(Report& r) const {
  for (const NameStats& n : names_) {
    if (n.count == 0) continue;
    auto& rows = n.gpu == GpuWork::kNone ? r.names : r.gpu.names;
    rows.push_back(n.row(n.name, n.self, n.gpu));
    rows.back().pass = n.pass == NameStats::Pass::kYes;
  }
  for (auto* rows : {&r.names, &r.gpu.names}) {
    std::sort(rows->begin(), rows->end(), [](const NameRow& a, const NameRow& b) {
      return a.total_ns != b.total_ns ? a.total_ns > b.total_ns : a.name < b.name;
    });
  }
}

void Aggregator::top_rows(Report& r) {
  std::sort(top_.begin(), top_.end(),
            [](const TopEntry& a, const TopEntry& b) { return slower(a, b); });
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
}

}  // namespace jitscope::report
