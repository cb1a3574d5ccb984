// Aggregator: the time child processes explain in their parents' units. A
// parent's "spawn" slice (note_child_process: child_pid in its args) on a
// thread, and the child's compile units in the same (merged) trace, from
// its first unit's start to its last unit's end: that stretch, from the
// spawn on, is the child's. What of it falls in a gap of a parent unit's
// slice on the spawning thread (a stretch outside every span there) is
// time the unit spent on the child: in_children, no longer unexplained.
// Only a unit's UnitStats::kMaxGaps longest gaps are kept to be credited:
// a child running only in shorter ones leaves them unexplained.
#include "aggregator.hpp"
#include "aggregator_state.hpp"

#include <algorithm>
#include <charconv>
#include <unordered_map>

namespace jitscope::report {

void Aggregator::on_gap(const TimedSpan& s, const Gap& gap) {
  // Kept only where a child was spawned: a trace without spawns pays
  // nothing, and one with them a few gaps per unit of those threads.
  if (spawns_.empty() || s.unit == kNone || spawn_threads_.count(s.thread) == 0) return;
  std::vector<UnitStats::ThreadGap>& gaps = units_[s.unit].gaps;
  const UnitStats::ThreadGap g{gap.start, gap.ns, s.thread};
  if (gaps.size() < UnitStats::kMaxGaps) {
    gaps.push_back(g);
    return;
  }
  auto shortest = std::min_element(gaps.begin(), gaps.end(),
                                   [](const auto& a, const auto& b) { return a.ns < b.ns; });
  if (shortest->ns < g.ns) *shortest = g;
}

void Aggregator::spawn_note(std::uint32_t thread, const tools::DecodedEvent& ev,
                            tools::EventDecoder& decoder) {
  std::string_view raw;
  if (!decoder.arg(ev, "child_pid", &raw)) return;
  std::int64_t pid = 0;
  const auto [end, ec] = std::from_chars(raw.data(), raw.data() + raw.size(), pid);
  if (ec != std::errc() || end != raw.data() + raw.size()) return;  // not a number: no child
  spawns_.push_back({thread, ev.ts_ns, std::to_string(pid)});
  spawn_threads_.insert(thread);
}

void Aggregator::credit_children() {
  if (spawns_.empty()) return;
  // Each process's units, from the first start to the last end.
  std::unordered_map<std::string, std::pair<std::int64_t, std::int64_t>> extent;
  for (const UnitStats& u : units_) {
    if (!u.in_trace || !u.has_pid) continue;
    auto [it, fresh] = extent.try_emplace(u.pid.str(), u.start, u.end);
    if (!fresh) {
      it->second.first = std::min(it->second.first, u.start);
      it->second.second = std::max(it->second.second, u.end);
    }
  }
  // Per spawning thread, the children's stretches, merged where they overlap.
  std::unordered_map<std::uint32_t, std::vector<std::pair<std::int64_t, std::int64_t>>> ran;
  for (const SpawnNote& n : spawns_) {
    const auto it = extent.find(n.child_pid);
    if (it == extent.end()) continue;  // a child without units in this trace
    const std::int64_t from = std::max(n.ts, it->second.first);
    if (from < it->second.second) ran[n.thread].emplace_back(from, it->second.second);
  }
  for (auto& [thread, list] : ran) {
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
  if (ran.empty()) return;
  for (UnitStats& u : units_) {
    std::int64_t covered = 0;
    Gap longest;  // what the children left of its kept gaps
    for (const UnitStats::ThreadGap& g : u.gaps) {
      const auto it = ran.find(g.thread);
      std::int64_t at = g.start;
      const std::int64_t end = g.start + g.ns;
      if (it != ran.end()) {
        for (const auto& [from, to] : it->second) {
          if (to <= at) continue;
          if (from >= end) break;
          if (from > at && from - at > longest.ns) longest = {at, from - at};
          covered += std::min(to, end) - std::max(from, at);
          at = std::min(to, end);
        }
      }
      if (end - at > longest.ns) longest = {at, end - at};
    }
    if (covered == 0) continue;
    u.in_children = covered;
    u.gap = longest;
  }
}

}  // namespace jitscope::report
