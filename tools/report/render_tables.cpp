// A Report as Tables: the rows and columns of each section, in the wording
// and units of the terminal and Markdown (human) or of CSV (raw ns). Separate
// from the writers so that what each table holds is decided in one place
// for the three formats that lay tables out.
#include "render_internal.hpp"

#include <algorithm>

namespace jitscope::report {
namespace {

std::string id_text(const Id& id) { return id.str(); }

std::string thread_label(const SpanRow& s) {
  std::string where = id_text(s.pid) + "/" + id_text(s.tid);
  return s.thread.empty() ? where : s.thread + " (" + where + ")";
}

// The units with the most wall time outside every span on their threads
// (their unit slices' self time: no phase, pass or other span covers it,
// less what child processes they spawned ran then), with where their
// longest such stretch sits: a child process nobody traced, a lock, work
// nobody instrumented. Only when a unit has any.
template <typename TimeText>
void unexplained_table(const Report& r, const TimeText& t, bool human, std::vector<Table>& out) {
  constexpr std::size_t kRows = 10;
  std::vector<const UnitRow*> rows;
  bool children = false;
  for (const UnitRow& u : r.units) {
    if (u.in_trace && u.unexplained_ns() > 0) rows.push_back(&u);
    children = children || u.in_children_ns > 0;
  }
  if (rows.empty()) return;
  const auto more = [](const UnitRow* a, const UnitRow* b) {
    return a->unexplained_ns() != b->unexplained_ns() ? a->unexplained_ns() > b->unexplained_ns()
                                                      : a->compile_id < b->compile_id;
  };
  const std::size_t n = std::min(rows.size(), kRows);
  std::partial_sort(rows.begin(), rows.begin() + static_cast<std::ptrdiff_t>(n), rows.end(), more);
  const auto col = [human](const char* name) {
    return human ? std::string(name) : std::string(name) + "_ns";
  };
  Table un{"unexplained",
           "Unexplained time: the units' wall time outside every span on their threads, most "
           "first, with their longest such gap (at: from the unit's start)",
           {"compile_id", "unit", col("wall"), col("unexplained"), "share", col("longest_gap"),
            col("gap_at")},
           {false, false, true, true, true, true, true},
           {},
           {},
           "",
           {}};
  if (children) {  // a merged trace with child processes in it
    un.columns.insert(un.columns.begin() + 4, col("in_children"));
    un.numeric.insert(un.numeric.begin() + 4, true);
    un.notes.push_back(
        "in_children: time the child processes a unit spawned ran in its compile units, "
        "inside its gaps (explained by them)");
  }
  if (r.multi_process_units) {  // compile ids restart in every process
    un.columns.insert(un.columns.begin(), "pid");
    un.numeric.insert(un.numeric.begin(), true);
  }
  if (rows.size() > n) {
    un.notes.push_back("the " + std::to_string(n) + " of " + std::to_string(rows.size()) +
                       " units with the most");
  }
  for (std::size_t i = 0; i < n; ++i) {
    const UnitRow& u = *rows[i];
    Row row{u.compile_id,
            u.name,
            t(u.wall_ns),
            t(u.unexplained_ns()),
            percent(u.unexplained_ns(), u.wall_ns),
            u.gap_ns > 0 ? t(u.gap_ns) : std::string(),
            u.gap_ns > 0 ? t(u.gap_start_ns - u.start_ns) : std::string()};
    if (children) row.insert(row.begin() + 4, u.in_children_ns > 0 ? t(u.in_children_ns) : "");
    if (r.multi_process_units) row.insert(row.begin(), pid_text(u.pid));
    un.rows.push_back(std::move(row));
  }
  out.push_back(std::move(un));
}

}  // namespace

// Passes by IR growth (the adapters' Options::ir_size), the one that grew
// the IR most first.
template <class TimeText, class Column>
void ir_growth_table(const Report& r, const TimeText& t, const Column& col,
                     std::vector<Table>& out) {
  Table tb{"ir_growth",
           "IR growth per pass (the adapters' ir_size: LLVM instructions, MLIR operations), "
           "summed over its runs; largest: the run that grew it most",
           {"pass", "runs", "before", "after", "growth", "growth_pct", "largest", "largest_from",
            col("time")},
           {false, true, true, true, true, true, true, true, true},
           {},
           {},
           "",
           {}};
  for (const IrGrowthRow& g : r.ir_growth) {
    tb.rows.push_back({g.pass, std::to_string(g.runs), std::to_string(g.before),
                       std::to_string(g.after), std::to_string(g.growth()),
                       percent(g.growth(), g.before), std::to_string(g.largest),
                       std::to_string(g.largest_before), t(g.total_ns)});
  }
  out.push_back(std::move(tb));
}

std::vector<Table> build(const Report& r, const Sections& sec, bool human) {
  auto t = [human](std::int64_t ns) { return human ? human_ns(ns) : std::to_string(ns); };
  auto col = [&](const char* name) {
    return human ? std::string(name) : std::string(name) + "_ns";
  };
  auto opt_t = [t, human](const std::optional<std::int64_t>& v) {
    return v ? t(*v) : std::string(human ? "-" : "");
  };
  std::vector<Table> out;

  if (sec.header) {
    const Header& h = r.header;
    Table tb{"header", "jitscope-report", {"field", "value"}, {false, false}, {}, {}, {}, {}};
    auto row = [&](std::string k, std::string v) {
      tb.rows.push_back({std::move(k), std::move(v)});
    };
    row("input", h.input);
    row("bytes", std::to_string(h.bytes));
    std::string counts;
    for (const auto& [ph, n] : h.phase_counts) {
      counts += (counts.empty() ? "" : ", ") + (ph.empty() ? std::string("(no ph)") : ph) + " " +
                std::to_string(n);
    }
    row("events", human && !counts.empty() ? std::to_string(h.events) + " (" + counts + ")"
                                           : std::to_string(h.events));
    row("spans", std::to_string(h.spans));
    if (h.has_time) {
      if (human) {
        row("time span", human_ns(sat_sub(h.end_ns, h.begin_ns)) + " (ts " + us_text(h.begin_ns) +
                             " to " + us_text(h.end_ns) + " µs)");
      } else {
        row("begin_ns", std::to_string(h.begin_ns));
        row("end_ns", std::to_string(h.end_ns));
        row("duration_ns", std::to_string(sat_sub(h.end_ns, h.begin_ns)));
      }
    }
    row("processes", std::to_string(h.processes));
    row("threads", std::to_string(h.threads));
    row("unterminated",
        h.unterminated
            ? (human ? "yes: the array has no closing ']' (the writer did not finish)" : "true")
            : (human ? "no" : "false"));
    if (h.session) {
      const SessionInfo& s = *h.session;
      row("jitscope", s.version);
      row("clock", s.clock);
      std::string cupti = s.cupti_state;
      if (human && !s.cupti_timestamps.empty())
        cupti += " (timestamps: " + s.cupti_timestamps + ")";
      if (human && !s.cupti_reason.empty()) cupti += " (" + s.cupti_reason + ")";
      row("cupti", cupti);
      if (!human && !s.cupti_reason.empty()) row("cupti_reason", s.cupti_reason);
      if (h.sessions > 1) {
        // A merged trace: the rows above are its first process's.
        std::string states;
        for (const auto& [state, n] : h.cupti_states) {
          if (!states.empty()) states += ", ";
          states += state + " " + std::to_string(n);
        }
        row(human ? "sessions" : "jitscope_sessions",
            human
                ? std::to_string(h.sessions) + " processes (jitscope and cupti above: the first's)"
                : std::to_string(h.sessions));
        row(human ? "cupti by process" : "cupti_states", states);
      }
    }
    if (h.snapshot) {
      const SnapshotInfo& snap = *h.snapshot;
      row(human ? "snapshot of" : "snapshot_trigger", snap.trigger);
      if (!snap.compile_id.empty()) {
        const bool found = !r.units.empty() && r.units.front().compile_id == snap.compile_id;
        std::string unit = "[" + snap.compile_id + "]";
        if (found) {
          unit += " " + r.units.front().name;
          if (human) unit += " (first in the units table)";
        } else if (human) {
          unit += " (not in the window)";
        }
        row("snapshot_unit", unit);
      }
      if (snap.spans_open) row("spans_open", std::to_string(*snap.spans_open));
      if (snap.bytes_dropped_from_window) {
        row("bytes_dropped_from_window", std::to_string(*snap.bytes_dropped_from_window));
      }
    }
    if (h.events_dropped) row("events_dropped", std::to_string(*h.events_dropped));
    if (h.compile_records_dropped) {
      row("compile_records_dropped", std::to_string(*h.compile_records_dropped));
    }
    if (r.has_metrics) {
      row("metrics_units",
          std::to_string(std::count_if(r.units.begin(), r.units.end(),
                                       [](const UnitRow& u) { return u.metrics != nullptr; })));
      row("runtime_records", std::to_string(r.runtime_records));
      if (r.runtime_records > 0) row(human ? "runtime" : "runtime_ns", t(r.runtime_duration_ns));
      if (r.autotune_records > 0) row("autotune_records", std::to_string(r.autotune_records));
    }
    for (const std::string& w : h.warnings) row("warning", w);
    out.push_back(std::move(tb));
  }

  if (sec.compile_times) {
    // Per span name, and per pipeline of passes (only where passes ran).
    const auto distribution_table = [&](std::string key, std::string title, std::string first,
                                        std::string count, const std::vector<NameRow>& rows) {
      Table tb{std::move(key),
               std::move(title),
               {std::move(first), std::move(count), col("total"), col("mean"), col("min"),
                col("max"), col("p50"), col("p90"), col("p99"), col("stddev")},
               {false, true, true, true, true, true, true, true, true, true},
               {},
               {},
               "no spans in this trace",
               {}};
      for (const NameRow& n : rows) {
        tb.rows.push_back({n.name, std::to_string(n.count), t(n.total_ns), t(n.mean_ns()),
                           t(n.min_ns), t(n.max_ns), t(n.p50_ns), t(n.p90_ns), t(n.p99_ns),
                           t(n.stddev_ns)});
      }
      out.push_back(std::move(tb));
    };
    distribution_table("compile_times", "Compile times (per span name)", "name", "count", r.names);
    if (!r.pipelines.empty()) {
      distribution_table("pipelines",
                         "Pass pipelines (per span that ran passes: time in its outermost passes)",
                         "pipeline", "runs", r.pipelines);
    }
    if (!r.ir_growth.empty()) ir_growth_table(r, t, col, out);
  }

  if (sec.phases) {
    Table tb{"phases",
             "Cumulative time per phase (self = without nested spans on the same thread)",
             {"name", "count", col("total"), col("self"), "self_pct"},
             {false, true, true, true, true},
             {},
             {},
             "no spans in this trace",
             {}};
    std::vector<const NameRow*> rows;
    std::int64_t self_sum = 0;
    for (const NameRow& n : r.names) {
      rows.push_back(&n);
      self_sum = sat_add(self_sum, n.self_ns);
    }
    std::stable_sort(rows.begin(), rows.end(),
                     [](const NameRow* a, const NameRow* b) { return a->self_ns > b->self_ns; });
    for (const NameRow* n : rows) {
      tb.rows.push_back({n->name, std::to_string(n->count), t(n->total_ns), t(n->self_ns),
                         human ? percent(n->self_ns, self_sum)
                               : fixed(self_sum > 0 ? 100.0 * static_cast<double>(n->self_ns) /
                                                          static_cast<double>(self_sum)
                                                    : 0.0,
                                       3)});
    }
    out.push_back(std::move(tb));
  }

  if (sec.units) {
    Table tb{"units",
             "Compile units",
             {"compile_id", "name", col("wall"), "slices", "threads"},
             {false, false, true, true, true},
             {},
             {},
             "no compile units in this trace (no compile_id on any span)",
             {}};
    if (r.has_metrics) {
      for (const char* c : {"duration", "cache_hits", "cache_misses", "fail_type", "gpu_kernels"}) {
        tb.columns.push_back(std::string(c) == "duration" ? col("duration") : std::string(c));
        tb.numeric.push_back(std::string(c) != "fail_type");
      }
    }
    Table ph{"unit_phases",
             "Time per phase inside each compile unit",
             {"compile_id", "phase", "count", col("total"), col("self")},
             {false, false, true, true, true},
             {},
             {},
             "no spans inside compile units",
             {}};
    {  // the spread of the units' wall times, one row
      const UnitWallSummary& w = r.unit_walls;
      Table walls{"unit_walls",
                  "Compile unit wall times",
                  {"units", col("total"), col("mean"), col("min"), col("p50"), col("p90"),
                   col("p99"), col("max"), col("stddev")},
                  std::vector<bool>(9, true),
                  {},
                  {},
                  "no compile unit with a wall time (a slice, or a metrics duration)",
                  {}};
      if (w.count > 0) {
        walls.rows.push_back({std::to_string(w.count), t(w.total_ns), t(w.mean_ns), t(w.min_ns),
                              t(w.p50_ns), t(w.p90_ns), t(w.p99_ns), t(w.max_ns), t(w.stddev_ns)});
      }
      out.push_back(std::move(walls));
    }
    const bool has_metrics = r.has_metrics;
    // Units are per (pid, compile id): a pid column when they come from more than one process.
    const bool pids = r.multi_process_units;
    if (pids) {
      tb.columns.insert(tb.columns.begin(), "pid");
      tb.numeric.insert(tb.numeric.begin(), true);
      ph.columns.insert(ph.columns.begin(), "pid");
      ph.numeric.insert(ph.numeric.begin(), true);
    }
    // A unit_key column when the units have keys (jitscope's traces and
    // records), recompiles of a frame sharing theirs; status and reason
    // columns when a unit failed, crashed or was left open.
    const bool keys = std::any_of(r.units.begin(), r.units.end(),
                                  [](const UnitRow& u) { return !u.unit_key.empty(); });
    const bool statuses = std::any_of(r.units.begin(), r.units.end(),
                                      [](const UnitRow& u) { return u.status != UnitStatus::kOk; });
    if (keys) {
      tb.columns.insert(tb.columns.begin() + (pids ? 3 : 2), "unit_key");
      tb.numeric.insert(tb.numeric.begin() + (pids ? 3 : 2), false);
    }
    if (statuses) {
      tb.columns.insert(tb.columns.end(), {"status", "fail_reason"});
      tb.numeric.insert(tb.numeric.end(), {false, false});
    }
    tb.produce = [&r, t, opt_t, human, has_metrics, pids, keys, statuses](const RowFn& emit) {
      for (const UnitRow& u : r.units) {
        Row row{u.compile_id, u.name, u.in_trace ? t(u.wall_ns) : std::string(human ? "-" : ""),
                std::to_string(u.slices), std::to_string(u.threads)};
        if (keys) row.insert(row.begin() + 2, u.unit_key);
        if (pids) row.insert(row.begin(), pid_text(u.pid));
        if (has_metrics) {
          if (u.metrics) {
            const UnitMetrics& m = *u.metrics;
            std::string gpu_kernels;
            for (const auto& [k, v] : m.gpu) {
              if (k == "compiled_kernels") gpu_kernels = std::to_string(v);
            }
            row.push_back(opt_t(m.duration_ns));
            row.push_back(m.has_record ? std::to_string(m.cache_hits) : "");
            row.push_back(m.has_record ? std::to_string(m.cache_misses) : "");
            row.push_back(m.fail_type);
            row.push_back(gpu_kernels);
          } else {
            row.insert(row.end(), 5, std::string());
          }
        }
        if (statuses) {
          row.push_back(unit_status_name(u.status));
          row.push_back(u.status == UnitStatus::kIncomplete
                            ? std::string("still open when the trace ended (no crash in it)")
                            : u.fail_reason);
        }
        emit(std::move(row));
      }
    };
    ph.produce = [&r, t, pids](const RowFn& emit) {
      for (const UnitRow& u : r.units) {
        for (const PhaseRow& p : u.phases) {
          Row row{u.compile_id, p.name, std::to_string(p.count), t(p.total_ns), t(p.self_ns)};
          if (pids) row.insert(row.begin(), pid_text(u.pid));
          emit(std::move(row));
        }
      }
    };
    out.push_back(std::move(tb));
    out.push_back(std::move(ph));
    if (r.failed_passes_total > 0) {  // listed only when there are any
      Table fp{"failed_passes",
               "Failed passes (marked \"failed\", or open where a thread crashed)",
               {"name", "kind", "compile_id", "unit", "thread", col("dur"), col("ts"), "reason"},
               {false, false, false, false, false, true, true, false},
               {},
               {},
               "",
               {}};
      if (r.failed_passes.size() < r.failed_passes_total) {
        fp.notes.push_back("the first " + std::to_string(r.failed_passes.size()) + " of " +
                           std::to_string(r.failed_passes_total));
      }
      for (const FailedPass& p : r.failed_passes) {
        std::string where = (p.pid ? p.pid->str() : std::string()) + "/" + p.tid.str();
        if (!p.thread.empty()) where = p.thread + " (" + where + ")";
        fp.rows.push_back({p.name, p.crashed ? "crashed" : "failed", p.compile_id, p.unit, where,
                           t(p.dur_ns), human ? us_text(p.ts_ns) + " µs" : std::to_string(p.ts_ns),
                           p.reason});
      }
      out.push_back(std::move(fp));
    }
    unexplained_table(r, t, human, out);
  }

  if (sec.top_spans) {
    Table tb{"top_spans",
             "Slowest spans",
             {"rank", "name", col("dur"), "thread", "compile_id", col("ts")},
             {true, false, true, false, false, true},
             {},
             {},
             "no spans in this trace",
             {}};
    if (!human) {
      tb.columns = {"rank", "name", "dur_ns", "pid", "tid", "thread", "compile_id", "ts_ns"};
      tb.numeric = {true, false, true, true, true, false, false, true};
    }
    std::size_t rank = 0;
    for (const SpanRow& s : r.top) {
      ++rank;
      if (human) {
        tb.rows.push_back({std::to_string(rank), s.name, t(s.dur_ns), thread_label(s), s.compile_id,
                           us_text(s.ts_ns) + " µs"});
      } else {
        tb.rows.push_back({std::to_string(rank), s.name, std::to_string(s.dur_ns), id_text(s.pid),
                           id_text(s.tid), s.thread, s.compile_id, std::to_string(s.ts_ns)});
      }
    }
    out.push_back(std::move(tb));
  }

  if (sec.gpu) {
    const GpuSection& g = r.gpu;
    Table tb{"gpu",
             "GPU attribution (kernels by the compile unit that built them)",
             {"compile_id", "name", "kernels", "distinct_kernels", col("gpu_total"),
              col("gpu_mean"), col("first_launch_latency"), "launched_inside"},
             {false, false, true, true, true, true, true, true},
             {},
             {},
             "",
             {}};
    if (!g.present()) {
      tb.empty = "no GPU activity in this trace";
    } else {
      tb.notes.push_back("kernels: " + std::to_string(g.kernels) + " (GPU time " + t(g.kernel_ns) +
                         "), without compiled_by: " + std::to_string(g.kernels_unattributed) +
                         ", copies: " + std::to_string(g.memcpys) +
                         ", sets: " + std::to_string(g.memsets));
      tb.empty = "no kernel in this trace names the compile unit that built it";
      if (r.multi_process_units) {
        tb.columns.insert(tb.columns.begin(), "pid");
        tb.numeric.insert(tb.numeric.begin(), true);
      }
      for (const GpuUnitRow& u : g.units) {
        tb.rows.push_back({u.compile_id, u.name, std::to_string(u.kernels),
                           std::to_string(u.distinct_kernels), t(u.gpu_ns), t(u.mean_ns()),
                           opt_t(u.latency_ns), std::to_string(u.launched_inside)});
        if (r.multi_process_units) tb.rows.back().insert(tb.rows.back().begin(), pid_text(u.pid));
      }
    }
    out.push_back(std::move(tb));
    if (!g.names.empty()) {
      Table work{"gpu_work",
                 "GPU work and CUDA calls per name (kernels, copies, sets on the GPU; calls "
                 "CUPTI recorded on host threads; not in the host tables above)",
                 {"name", "kind", "count", col("total"), col("mean"), col("min"), col("max"),
                  col("p50"), col("p90"), col("p99")},
                 {false, false, true, true, true, true, true, true, true, true},
                 {},
                 {},
                 "",
                 {}};
      for (const NameRow& n : g.names) {
        work.rows.push_back({n.name, gpu_work_name(n.gpu), std::to_string(n.count), t(n.total_ns),
                             t(n.mean_ns()), t(n.min_ns), t(n.max_ns), t(n.p50_ns), t(n.p90_ns),
                             t(n.p99_ns)});
      }
      out.push_back(std::move(work));
    }
  }
  if (sec.caches) cache_tables(r, out);
  if (sec.autotune) autotune_tables(r, human, out);
  if (sec.critical_path) critical_path_tables(r, human, out);
  return out;
}

}  // namespace jitscope::report
