// Aggregator: the time child processes explain in their parents' units. A
// parent's "spawn" slice (note_child_process: child_pid in its args) on a
// thread, inside a unit's slice there, and the child's compile units in
// the same (merged) trace: what those units ran, from the spawn on, inside
// a gap of that unit on that thread (a stretch outside every span there)
// is time the unit spent on its child: in_children, no longer unexplained.
// Only a unit's UnitStats::kMaxGaps longest gaps on spawning threads are
// kept to be credited: a child running only in shorter ones leaves them
// unexplained. A child's pid as its parent wrote it must be its pid in the
// trace: jitscope-merge renumbers a pid two inputs share, not the args
// that name it.
#include "aggregator.hpp"
#include "aggregator_state.hpp"

#include <algorithm>
#include <unordered_map>

namespace jitscope::report {
namespace {

using Stretches = std::vector<std::pair<std::int64_t, std::int64_t>>;

// Sorted, overlapping stretches joined.
void join(Stretches& list) {
  if (list.empty()) return;
  std::sort(list.begin(), list.end());
  std::size_t w = 0;
  for (std::size_t i = 1; i < list.size(); ++i) {
    if (list[i].first <= list[w].second) {
      list[w].second = std::max(list[w].second, list[i].second);
    } else {
      list[++w] = list[i];
    }
  }
  list.resize(w + 1);
}

}  // namespace

void Aggregator::on_gap(const TimedSpan& s, const Gap& gap) {
  if (spawns_.empty() || s.unit == kNone) return;
  UnitStats& u = units_[s.unit];
  const auto unkept = [&u](const Gap& g) {
    if (g.ns > u.unkept_gap.ns) u.unkept_gap = g;
  };
  // Kept only where a child was spawned: a trace without spawns pays
  // nothing, and one with them a few gaps per unit of those threads.
  if (spawn_threads_.count(s.thread) == 0) return unkept(gap);
  std::vector<UnitStats::ThreadGap>& gaps = u.gaps;
  const UnitStats::ThreadGap g{gap.start, gap.ns, s.thread};
  if (gaps.size() < UnitStats::kMaxGaps) {
    gaps.push_back(g);
    return;
  }
  auto shortest = std::min_element(gaps.begin(), gaps.end(),
                                   [](const auto& a, const auto& b) { return a.ns < b.ns; });
  if (shortest->ns >= g.ns) return unkept(gap);
  unkept({shortest->start, shortest->ns});
  *shortest = g;
}

void Aggregator::spawn_note(std::uint32_t thread, const tools::DecodedEvent& ev,
                            tools::EventDecoder& decoder) {
  std::int64_t pid = 0;
  if (!decoder.arg_integer(ev, "child_pid", &pid, tools::EventDecoder::Quoted::kToo)) {
    return;  // not a number: no child
  }
  if (spawns_.size() >= kMaxSpawns) {
    ++spawns_beyond_;
    return;
  }
  spawns_.push_back({thread, ev.ts_ns, std::to_string(pid)});
  spawn_threads_.insert(thread);
}

void Aggregator::credit_children() {
  if (spawns_.empty()) return;
  // Each process's compile units, as joined stretches (a long-lived child
  // is not busy between its units).
  std::unordered_map<std::string, Stretches> busy;
  for (const UnitStats& u : units_) {
    if (u.in_trace && u.has_pid && u.start < u.end) busy[u.pid.str()].emplace_back(u.start, u.end);
  }
  for (auto& [pid, list] : busy) join(list);
  // Per spawning thread, its spawns by time.
  std::unordered_map<std::uint32_t, std::vector<const SpawnNote*>> by_thread;
  for (const SpawnNote& n : spawns_) by_thread[n.thread].push_back(&n);
  for (auto& [thread, notes] : by_thread) {
    std::sort(notes.begin(), notes.end(),
              [](const SpawnNote* a, const SpawnNote* b) { return a->ts < b->ts; });
  }
  // Per unit, what its children ran on each thread it has gaps on, found
  // once per thread (a unit keeps up to kMaxGaps gaps, on a few threads).
  std::vector<std::pair<std::uint32_t, Stretches>> ran_on;
  for (UnitStats& u : units_) {
    if (u.gaps.empty()) continue;
    std::int64_t covered = 0;
    Gap longest = u.unkept_gap;  // what the children left, with the gaps not kept
    ran_on.clear();
    for (const UnitStats::ThreadGap& g : u.gaps) {
      auto found = std::find_if(ran_on.begin(), ran_on.end(),
                                [&g](const auto& r) { return r.first == g.thread; });
      if (found == ran_on.end()) {
        // This unit's spawns on the gap's thread (the unit's slices span
        // [start, end]): their children's units from each spawn on.
        Stretches& ran = ran_on.emplace_back(g.thread, Stretches{}).second;
        found = ran_on.end() - 1;
        const auto notes = by_thread.find(g.thread);
        if (notes != by_thread.end()) {
          const auto& list = notes->second;
          auto it = std::lower_bound(list.begin(), list.end(), u.start,
                                     [](const SpawnNote* n, std::int64_t t) { return n->ts < t; });
          for (; it != list.end() && (*it)->ts <= u.end; ++it) {
            const auto child = busy.find((*it)->child_pid);
            if (child == busy.end()) continue;  // a child without units in this trace
            for (const auto& [from, to] : child->second) {
              const std::int64_t start = std::max(from, (*it)->ts);
              if (start < to) ran.emplace_back(start, to);
            }
          }
          join(ran);
        }
      }
      const Stretches& ran = found->second;
      std::int64_t at = g.start;
      const std::int64_t end = g.start + g.ns;
      for (const auto& [from, to] : ran) {
        if (to <= at) continue;
        if (from >= end) break;
        if (from > at && from - at > longest.ns) longest = {at, from - at};
        covered += std::min(to, end) - std::max(from, at);
        at = std::min(to, end);
      }
      if (end - at > longest.ns) longest = {at, end - at};
    }
    std::vector<UnitStats::ThreadGap>().swap(u.gaps);
    if (covered == 0) continue;
    // At most its self time: self subtracts overlapping (unnested) spans
    // twice, where gaps are measured against their union.
    u.in_children = std::min(covered, u.self);
    u.gap = longest;
  }
}

}  // namespace jitscope::report
