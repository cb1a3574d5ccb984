#include "critical_path.hpp"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

namespace jitscope::report {
namespace {

constexpr std::uint32_t kNone = UINT32_MAX;

std::string id_text(const tools::TraceId& id) {
  return id.is_string ? std::string(id.text) : std::to_string(id.number);
}

// (pid, id) as one key: a pid's text never holds a NUL.
std::string key_of(std::string_view pid, std::string_view id) {
  std::string k(pid);
  k.push_back('\0');
  k.append(id);
  return k;
}

struct Node {
  std::int64_t start = 0, end = 0;  // the unit's own slice
  std::uint32_t thread = kNone;
  const UnitRow* row = nullptr;
};

// Units with a slice, their threads, and the waits between them. 40 bytes
// a unit or so beside the report's rows; the index by (pid, compile id)
// only while the waits are matched, and only when there are waits.
struct Graph {
  std::vector<Node> nodes;
  std::vector<std::vector<std::uint32_t>> by_thread;           // nodes, by end
  std::vector<std::pair<std::uint32_t, std::uint32_t>> waits;  // (waiter, waited for), sorted
  std::uint64_t processes = 0;
};

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
    const std::string pid = u.pid ? u.pid->str() : std::string();
    pids.insert(pid);
    if (u.thread) {
      const auto [it, added] =
          threads.try_emplace(key_of(pid, u.thread->tid.str()), g.by_thread.size());
      if (added) g.by_thread.emplace_back();
      n.thread = it->second;
      g.by_thread[n.thread].push_back(static_cast<std::uint32_t>(g.nodes.size()));
    }
    g.nodes.push_back(n);
  }
  g.processes = pids.size();
  for (auto& list : g.by_thread) {
    std::sort(list.begin(), list.end(), [&](std::uint32_t a, std::uint32_t b) {
      return g.nodes[a].end != g.nodes[b].end ? g.nodes[a].end < g.nodes[b].end : a < b;
    });
  }
  if (waits.waits().empty()) return g;
  std::unordered_map<std::string, std::uint32_t> by_key;
  by_key.reserve(g.nodes.size());
  for (std::uint32_t i = 0; i < g.nodes.size(); ++i) {
    const UnitRow& u = *g.nodes[i].row;
    by_key.try_emplace(key_of(u.pid ? u.pid->str() : std::string(), u.compile_id), i);
  }
  for (const UnitWaits::Wait& w : waits.waits()) {
    const auto waiter = by_key.find(key_of(w.waiter_pid, w.waiter));
    const auto on = by_key.find(key_of(w.on_pid, w.on));
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

// The unit `at` last waited for: the latest-ending of those it named (ended
// by its end) and of its thread's units ended by its start; kNone if none.
std::pair<std::uint32_t, PathLink> predecessor(const Graph& g, std::uint32_t at,
                                               const std::vector<bool>& on_path) {
  const Node& n = g.nodes[at];
  std::uint32_t best = kNone;
  PathLink link = PathLink::kLast;
  const auto first = std::lower_bound(g.waits.begin(), g.waits.end(), std::make_pair(at, 0u));
  for (auto it = first; it != g.waits.end() && it->first == at; ++it) {
    const std::uint32_t w = it->second;
    if (on_path[w] || g.nodes[w].end > n.end) continue;
    if (best == kNone || g.nodes[w].end > g.nodes[best].end ||
        (g.nodes[w].end == g.nodes[best].end && w < best)) {
      best = w;
      link = PathLink::kWaitedFor;
    }
  }
  if (n.thread != kNone) {
    const auto& list = g.by_thread[n.thread];
    auto it = std::upper_bound(list.begin(), list.end(), n.start, [&](std::int64_t t, std::uint32_t i) {
      return t < g.nodes[i].end;
    });
    while (it != list.begin()) {
      const std::uint32_t i = *--it;
      if (on_path[i]) continue;
      if (best == kNone || g.nodes[i].end > g.nodes[best].end) {
        best = i;
        link = PathLink::kSameThread;
      }
      break;
    }
  }
  return {best, link};
}

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
  w.waiter_pid = ev.has_pid ? id_text(ev.pid) : std::string();
  std::int64_t on_pid = 0;
  w.on_pid = decoder.arg_integer(ev, "on_pid", &on_pid) && on_pid > 0 ? std::to_string(on_pid)
                                                                       : w.waiter_pid;
  waits_.push_back(std::move(w));
}

CriticalPath find_critical_path(const std::vector<UnitRow>& units, const UnitWaits& waits) {
  CriticalPath p;
  p.waits = waits.seen();
  p.waits_beyond = waits.beyond();
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
    if (g.nodes[i].end > g.nodes[last].end) last = i;
  }
  p.end_ns = g.nodes[last].end;
  p.wall_ns = sat_sub(p.end_ns, p.begin_ns);

  // Walk back from the last unit; steps come out latest first.
  std::vector<bool> on_path(g.nodes.size(), false);
  std::vector<CriticalPathStep> steps;
  PathLink next = PathLink::kLast;
  for (std::uint32_t at = last; at != kNone;) {
    on_path[at] = true;
    const Node& n = g.nodes[at];
    const auto [before, link] = predecessor(g, at, on_path);
    const std::int64_t prior_end = before == kNone ? p.begin_ns : g.nodes[before].end;
    CriticalPathStep s;
    s.pid = n.row->pid;
    s.compile_id = n.row->compile_id;
    s.name = n.row->name;
    s.thread = n.row->thread;
    s.start_ns = n.start;
    s.end_ns = n.end;
    s.on_path_ns = sat_sub(n.end, std::max(n.start, prior_end));
    s.wait_before_ns = std::max<std::int64_t>(0, sat_sub(n.start, prior_end));
    s.next = next;
    if (next == PathLink::kWaitedFor) ++p.steps_waited;
    p.path_ns = sat_add(p.path_ns, s.on_path_ns);
    p.waits_ns = sat_add(p.waits_ns, s.wait_before_ns);
    steps.push_back(std::move(s));
    next = link;
    at = before;
  }
  std::reverse(steps.begin(), steps.end());
  p.steps_total = steps.size();
  if (steps.size() > CriticalPath::kMaxSteps) {
    // The longest on the path, kept in time order.
    std::vector<std::uint32_t> order(steps.size());
    for (std::uint32_t i = 0; i < order.size(); ++i) order[i] = i;
    std::nth_element(order.begin(), order.begin() + CriticalPath::kMaxSteps, order.end(),
                     [&](std::uint32_t a, std::uint32_t b) {
                       return steps[a].on_path_ns != steps[b].on_path_ns
                                  ? steps[a].on_path_ns > steps[b].on_path_ns
                                  : a < b;
                     });
    order.resize(CriticalPath::kMaxSteps);
    std::sort(order.begin(), order.end());
    for (const std::uint32_t i : order) p.steps.push_back(std::move(steps[i]));
  } else {
    p.steps = std::move(steps);
  }
  return p;
}

}  // namespace jitscope::report
