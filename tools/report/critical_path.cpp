#include "critical_path.hpp"

#include "aggregator_state.hpp"  // kNone, owned

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

namespace jitscope::report {
namespace {

struct Node {
  std::int64_t start = 0, end = 0;  // the unit's own slice
  std::uint32_t thread = kNone;
  const UnitRow* row = nullptr;
};

// Units with a slice, their threads, and the waits between them. About 50
// bytes a unit beside the report's rows; the index by (pid, compile id)
// only while the waits are matched, and only when there are waits.
struct Graph {
  std::vector<Node> nodes;
  std::vector<std::vector<std::uint32_t>> by_thread;           // nodes, by ends_before
  std::vector<std::uint32_t> position;                         // a node's index in its thread's
  std::vector<std::pair<std::uint32_t, std::uint32_t>> waits;  // (waiter, waited for), sorted
  std::uint64_t processes = 0;
};

// The order the walk prefers units in: by end, and of units that end
// together the outermost (the earliest start), then the first row. A unit
// and the last unit nested in it end together: the walk takes the outer
// one, whose thread was busy all along.
bool ends_before(const Graph& g, std::uint32_t a, std::uint32_t b) {
  const Node& x = g.nodes[a];
  const Node& y = g.nodes[b];
  if (x.end != y.end) return x.end < y.end;
  if (x.start != y.start) return x.start > y.start;
  return a > b;
}

Graph build(const std::vector<UnitRow>& units, const UnitWaits& waits, CriticalPath& out) {
  Graph g;
  std::unordered_map<std::string, std::uint32_t> threads;
  std::unordered_set<std::string> pids;
  for (const UnitRow& u : units) {
    if (!u.in_trace) continue;
    Node n;
    n.end = u.compile_end_ns;
    n.start = sat_sub(u.compile_end_ns, u.wall_ns);
    n.row = &u;
    const std::string pid = pid_text(u.pid);
    pids.insert(pid);
    if (u.thread) {
      const auto [it, added] =
          threads.try_emplace(key_in_process(pid, u.thread->tid.str()), g.by_thread.size());
      if (added) g.by_thread.emplace_back();
      n.thread = it->second;
      g.by_thread[n.thread].push_back(static_cast<std::uint32_t>(g.nodes.size()));
    }
    g.nodes.push_back(n);
  }
  g.processes = pids.size();
  g.position.assign(g.nodes.size(), kNone);
  for (auto& list : g.by_thread) {
    std::sort(list.begin(), list.end(),
              [&](std::uint32_t a, std::uint32_t b) { return ends_before(g, a, b); });
    for (std::uint32_t i = 0; i < list.size(); ++i) g.position[list[i]] = i;
  }
  if (waits.waits().empty()) return g;
  std::unordered_map<std::string, std::uint32_t> by_key;
  by_key.reserve(g.nodes.size());
  for (std::uint32_t i = 0; i < g.nodes.size(); ++i) {
    const UnitRow& u = *g.nodes[i].row;
    by_key.try_emplace(key_in_process(pid_text(u.pid), u.compile_id), i);
  }
  for (const UnitWaits::Wait& w : waits.waits()) {
    const auto waiter = by_key.find(key_in_process(w.waiter_pid, w.waiter));
    const auto on = by_key.find(key_in_process(w.on_pid, w.on));
    if (waiter == by_key.end() || on == by_key.end()) {
      ++out.waits_unmatched;
      continue;
    }
    if (waiter->second != on->second) g.waits.emplace_back(waiter->second, on->second);
  }
  std::sort(g.waits.begin(), g.waits.end());
  return g;
}

// Time spent inside units, per thread the union of its units' slices
// (nested units count once), summed over threads.
std::int64_t work(const Graph& g) {
  std::int64_t total = 0;
  std::vector<std::pair<std::int64_t, std::int64_t>> spans;
  for (const auto& list : g.by_thread) {
    spans.clear();
    for (const std::uint32_t i : list) spans.emplace_back(g.nodes[i].start, g.nodes[i].end);
    std::sort(spans.begin(), spans.end());
    std::int64_t covered_to = INT64_MIN;
    for (const auto& [start, end] : spans) {
      const std::int64_t from = std::max(start, covered_to);
      if (end > from) total = sat_add(total, sat_sub(end, from));
      covered_to = std::max(covered_to, end);
    }
  }
  return total;
}

// The walk's state: which units are on the path, and per thread the
// nearest unit at or before a position that is not (a union-find over
// positions, so that units already on the path are stepped over once, not
// on every step: zero-length units that end together would make that
// quadratic).
class Walk {
 public:
  explicit Walk(const Graph& g)
      : g_(g), on_path_(g.nodes.size(), false), left_(g.by_thread.size()) {
    for (std::size_t t = 0; t < g.by_thread.size(); ++t) {
      left_[t].resize(g.by_thread[t].size() + 1);
      for (std::uint32_t k = 0; k < left_[t].size(); ++k) left_[t][k] = k;
    }
  }

  void visit(std::uint32_t node) {
    on_path_[node] = true;
    const std::uint32_t t = g_.nodes[node].thread;
    if (t != kNone) left_[t][g_.position[node] + 1] = g_.position[node];  // to its left
  }

  // The unit `at` last waited for: the latest (ends_before) of those it
  // named that ended by its end, and the latest of its thread's units that
  // ended by its start if that one ended later still; kNone if none.
  std::pair<std::uint32_t, PathLink> predecessor(std::uint32_t at) {
    const Node& n = g_.nodes[at];
    std::uint32_t best = kNone;
    PathLink link = PathLink::kLast;
    const auto first = std::lower_bound(g_.waits.begin(), g_.waits.end(), std::make_pair(at, 0u));
    for (auto it = first; it != g_.waits.end() && it->first == at; ++it) {
      const std::uint32_t w = it->second;
      if (on_path_[w] || g_.nodes[w].end > n.end) continue;
      if (best == kNone || ends_before(g_, best, w)) best = w;
    }
    if (best != kNone) link = PathLink::kWaitedFor;
    if (n.thread != kNone) {
      const auto& list = g_.by_thread[n.thread];
      // Positions [0, k) hold the units that ended by its start.
      const auto k = static_cast<std::uint32_t>(
          std::upper_bound(list.begin(), list.end(), n.start,
                           [&](std::int64_t t, std::uint32_t i) { return t < g_.nodes[i].end; }) -
          list.begin());
      const std::uint32_t free = find(n.thread, k);  // 1 + a position, or 0: none
      if (free > 0) {
        const std::uint32_t i = list[free - 1];
        if (best == kNone || g_.nodes[i].end > g_.nodes[best].end) {
          best = i;
          link = PathLink::kSameThread;
        }
      }
    }
    return {best, link};
  }

 private:
  // The largest k' <= k whose position k' - 1 is off the path (0: none).
  std::uint32_t find(std::uint32_t t, std::uint32_t k) {
    std::vector<std::uint32_t>& p = left_[t];
    std::uint32_t root = k;
    while (p[root] != root) root = p[root];
    while (p[k] != root) {
      const std::uint32_t next = p[k];
      p[k] = root;
      k = next;
    }
    return root;
  }

  const Graph& g_;
  std::vector<bool> on_path_;
  std::vector<std::vector<std::uint32_t>> left_;  // per thread, 1 + position
};

// A step as the walk finds it; made a CriticalPathStep only when kept.
struct Found {
  std::uint32_t node;
  PathLink next;
  std::int64_t on_path, wait_before;
};

}  // namespace

const char* path_link_name(PathLink l) noexcept {
  switch (l) {
    case PathLink::kWaitedFor: return "waited_for";
    case PathLink::kSameThread: return "same_thread";
    case PathLink::kLast: return "last";
  }
  return "last";
}

void UnitWaits::add(const tools::DecodedEvent& ev, tools::EventDecoder& decoder) {
  Wait w;
  if (!decoder.arg_string(ev, "unit", &w.waiter) || !decoder.arg_string(ev, "on", &w.on)) return;
  ++seen_;
  if (waits_.size() >= CriticalPath::kMaxWaits) {
    ++beyond_;
    return;
  }
  w.waiter_pid = ev.has_pid ? owned(true, ev.pid).str() : std::string();
  if (w.waiter.size() > kMaxIdBytes || w.on.size() > kMaxIdBytes ||
      w.waiter_pid.size() > kMaxIdBytes) {
    ++unfollowable_;  // no compile id or pid the SDK writes is so long
    return;
  }
  std::string_view raw;
  if (decoder.arg(ev, "on_pid", &raw)) {
    std::int64_t on_pid = 0;
    if (!decoder.arg_integer(ev, "on_pid", &on_pid) || on_pid <= 0) {
      ++unfollowable_;  // the SDK writes a positive number: this names no unit
      return;
    }
    w.on_pid = std::to_string(on_pid);
  } else {
    w.on_pid = w.waiter_pid;
  }
  waits_.push_back(std::move(w));
}

CriticalPath find_critical_path(const std::vector<UnitRow>& units, const UnitWaits& waits) {
  CriticalPath p;
  p.waits = waits.seen();
  p.waits_beyond = waits.beyond();
  p.waits_unmatched = waits.unfollowable();
  const Graph g = build(units, waits, p);
  if (g.nodes.empty()) return p;
  p.units = g.nodes.size();
  p.threads = g.by_thread.size();
  p.processes = g.processes;
  p.work_ns = work(g);
  std::uint32_t last = 0;
  p.begin_ns = g.nodes[0].start;
  for (std::uint32_t i = 0; i < g.nodes.size(); ++i) {
    p.begin_ns = std::min(p.begin_ns, g.nodes[i].start);
    if (ends_before(g, last, i)) last = i;
  }
  p.end_ns = g.nodes[last].end;
  p.wall_ns = sat_sub(p.end_ns, p.begin_ns);

  // Walk back from the last unit; steps come out latest first.
  Walk walk(g);
  std::vector<Found> found;
  PathLink next = PathLink::kLast;
  for (std::uint32_t at = last; at != kNone;) {
    walk.visit(at);
    const Node& n = g.nodes[at];
    const auto [before, link] = walk.predecessor(at);
    const std::int64_t prior_end = before == kNone ? p.begin_ns : g.nodes[before].end;
    Found f{at, next, sat_sub(n.end, std::max(n.start, prior_end)),
            std::max<std::int64_t>(0, sat_sub(n.start, prior_end))};
    if (next == PathLink::kWaitedFor) ++p.steps_waited;
    p.path_ns = sat_add(p.path_ns, f.on_path);
    p.waits_ns = sat_add(p.waits_ns, f.wait_before);
    found.push_back(f);
    next = link;
    at = before;
  }
  std::reverse(found.begin(), found.end());
  p.steps_total = found.size();
  if (found.size() > CriticalPath::kMaxSteps) {
    // The longest on the path, kept in time order.
    const auto kept = found.begin() + CriticalPath::kMaxSteps;
    std::vector<std::uint32_t> order(found.size());
    for (std::uint32_t i = 0; i < order.size(); ++i) order[i] = i;
    std::nth_element(
        order.begin(), order.begin() + CriticalPath::kMaxSteps, order.end(),
        [&](std::uint32_t a, std::uint32_t b) {
          return found[a].on_path != found[b].on_path ? found[a].on_path > found[b].on_path : a < b;
        });
    order.resize(CriticalPath::kMaxSteps);
    std::sort(order.begin(), order.end());
    for (std::uint32_t i = 0; i < order.size(); ++i) found[i] = found[order[i]];
    found.erase(kept, found.end());
  }
  p.steps.reserve(found.size());
  for (const Found& f : found) {
    const UnitRow& u = *g.nodes[f.node].row;
    CriticalPathStep s;
    s.pid = u.pid;
    s.compile_id = u.compile_id;
    s.name = u.name;
    s.unit_key = u.unit_key;
    s.thread = u.thread;
    s.start_ns = g.nodes[f.node].start;
    s.end_ns = g.nodes[f.node].end;
    s.on_path_ns = f.on_path;
    s.wait_before_ns = f.wait_before;
    s.next = f.next;
    p.steps.push_back(std::move(s));
  }
  return p;
}

}  // namespace jitscope::report
