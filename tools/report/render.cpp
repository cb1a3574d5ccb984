#include "render.hpp"
#include "base/csv_cell.hpp"

#include "base/json_writer.hpp"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>

namespace jitscope::report {
namespace {

using Row = std::vector<std::string>;
using RowFn = std::function<void(Row&&)>;

struct Table {
  std::string key;    // CSV section name
  std::string title;  // table and markdown heading
  std::vector<std::string> columns;
  std::vector<bool> numeric;  // right-aligned
  std::vector<Row> rows;
  std::vector<std::string> notes;  // lines before the table
  std::string empty;               // said instead of an empty table
  // Big tables (one row per unit or per unit and phase) are produced row by
  // row while written, never held: memory stays at one row.
  std::function<void(const RowFn&)> produce;

  void for_each_row(const RowFn& fn) const {
    if (produce) {
      produce(fn);
      return;
    }
    for (const Row& r : rows) fn(Row(r));
  }
};

// Output in pieces of about kFlushBytes to the caller's writer.
class Emitter {
 public:
  static constexpr std::size_t kFlushBytes = std::size_t{1} << 20;
  explicit Emitter(const Writer& w) : write_(w) {}
  ~Emitter() { flush(); }
  std::string& buf() { return buf_; }
  void maybe_flush() {
    if (buf_.size() >= kFlushBytes) flush();
  }
  void flush() {
    if (!buf_.empty()) write_(buf_);
    buf_.clear();
  }

 private:
  const Writer& write_;
  std::string buf_;
};

std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string id_text(const Id& id) { return id.str(); }
std::string pid_text(const std::optional<Id>& pid) { return pid ? pid->str() : std::string(); }

std::string thread_label(const SpanRow& s) {
  std::string where = id_text(s.pid) + "/" + id_text(s.tid);
  return s.thread.empty() ? where : s.thread + " (" + where + ")";
}

std::string percent(std::int64_t part, std::int64_t whole) {
  if (whole <= 0) return "-";
  return fixed(100.0 * static_cast<double>(part) / static_cast<double>(whole), 1) + "%";
}

std::vector<Table> build(const Report& r, const Sections& sec, bool human) {
  auto t = [human](std::int64_t ns) { return human ? human_ns(ns) : std::to_string(ns); };
  auto col = [&](const char* name) { return human ? std::string(name) : std::string(name) + "_ns"; };
  auto opt_t = [t, human](const std::optional<std::int64_t>& v) { return v ? t(*v) : std::string(human ? "-" : ""); };
  std::vector<Table> out;

  if (sec.header) {
    const Header& h = r.header;
    Table tb{"header", "jitscope-report", {"field", "value"}, {false, false}, {}, {}, {}, {}};
    auto row = [&](std::string k, std::string v) { tb.rows.push_back({std::move(k), std::move(v)}); };
    row("input", h.input);
    row("bytes", std::to_string(h.bytes));
    std::string counts;
    for (const auto& [ph, n] : h.phase_counts) {
      counts += (counts.empty() ? "" : ", ") + (ph.empty() ? std::string("(no ph)") : ph) + " " + std::to_string(n);
    }
    row("events", human && !counts.empty() ? std::to_string(h.events) + " (" + counts + ")" : std::to_string(h.events));
    row("spans", std::to_string(h.spans));
    if (h.has_time) {
      if (human) {
        row("time span", human_ns(sat_sub(h.end_ns, h.begin_ns)) + " (ts " + fixed(h.begin_ns / 1e3, 3) + " to " +
                             fixed(h.end_ns / 1e3, 3) + " µs)");
      } else {
        row("begin_ns", std::to_string(h.begin_ns));
        row("end_ns", std::to_string(h.end_ns));
        row("duration_ns", std::to_string(sat_sub(h.end_ns, h.begin_ns)));
      }
    }
    row("processes", std::to_string(h.processes));
    row("threads", std::to_string(h.threads));
    row("unterminated", h.unterminated ? (human ? "yes: the array has no closing ']' (the writer did not finish)" : "true")
                                       : (human ? "no" : "false"));
    if (h.session) {
      const SessionInfo& s = *h.session;
      row("jitscope", s.version);
      row("clock", s.clock);
      std::string cupti = s.cupti_state;
      if (human && !s.cupti_timestamps.empty()) cupti += " (timestamps: " + s.cupti_timestamps + ")";
      if (human && !s.cupti_reason.empty()) cupti += " (" + s.cupti_reason + ")";
      row("cupti", cupti);
      if (!human && !s.cupti_reason.empty()) row("cupti_reason", s.cupti_reason);
    }
    if (h.events_dropped) row("events_dropped", std::to_string(*h.events_dropped));
    if (r.has_metrics) {
      row("metrics_units", std::to_string(std::count_if(r.units.begin(), r.units.end(),
                                                        [](const UnitRow& u) { return u.metrics.has_value(); })));
      row("runtime_records", std::to_string(r.runtime_records));
      if (r.runtime_records > 0) row(human ? "runtime" : "runtime_ns", t(r.runtime_duration_ns));
    }
    for (const std::string& w : h.warnings) row("warning", w);
    out.push_back(std::move(tb));
  }

  if (sec.compile_times) {
    Table tb{"compile_times", "Compile times (per span name)",
             {"name", "count", col("total"), col("mean"), col("min"), col("max")},
             {false, true, true, true, true, true}, {}, {}, "no spans in this trace", {}};
    for (const NameRow& n : r.names) {
      tb.rows.push_back({n.name, std::to_string(n.count), t(n.total_ns), t(n.mean_ns()), t(n.min_ns), t(n.max_ns)});
    }
    out.push_back(std::move(tb));
  }

  if (sec.phases) {
    Table tb{"phases", "Cumulative time per phase (self = without nested spans on the same thread)",
             {"name", "count", col("total"), col("self"), "self_pct"},
             {false, true, true, true, true}, {}, {}, "no spans in this trace", {}};
    std::vector<const NameRow*> rows;
    std::int64_t self_sum = 0;
    for (const NameRow& n : r.names) {
      rows.push_back(&n);
      self_sum = sat_add(self_sum, n.self_ns);
    }
    std::stable_sort(rows.begin(), rows.end(), [](const NameRow* a, const NameRow* b) {
      return a->self_ns > b->self_ns;
    });
    for (const NameRow* n : rows) {
      tb.rows.push_back({n->name, std::to_string(n->count), t(n->total_ns), t(n->self_ns),
                         human ? percent(n->self_ns, self_sum)
                               : fixed(self_sum > 0 ? 100.0 * static_cast<double>(n->self_ns) / static_cast<double>(self_sum) : 0.0, 3)});
    }
    out.push_back(std::move(tb));
  }

  if (sec.units) {
    Table tb{"units", "Compile units", {"compile_id", "name", col("wall"), "slices", "threads"},
             {false, false, true, true, true}, {}, {}, "no compile units in this trace (no compile_id on any span)", {}};
    if (r.has_metrics) {
      for (const char* c : {"duration", "cache_hits", "cache_misses", "fail_type", "gpu_kernels"}) {
        tb.columns.push_back(std::string(c) == "duration" ? col("duration") : std::string(c));
        tb.numeric.push_back(std::string(c) != "fail_type");
      }
    }
    Table ph{"unit_phases", "Time per phase inside each compile unit",
             {"compile_id", "phase", "count", col("total"), col("self")},
             {false, false, true, true, true}, {}, {}, "no spans inside compile units", {}};
    const bool has_metrics = r.has_metrics;
    // Units are per (pid, compile id): a pid column when they come from more than one process.
    const bool pids = r.multi_process_units;
    if (pids) {
      tb.columns.insert(tb.columns.begin(), "pid");
      tb.numeric.insert(tb.numeric.begin(), true);
      ph.columns.insert(ph.columns.begin(), "pid");
      ph.numeric.insert(ph.numeric.begin(), true);
    }
    tb.produce = [&r, t, opt_t, human, has_metrics, pids](const RowFn& emit) {
      for (const UnitRow& u : r.units) {
        Row row{u.compile_id, u.name, u.in_trace ? t(u.wall_ns) : std::string(human ? "-" : ""),
                std::to_string(u.slices), std::to_string(u.threads)};
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
  }

  if (sec.top_spans) {
    Table tb{"top_spans", "Slowest spans", {"rank", "name", col("dur"), "thread", "compile_id", col("ts")},
             {true, false, true, false, false, true}, {}, {}, "no spans in this trace", {}};
    if (!human) {
      tb.columns = {"rank", "name", "dur_ns", "pid", "tid", "thread", "compile_id", "ts_ns"};
      tb.numeric = {true, false, true, true, true, false, false, true};
    }
    std::size_t rank = 0;
    for (const SpanRow& s : r.top) {
      ++rank;
      if (human) {
        tb.rows.push_back({std::to_string(rank), s.name, t(s.dur_ns), thread_label(s), s.compile_id,
                           fixed(s.ts_ns / 1e3, 3) + " µs"});
      } else {
        tb.rows.push_back({std::to_string(rank), s.name, std::to_string(s.dur_ns), id_text(s.pid), id_text(s.tid),
                           s.thread, s.compile_id, std::to_string(s.ts_ns)});
      }
    }
    out.push_back(std::move(tb));
  }

  if (sec.gpu) {
    const GpuSection& g = r.gpu;
    Table tb{"gpu", "GPU attribution (kernels by the compile unit that built them)",
             {"compile_id", "name", "kernels", "distinct_kernels", col("gpu_total"), col("gpu_mean"),
              col("first_launch_latency"), "launched_inside"},
             {false, false, true, true, true, true, true, true}, {}, {}, "", {}};
    if (!g.present()) {
      tb.empty = "no GPU activity in this trace";
    } else {
      tb.notes.push_back("kernels: " + std::to_string(g.kernels) + " (GPU time " + t(g.kernel_ns) +
                         "), without compiled_by: " + std::to_string(g.kernels_unattributed) +
                         ", copies: " + std::to_string(g.memcpys) + ", sets: " + std::to_string(g.memsets));
      tb.empty = "no kernel in this trace names the compile unit that built it";
      if (r.multi_process_units) {
        tb.columns.insert(tb.columns.begin(), "pid");
        tb.numeric.insert(tb.numeric.begin(), true);
      }
      for (const GpuUnitRow& u : g.units) {
        tb.rows.push_back({u.compile_id, u.name, std::to_string(u.kernels), std::to_string(u.distinct_kernels),
                           t(u.gpu_ns), t(u.mean_ns()), opt_t(u.latency_ns), std::to_string(u.launched_inside)});
        if (r.multi_process_units) tb.rows.back().insert(tb.rows.back().begin(), pid_text(u.pid));
      }
    }
    out.push_back(std::move(tb));
  }
  return out;
}

// Display width: code points (the tables' µs is two bytes, one column).
std::size_t width(std::string_view s) {
  std::size_t n = 0;
  for (char c : s) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

// A text cell cut to kMaxTextWidth code points ("..." at the end): one long
// name (a clang template instantiation) must not widen a whole table.
constexpr std::size_t kMaxTextWidth = 80;
std::string clip(const std::string& s) {
  if (width(s) <= kMaxTextWidth) return s;
  std::size_t n = 0, i = 0;
  for (; i < s.size(); ++i) {
    if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80 && ++n > kMaxTextWidth - 3) break;
  }
  return s.substr(0, i) + "...";
}

void text(const std::vector<Table>& tables, Emitter& em) {
  std::string& out = em.buf();
  bool first = true;
  for (const Table& tb : tables) {
    if (!first) out += "\n";
    first = false;
    out += tb.key == "header" ? tb.title + "\n" : "== " + tb.title + " ==\n";
    for (const std::string& n : tb.notes) out += n + "\n";
    if (tb.key == "header") {  // "  field   value" lines
      std::size_t w = 0;
      for (const auto& row : tb.rows) w = std::max(w, width(row[0]));
      for (const auto& row : tb.rows) out += "  " + row[0] + std::string(w - width(row[0]) + 2, ' ') + row[1] + "\n";
      continue;
    }
    // Two passes over the rows: the column widths, then the lines.
    std::vector<std::size_t> w(tb.columns.size(), 0);
    for (std::size_t i = 0; i < tb.columns.size(); ++i) w[i] = width(tb.columns[i]);
    std::size_t rows = 0;
    auto clip_row = [&](Row& row) {
      for (std::size_t i = 0; i < row.size() && i < tb.numeric.size(); ++i) {
        if (!tb.numeric[i]) row[i] = clip(row[i]);
      }
    };
    tb.for_each_row([&](Row&& row) {
      ++rows;
      clip_row(row);
      for (std::size_t i = 0; i < row.size() && i < w.size(); ++i) w[i] = std::max(w[i], width(row[i]));
    });
    if (rows == 0) {
      out += tb.empty.empty() ? "(none)\n" : tb.empty + "\n";
      continue;
    }
    auto line = [&](const Row& row) {
      std::string l;
      for (std::size_t i = 0; i < row.size() && i < w.size(); ++i) {
        const std::string pad(w[i] - width(row[i]), ' ');
        l += tb.numeric[i] ? pad + row[i] : row[i] + (i + 1 < row.size() ? pad : "");
        if (i + 1 < row.size()) l += "  ";
      }
      while (!l.empty() && l.back() == ' ') l.pop_back();
      out += l + "\n";
      em.maybe_flush();
    };
    line(tb.columns);
    Row rule;
    for (std::size_t x : w) rule.emplace_back(x, '-');
    line(rule);
    tb.for_each_row([&](Row&& row) {
      clip_row(row);
      line(row);
    });
  }
}

std::string md_cell(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '|') out += "\\|";
    else if (c == '\n' || c == '\r') out += ' ';
    else out.push_back(c);
  }
  return out;
}

void markdown(const std::vector<Table>& tables, Emitter& em) {
  std::string& out = em.buf();
  bool first = true;
  for (const Table& tb : tables) {
    if (!first) out += "\n";
    first = false;
    out += (tb.key == "header" ? "# " : "## ") + tb.title + "\n\n";
    for (const std::string& n : tb.notes) out += md_cell(n) + "\n\n";
    std::string head = "|", rule = "|";
    for (std::size_t i = 0; i < tb.columns.size(); ++i) {
      head += " " + md_cell(tb.columns[i]) + " |";
      rule += tb.numeric[i] ? " ---: |" : " --- |";
    }
    bool any = false;
    tb.for_each_row([&](Row&& row) {
      if (!any) out += head + "\n" + rule + "\n";
      any = true;
      std::string l = "|";
      for (const std::string& c : row) l += " " + md_cell(c) + " |";
      out += l + "\n";
      em.maybe_flush();
    });
    if (!any) out += (tb.empty.empty() ? std::string("(none)") : tb.empty) + "\n";
  }
}


void csv(const std::vector<Table>& tables, Emitter& em) {
  std::string& out = em.buf();
  bool first = true;
  for (const Table& tb : tables) {
    if (!first) out += "\n";
    first = false;
    out += "# " + tb.key + "\n";
    auto line = [&](const Row& row) {
      for (std::size_t i = 0; i < row.size(); ++i) {
        if (i) out.push_back(',');
        out += detail::csv_cell(row[i]);
      }
      out.push_back('\n');
      em.maybe_flush();
    };
    std::size_t rows = 0;
    tb.for_each_row([&](Row&&) { ++rows; });
    if (rows == 0 && !tb.empty.empty()) out += "# " + tb.empty + "\n";
    line(tb.columns);
    tb.for_each_row([&](Row&& row) { line(row); });
  }
}

void json_id(detail::JsonWriter& j, const Id& id) {
  if (id.is_string) {
    j.value(std::string_view(id.text));
  } else {
    j.value(id.number);
  }
}

void json_pid(detail::JsonWriter& j, const std::optional<Id>& pid) {
  if (pid) {
    json_id(j, *pid);
  } else {
    j.null();
  }
}

void json_opt(detail::JsonWriter& j, std::string_view key, const std::optional<std::int64_t>& v) {
  j.key(key);
  if (v) {
    j.value(*v);
  } else {
    j.null();
  }
}

void json_str_or_null(detail::JsonWriter& j, std::string_view key, const std::string& s) {
  j.key(key);
  if (s.empty()) {
    j.null();
  } else {
    j.value(std::string_view(s));
  }
}

void json(const Report& r, const Sections& sec, Emitter& em) {
  std::string& out = em.buf();
  detail::JsonWriter j(out);
  j.begin_object();
  if (sec.header) {
    const Header& h = r.header;
    j.key("header");
    j.begin_object();
    j.member("input", std::string_view(h.input));
    j.member("bytes", h.bytes);
    j.member("events", h.events);
    j.key("event_counts");
    j.begin_object();
    for (const auto& [ph, n] : h.phase_counts) j.member(ph, n);
    j.end_object();
    j.member("spans", h.spans);
    j.member("unterminated", h.unterminated);
    j.key("time_span");
    if (h.has_time) {
      j.begin_object();
      j.member("begin_ns", h.begin_ns);
      j.member("end_ns", h.end_ns);
      j.member("duration_ns", sat_sub(h.end_ns, h.begin_ns));
      j.end_object();
    } else {
      j.null();
    }
    j.member("processes", h.processes);
    j.member("threads", h.threads);
    j.key("jitscope_session");
    if (h.session) {
      j.begin_object();
      json_str_or_null(j, "version", h.session->version);
      json_str_or_null(j, "clock", h.session->clock);
      j.key("cupti");
      j.begin_object();
      json_str_or_null(j, "state", h.session->cupti_state);
      json_str_or_null(j, "reason", h.session->cupti_reason);
      json_str_or_null(j, "timestamps", h.session->cupti_timestamps);
      j.end_object();
      j.end_object();
    } else {
      j.null();
    }
    json_opt(j, "events_dropped", h.events_dropped);
    j.key("metrics");
    if (r.has_metrics) {
      j.begin_object();
      j.member("units", static_cast<std::uint64_t>(std::count_if(
                            r.units.begin(), r.units.end(), [](const UnitRow& u) { return u.metrics.has_value(); })));
      j.member("runtime_records", r.runtime_records);
      j.member("runtime_duration_ns", r.runtime_duration_ns);
      j.end_object();
    } else {
      j.null();
    }
    j.key("warnings");
    j.begin_array();
    for (const std::string& w : h.warnings) j.value(std::string_view(w));
    j.end_array();
    j.end_object();
  }
  if (sec.compile_times) {
    j.key("compile_times");
    j.begin_array();
    for (const NameRow& n : r.names) {
      j.begin_object();
      j.member("name", std::string_view(n.name));
      j.member("count", n.count);
      j.member("total_ns", n.total_ns);
      j.member("mean_ns", n.mean_ns());
      j.member("min_ns", n.min_ns);
      j.member("max_ns", n.max_ns);
      j.end_object();
    }
    j.end_array();
  }
  if (sec.phases) {
    j.key("phases");
    j.begin_array();
    for (const NameRow& n : r.names) {
      j.begin_object();
      j.member("name", std::string_view(n.name));
      j.member("count", n.count);
      j.member("total_ns", n.total_ns);
      j.member("self_ns", n.self_ns);
      j.end_object();
    }
    j.end_array();
  }
  if (sec.units) {
    j.key("units");
    j.begin_array();
    for (const UnitRow& u : r.units) {
      j.begin_object();
      j.key("pid");
      json_pid(j, u.pid);
      j.member("compile_id", std::string_view(u.compile_id));
      j.member("name", std::string_view(u.name));
      j.member("in_trace", u.in_trace);
      if (u.in_trace) {
        j.member("start_ns", u.start_ns);
        j.member("end_ns", u.end_ns);
        j.member("wall_ns", u.wall_ns);
        j.member("compile_end_ns", u.compile_end_ns);
      } else {
        for (const char* k : {"start_ns", "end_ns", "wall_ns", "compile_end_ns"}) {
          j.key(k);
          j.null();
        }
      }
      j.member("slices", u.slices);
      j.member("threads", u.threads);
      j.key("phases");
      j.begin_array();
      for (const PhaseRow& p : u.phases) {
        j.begin_object();
        j.member("name", std::string_view(p.name));
        j.member("count", p.count);
        j.member("total_ns", p.total_ns);
        j.member("self_ns", p.self_ns);
        j.end_object();
      }
      j.end_array();
      j.key("metrics");
      if (u.metrics) {
        const UnitMetrics& m = *u.metrics;
        j.begin_object();
        j.member("has_record", m.has_record);
        j.member("name", std::string_view(m.name));
        json_opt(j, "duration_ns", m.duration_ns);
        j.key("columns_ns");
        j.begin_object();
        for (const auto& [k, v] : m.columns_ns) j.member(k, v);
        j.end_object();
        j.key("caches");
        j.begin_object();
        for (const CacheRow& c : m.caches) {
          j.key(c.cache);
          j.begin_object();
          j.member("hits", c.hits);
          j.member("misses", c.misses);
          j.end_object();
        }
        j.end_object();
        j.member("cache_hits", m.cache_hits);
        j.member("cache_misses", m.cache_misses);
        json_str_or_null(j, "fail_type", m.fail_type);
        json_str_or_null(j, "fail_reason", m.fail_reason);
        json_str_or_null(j, "recompile_reason", m.recompile_reason);
        j.key("gpu");
        if (m.has_gpu) {
          j.begin_object();
          for (const auto& [k, v] : m.gpu) j.member(k, v);
          j.end_object();
        } else {
          j.null();
        }
        j.end_object();
      } else {
        j.null();
      }
      j.end_object();
      em.maybe_flush();
    }
    j.end_array();
  }
  if (sec.top_spans) {
    j.key("top_spans");
    j.begin_array();
    for (const SpanRow& s : r.top) {
      j.begin_object();
      j.member("name", std::string_view(s.name));
      j.member("dur_ns", s.dur_ns);
      j.member("ts_ns", s.ts_ns);
      j.key("pid");
      json_id(j, s.pid);
      j.key("tid");
      json_id(j, s.tid);
      json_str_or_null(j, "thread", s.thread);
      json_str_or_null(j, "compile_id", s.compile_id);
      j.end_object();
    }
    j.end_array();
  }
  if (sec.gpu) {
    const GpuSection& g = r.gpu;
    j.key("gpu");
    j.begin_object();
    j.member("present", g.present());
    j.member("kernels", g.kernels);
    j.member("kernel_ns", g.kernel_ns);
    j.member("kernels_unattributed", g.kernels_unattributed);
    j.member("memcpys", g.memcpys);
    j.member("memsets", g.memsets);
    j.key("units");
    j.begin_array();
    for (const GpuUnitRow& u : g.units) {
      j.begin_object();
      j.key("pid");
      json_pid(j, u.pid);
      j.member("compile_id", std::string_view(u.compile_id));
      j.member("name", std::string_view(u.name));
      j.member("kernels", u.kernels);
      j.member("distinct_kernels", u.distinct_kernels);
      j.member("gpu_total_ns", u.gpu_ns);
      j.member("gpu_mean_ns", u.mean_ns());
      json_opt(j, "first_launch_ns", u.first_launch_ns);
      json_opt(j, "first_launch_latency_ns", u.latency_ns);
      j.member("launched_inside", u.launched_inside);
      j.end_object();
    }
    j.end_array();
    j.end_object();
  }
  j.end_object();
  out.push_back('\n');
}

}  // namespace

std::string human_ns(std::int64_t ns) {
  const bool neg = ns < 0;
  const double v = std::fabs(static_cast<double>(ns));
  std::string s;
  auto sig3 = [](double x) {  // three significant digits, x in [1, 1000)
    return x >= 100 ? fixed(x, 0) : x >= 10 ? fixed(x, 1) : fixed(x, 2);
  };
  if (v < 1e3) {
    s = std::to_string(static_cast<std::int64_t>(v)) + " ns";
  } else if (v < 999.5e3) {
    s = sig3(v / 1e3) + " µs";
  } else if (v < 999.5e6) {
    s = sig3(v / 1e6) + " ms";
  } else if (v < 999.5e9) {
    s = sig3(v / 1e9) + " s";
  } else {
    s = fixed(v / 1e9, 0) + " s";
  }
  return neg ? "-" + s : s;
}

void render(const Report& r, Format format, const Sections& sections, const Writer& write) {
  Emitter em(write);
  switch (format) {
    case Format::kJson: json(r, sections, em); return;
    case Format::kCsv: csv(build(r, sections, false), em); return;
    case Format::kMarkdown: markdown(build(r, sections, true), em); return;
    case Format::kTable: text(build(r, sections, true), em); return;
  }
}

}  // namespace jitscope::report
