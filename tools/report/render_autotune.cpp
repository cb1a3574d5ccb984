// The autotune section (autotune_sessions.hpp): its tables for the
// terminal, Markdown and CSV, and its JSON.
#include "base/json_writer.hpp"
#include "render.hpp"
#include "render_internal.hpp"

#include <set>

namespace jitscope::report {
namespace {

// Sessions and trials per session the tables show (the JSON has all kept).
constexpr std::size_t kTableSessions = 10;
constexpr std::size_t kTableTrials = 100;

std::string result_text(const std::optional<double>& v) {
  if (!v) return "";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", *v);
  return buf;
}

}  // namespace

void autotune_tables(const Report& r, bool human, std::vector<Table>& out) {
  if (r.autotune.empty()) return;  // most traces: no section at all (the JSON has [])
  const auto t = [human](std::int64_t ns) { return human ? human_ns(ns) : std::to_string(ns); };
  const auto opt_t = [&](const std::optional<std::int64_t>& v) {
    return v ? t(*v) : std::string(human ? "-" : "");
  };
  const auto col = [human](const char* name) {
    return human ? std::string(name) : std::string(name) + "_ns";
  };
  std::set<std::string> pids;
  for (const AutotuneRow& a : r.autotune) pids.insert(a.pid ? a.pid->str() : "");
  const bool with_pid = pids.size() > 1;
  Table sessions{"autotune",
                 "Autotuning per tuning session (jitscope::Autotune): compile and benchmark time "
                 "summed over its trials, its wall time, the time until the winner's last step "
                 "ended, and the time spent on trials that did not win",
                 {},
                 {},
                 {},
                 {},
                 "",
                 {}};
  if (with_pid) sessions.columns.push_back("pid");
  for (const std::string& c :
       {std::string("kernel"), std::string("trials"), col("compile"), col("benchmark"), col("wall"),
        col("to_winner"), col("not_won"), std::string("winner")}) {
    sessions.columns.push_back(c);
  }
  // Text: the pid, the kernel and the winner; the rest numbers.
  sessions.numeric.assign(sessions.columns.size(), true);
  sessions.numeric.front() = false;  // pid or kernel
  sessions.numeric[with_pid ? 1 : 0] = false;
  sessions.numeric.back() = false;
  for (const AutotuneRow& a : r.autotune) {
    Row row;
    if (with_pid) row.push_back(a.pid ? a.pid->str() : "");
    const std::string winner =
        a.winner ? "#" + std::to_string(*a.winner) +
                       (a.winner_config.empty() ? "" : " " + visible(a.winner_config))
                 : std::string(human ? "(none)" : "");
    for (std::string cell :
         {visible(a.kernel), std::to_string(a.trials), t(a.compile_ns), t(a.benchmark_ns),
          opt_t(a.wall_ns), opt_t(a.time_to_winner_ns), t(a.waste_ns), winner}) {
      row.push_back(std::move(cell));
    }
    sessions.rows.push_back(std::move(row));
  }
  if (r.autotune_events_beyond > 0) {
    sessions.notes.push_back(std::to_string(r.autotune_events_beyond) +
                             " events of tuning sessions beyond the first 100000 were not counted");
  }
  out.push_back(std::move(sessions));

  Table trials{"autotune_trials",
               "Trials of the " + std::to_string(std::min(r.autotune.size(), kTableSessions)) +
                   " longest tuning sessions (compile: its steps and the units named its compile)",
               {"kernel", "trial", "config", col("compile"), col("benchmark"), "result", "note"},
               {false, true, false, true, true, true, false},
               {},
               {},
               "",
               {}};
  for (std::size_t s = 0; s < r.autotune.size() && s < kTableSessions; ++s) {
    const AutotuneRow& a = r.autotune[s];
    for (std::size_t i = 0; i < a.trial_rows.size() && i < kTableTrials; ++i) {
      const AutotuneTrialRow& tr = a.trial_rows[i];
      std::string note = tr.winner ? "winner" : "";
      if (tr.failed) note += (note.empty() ? "" : "; ") + ("failed: " + visible(*tr.failed));
      if (tr.units_missing > 0) {
        note += (note.empty() ? "" : "; ") + std::to_string(tr.units_missing) +
                " unit(s) not in the trace";
      }
      trials.rows.push_back({visible(a.kernel), std::to_string(tr.trial), visible(tr.config),
                             t(tr.compile_ns), t(tr.benchmark_ns), result_text(tr.result), note});
    }
    if (a.trial_rows.size() > kTableTrials || a.trials_beyond > 0) {
      trials.notes.push_back(
          visible(a.kernel) + ": " + std::to_string(a.trials) + " trials, the first " +
          std::to_string(std::min(a.trial_rows.size(), kTableTrials)) +
          " shown (the JSON form has " + std::to_string(a.trial_rows.size()) + ")");
    }
  }
  out.push_back(std::move(trials));
}

void json_autotune(const Report& r, detail::JsonWriter& j) {
  j.key("autotune");
  j.begin_array();
  for (const AutotuneRow& a : r.autotune) {
    j.begin_object();
    j.key("pid");
    json_pid(j, a.pid);
    j.member("tune", a.tune);
    j.member("kernel", std::string_view(a.kernel));
    j.member("trials", a.trials);
    j.member("compile_ns", a.compile_ns);
    j.member("benchmark_ns", a.benchmark_ns);
    json_opt(j, "wall_ns", a.wall_ns);
    json_opt(j, "time_to_winner_ns", a.time_to_winner_ns);
    j.member("not_won_ns", a.waste_ns);
    j.key("winner");
    if (a.winner) {
      j.value(std::uint64_t{*a.winner});
    } else {
      j.null();
    }
    j.member("winner_config", std::string_view(a.winner_config));
    j.member("trials_not_kept", a.trials_beyond);
    j.key("trial_rows");
    j.begin_array();
    for (const AutotuneTrialRow& tr : a.trial_rows) {
      j.begin_object();
      j.member("trial", std::uint64_t{tr.trial});
      j.member("config", std::string_view(tr.config));
      j.member("compile_ns", tr.compile_ns);
      j.member("benchmark_ns", tr.benchmark_ns);
      j.key("result");
      if (tr.result) {
        j.value(*tr.result);
      } else {
        j.null();
      }
      j.key("failed");
      if (tr.failed) {
        j.value(std::string_view(*tr.failed));
      } else {
        j.null();
      }
      j.key("units");
      j.begin_array();
      for (const std::string& u : tr.units) j.value(std::string_view(u));
      j.end_array();
      j.member("units_missing", tr.units_missing);
      j.member("winner", tr.winner);
      j.end_object();
    }
    j.end_array();
    j.end_object();
  }
  j.end_array();
  j.member("autotune_events_not_kept", r.autotune_events_beyond);
}

}  // namespace jitscope::report
