// The critical path section (critical_path.hpp): its table for the
// terminal, Markdown and CSV, and its JSON.
#include "base/json_writer.hpp"
#include "render.hpp"
#include "render_internal.hpp"

#include <algorithm>

namespace jitscope::report {
namespace {

// Steps the table shows (the JSON has all kept): the longest on the path.
constexpr std::size_t kTableSteps = 30;

const char* link_text(PathLink l) {
  switch (l) {
    case PathLink::kWaitedFor: return "the next waited for it";
    case PathLink::kSameThread: return "the next ran after it on its thread";
    case PathLink::kLast: return "ended last";
  }
  return "";
}

// "1 unit", "3 units".
std::string count_of(std::uint64_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

std::string thread_text(const std::optional<UnitLane>& t) {
  if (!t) return "";
  return t->thread.empty() ? t->tid.str() : visible(t->thread) + " (" + t->tid.str() + ")";
}

}  // namespace

// The totals, as one line: what the text's note and the HTML's say.
std::string critical_path_summary(const CriticalPath& p) {
  std::string s = "wall " + human_ns(p.wall_ns) +
                  " (the units' first start to the last end): " + "units on the path " +
                  human_ns(p.path_ns) + " (" + percent(p.path_ns, p.wall_ns) +
                  "), waits between them " + human_ns(p.waits_ns) + " (" +
                  percent(p.waits_ns, p.wall_ns) + "); work in units " + human_ns(p.work_ns) +
                  " on " + count_of(p.threads, "thread", "threads") + " in " +
                  count_of(p.processes, "process", "processes");
  if (p.wall_ns > 0) {
    s += " (" + fixed(static_cast<double>(p.work_ns) / static_cast<double>(p.wall_ns), 2) +
         "× the wall)";
  }
  return s;
}

void critical_path_tables(const Report& r, bool human, std::vector<Table>& out) {
  const CriticalPath& p = r.critical_path;
  const auto t = [human](std::int64_t ns) { return human ? human_ns(ns) : std::to_string(ns); };
  const auto col = [human](const char* name) {
    return human ? std::string(name) : std::string(name) + "_ns";
  };
  Table table{"critical_path",
              "Critical path through the compile units: what the wall time waited for "
              "(docs/critical-path.md)",
              {},
              {},
              {},
              {},
              "",
              {}};
  if (!p.present()) {
    table.empty =
        "no compile unit with a slice in the trace (a slice with cat \"compile_unit\" and "
        "args.compile_id): no path";
    out.push_back(std::move(table));
    return;
  }
  // The unit's key where units have one: a kernel's units in two processes
  // have names of their own, and the same key.
  const bool with_key = std::any_of(p.steps.begin(), p.steps.end(),
                                    [](const CriticalPathStep& s) { return !s.unit_key.empty(); });
  if (r.multi_process_units) table.columns.push_back("pid");
  table.columns.push_back("compile_id");
  table.columns.push_back("unit");
  if (with_key) table.columns.push_back("unit_key");
  for (const std::string& c : {std::string("thread"), col("start"), col("on_path"),
                               std::string("of_wall"), col("wait_before"), std::string("next")}) {
    table.columns.push_back(c);
  }
  table.numeric.assign(table.columns.size(), false);
  const std::size_t first_number = table.columns.size() - 5;
  for (std::size_t i = first_number; i < first_number + 4; ++i) table.numeric[i] = true;
  table.notes.push_back(critical_path_summary(p));
  table.notes.push_back(
      count_of(p.steps_total, "unit", "units") + " on the path, " + std::to_string(p.steps_waited) +
      " of them reached by a wait (waits_for); start is from the units' " + "first start");
  if (p.waits_unmatched > 0) {
    table.notes.push_back(std::to_string(p.waits_unmatched) + " of " + std::to_string(p.waits) +
                          " waits were not followed: the unit waited for, or the one waiting, "
                          "has no slice in the trace");
  }
  if (p.waits_beyond > 0) {
    table.notes.push_back(std::to_string(p.waits_beyond) + " waits beyond the first " +
                          std::to_string(CriticalPath::kMaxWaits) + " were not followed");
  }
  // The longest steps, in time order.
  std::vector<std::size_t> shown(p.steps.size());
  for (std::size_t i = 0; i < shown.size(); ++i) shown[i] = i;
  if (shown.size() > kTableSteps) {
    std::stable_sort(shown.begin(), shown.end(), [&](std::size_t a, std::size_t b) {
      return p.steps[a].on_path_ns > p.steps[b].on_path_ns;
    });
    shown.resize(kTableSteps);
    std::sort(shown.begin(), shown.end());
  }
  if (shown.size() < p.steps_total) {
    table.notes.push_back("the " + std::to_string(shown.size()) +
                          " longest on the path shown, in time order");
  }
  for (const std::size_t i : shown) {
    const CriticalPathStep& s = p.steps[i];
    Row row;
    if (r.multi_process_units) row.push_back(s.pid ? s.pid->str() : "");
    row.push_back(s.compile_id);
    row.push_back(visible(s.name));
    if (with_key) row.push_back(visible(s.unit_key));
    for (std::string cell : {thread_text(s.thread), t(sat_sub(s.start_ns, p.begin_ns)),
                             t(s.on_path_ns), percent(s.on_path_ns, p.wall_ns), t(s.wait_before_ns),
                             std::string(human ? link_text(s.next) : path_link_name(s.next))}) {
      row.push_back(std::move(cell));
    }
    table.rows.push_back(std::move(row));
  }
  out.push_back(std::move(table));
}

void json_critical_path(const Report& r, detail::JsonWriter& j) {
  const CriticalPath& p = r.critical_path;
  j.key("critical_path");
  if (!p.present()) {
    j.value(nullptr);
    return;
  }
  j.begin_object();
  j.member("units", p.units);
  j.member("threads", p.threads);
  j.member("processes", p.processes);
  j.member("begin_ns", p.begin_ns);
  j.member("end_ns", p.end_ns);
  j.member("wall_ns", p.wall_ns);
  j.member("path_ns", p.path_ns);
  j.member("waits_ns", p.waits_ns);
  j.member("work_ns", p.work_ns);
  j.member("steps_total", p.steps_total);
  j.member("steps_waited", p.steps_waited);
  j.member("waits", p.waits);
  j.member("waits_unmatched", p.waits_unmatched);
  j.member("waits_beyond", p.waits_beyond);
  j.key("steps");  // by time; the longest kMaxSteps when there are more
  j.begin_array();
  for (const CriticalPathStep& s : p.steps) {
    j.begin_object();
    j.key("pid");
    json_pid(j, s.pid);
    j.member("compile_id", std::string_view(s.compile_id));
    j.member("name", std::string_view(s.name));
    j.member("unit_key", std::string_view(s.unit_key));
    j.key("tid");
    if (s.thread) {
      json_id(j, s.thread->tid);
    } else {
      j.value(nullptr);
    }
    j.member("thread", std::string_view(s.thread ? s.thread->thread : std::string()));
    j.member("start_ns", s.start_ns);
    j.member("end_ns", s.end_ns);
    j.member("on_path_ns", s.on_path_ns);
    j.member("wait_before_ns", s.wait_before_ns);
    j.member("next", std::string_view(path_link_name(s.next)));
    j.end_object();
  }
  j.end_array();
  j.end_object();
}

}  // namespace jitscope::report
