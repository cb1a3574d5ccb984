// A Comparison in the report's formats: the terminal, Markdown and CSV
// through the same Table model and writers as the report (render_internal.hpp),
// JSON straight from the Comparison. Separate from render_tables.cpp: a
// comparison's rows are pairs of sides, not a trace's sections.
#include "base/json_writer.hpp"
#include "compare.hpp"
#include "render_internal.hpp"

namespace jitscope::report {
namespace {

// Passes and pipelines come with the names.
bool shown(const CompareSection& s, const CompareSections& sec) {
  if (s.key == "units") return sec.units;
  if (s.key == "kernels") return sec.kernels;
  return sec.names;
}

std::string pct_text(const std::optional<double>& p, bool human) {
  if (!p) return human ? "-" : "";
  // Appended: "+" + std::string&& trips GCC 12's -Wrestrict at -O3.
  std::string out = human && *p > 0 ? "+" : "";
  out += fixed(*p, 1);
  if (human) out += '%';
  return out;
}

// "1.20 ms → 2.40 ms" (one value when equal).
std::string pair_text(const std::string& a, const std::string& b) {
  return a == b ? a : a + " → " + b;
}

std::string range_text(const SideStats& s) {
  if (s.run_totals_ns.size() < 2) return "-";
  std::string out = "[";  // appended, as in pct_text
  out += human_ns(s.total_min_ns);
  out += ", ";
  out += human_ns(s.total_max_ns);
  out += ']';
  return out;
}

Table header_table(const Comparison& c, bool human) {
  Table tb{"header", "jitscope-report comparison", {"field", "value"}, {false, false}, {}, {}, {},
           {}};
  auto row = [&](std::string k, std::string v) { tb.rows.push_back({std::move(k), std::move(v)}); };
  for (const std::string& in : c.base_inputs) row("baseline", in);
  for (const std::string& in : c.new_inputs) row("new", in);
  row(human ? "threshold" : "threshold_pct",
      fixed(c.options.threshold_pct, 1) + (human ? "% beyond the baseline's spread" : ""));
  row(human ? "min change" : "min_change_ns",
      human ? human_ns(c.options.min_change_ns) : std::to_string(c.options.min_change_ns));
  row(human ? "spread factor" : "spread_factor",
      fixed(c.options.spread_factor, 2) +
          (human ? " x the larger spread of the two sides' runs" : ""));
  row(human ? "compared on" : "gate_on", c.options.gate_on == GateOn::kSelf
                                             ? (human ? "self time" : "self")
                                             : (human ? "total time" : "total"));
  if (c.options.fail_if_slower_pct) {
    row(human ? "fail if slower" : "fail_if_slower_pct",
        fixed(*c.options.fail_if_slower_pct, 1) + (human ? "%" : ""));
  }
  row("compared", std::to_string(c.compared));
  row("slower", std::to_string(c.slower));
  row("faster", std::to_string(c.faster));
  row("added", std::to_string(c.added));
  row("removed", std::to_string(c.removed));
  if (c.options.fail_if_slower_pct) row("failing", std::to_string(c.failing));
  for (const std::string& w : c.warnings) row("warning", w);
  return tb;
}

Table section_table(const CompareSection& s, bool human, bool many_runs, bool self) {
  Table tb{s.key, s.title, {}, {}, {}, {}, "none in either run", {}};
  const bool units = s.key == "units";
  if (human) {
    tb.columns = {units ? "unit_key" : "name",
                  "change",
                  "count",
                  "total",
                  "delta",
                  "delta %",
                  "mean",
                  "p50",
                  "p90"};
    tb.numeric = {false, false, true, true, true, true, true, true, true};
    if (self) {  // compared on self time: its columns after the totals'
      tb.columns.insert(tb.columns.begin() + 6, {"self", "self delta", "self delta %"});
      tb.numeric.insert(tb.numeric.begin() + 6, {true, true, true});
    }
    if (many_runs) {
      tb.columns.insert(tb.columns.end(), {"baseline range", "new range"});
      tb.numeric.insert(tb.numeric.end(), {true, true});
    }
    if (units) {
      tb.columns.insert(tb.columns.begin() + 1, "frame");
      tb.numeric.insert(tb.numeric.begin() + 1, false);
    }
  } else {
    tb.columns = {"name",
                  "change",
                  "fails",
                  "base_count",
                  "new_count",
                  "base_total_ns",
                  "new_total_ns",
                  "delta_total_ns",
                  "delta_pct",
                  "base_mean_ns",
                  "new_mean_ns",
                  "delta_mean_ns",
                  "base_p50_ns",
                  "new_p50_ns",
                  "delta_p50_ns",
                  "base_p90_ns",
                  "new_p90_ns",
                  "delta_p90_ns",
                  "base_total_min_ns",
                  "base_total_max_ns",
                  "new_total_min_ns",
                  "new_total_max_ns"};
    if (self) {
      tb.columns.insert(tb.columns.end(), {"base_self_ns", "new_self_ns", "delta_self_ns",
                                           "delta_self_pct", "base_self_min_ns", "base_self_max_ns",
                                           "new_self_min_ns", "new_self_max_ns"});
    }
    if (units) tb.columns.insert(tb.columns.begin() + 1, {"frame", "matched_by"});
    tb.numeric.assign(tb.columns.size(), true);
    for (std::size_t i = 0; i < (units ? 5u : 3u); ++i) tb.numeric[i] = false;
  }
  for (const CompareRow& r : s.rows) {
    const KeyStats &b = r.base.median, &n = r.next.median;
    std::string change = change_name(r.change);
    if (human) {
      if (r.change == Change::kUnchanged) change = "";
      if (r.fails) change += " (fails)";
      Row row{r.name,
              change,
              pair_text(std::to_string(b.count), std::to_string(n.count)),
              pair_text(human_ns(b.total_ns), human_ns(n.total_ns)),
              (r.delta_total_ns() > 0 ? "+" : "") + human_ns(r.delta_total_ns()),
              pct_text(r.delta_pct(), true),
              pair_text(human_ns(b.mean_ns), human_ns(n.mean_ns)),
              pair_text(human_ns(b.p50_ns), human_ns(n.p50_ns)),
              pair_text(human_ns(b.p90_ns), human_ns(n.p90_ns))};
      if (self) {
        row.insert(row.begin() + 6,
                   {pair_text(human_ns(b.self_ns), human_ns(n.self_ns)),
                    (r.delta_self_ns() > 0 ? "+" : "") + human_ns(r.delta_self_ns()),
                    pct_text(r.delta_self_pct(), true)});
      }
      if (many_runs) {
        row.push_back(range_text(r.base));
        row.push_back(range_text(r.next));
      }
      if (units) row.insert(row.begin() + 1, r.frame);
      tb.rows.push_back(std::move(row));
    } else {
      auto str = [](std::int64_t v) { return std::to_string(v); };
      tb.rows.push_back({r.name,
                         change,
                         r.fails ? "true" : "false",
                         std::to_string(b.count),
                         std::to_string(n.count),
                         str(b.total_ns),
                         str(n.total_ns),
                         str(r.delta_total_ns()),
                         pct_text(r.delta_pct(), false),
                         str(b.mean_ns),
                         str(n.mean_ns),
                         str(sat_sub(n.mean_ns, b.mean_ns)),
                         str(b.p50_ns),
                         str(n.p50_ns),
                         str(sat_sub(n.p50_ns, b.p50_ns)),
                         str(b.p90_ns),
                         str(n.p90_ns),
                         str(sat_sub(n.p90_ns, b.p90_ns)),
                         str(r.base.total_min_ns),
                         str(r.base.total_max_ns),
                         str(r.next.total_min_ns),
                         str(r.next.total_max_ns)});
      Row& row = tb.rows.back();
      if (self) {
        row.insert(row.end(),
                   {str(b.self_ns), str(n.self_ns), str(r.delta_self_ns()),
                    pct_text(r.delta_self_pct(), false), str(r.base.self_min_ns),
                    str(r.base.self_max_ns), str(r.next.self_min_ns), str(r.next.self_max_ns)});
      }
      if (units) row.insert(row.begin() + 1, {r.frame, r.by_key ? "unit_key" : "name"});
    }
  }
  return tb;
}

void json_side(detail::JsonWriter& j, std::string_view key, const SideStats& s) {
  j.key(key);
  if (!s.present) {
    j.null();
    return;
  }
  j.begin_object();
  j.member("count", s.median.count);
  j.member("total_ns", s.median.total_ns);
  j.member("mean_ns", s.median.mean_ns);
  j.member("p50_ns", s.median.p50_ns);
  j.member("p90_ns", s.median.p90_ns);
  j.member("total_min_ns", s.total_min_ns);
  j.member("total_max_ns", s.total_max_ns);
  j.key("run_totals_ns");
  j.begin_array();
  for (std::int64_t v : s.run_totals_ns) j.value(v);
  j.end_array();
  j.member("self_ns", s.median.self_ns);
  j.member("self_min_ns", s.self_min_ns);
  j.member("self_max_ns", s.self_max_ns);
  j.key("run_selfs_ns");
  j.begin_array();
  for (std::int64_t v : s.run_selfs_ns) j.value(v);
  j.end_array();
  j.end_object();
}

void write_comparison_json(const Comparison& c, const CompareSections& sec, Emitter& em) {
  detail::JsonWriter j(em.buf());
  j.begin_object();
  write_comparison_members(c, sec, j, em);
  j.end_object();
  em.buf().push_back('\n');
}

}  // namespace

void write_comparison_members(const Comparison& c, const CompareSections& sec,
                              detail::JsonWriter& j, Emitter& em) {
  if (sec.header) {
    j.key("comparison");
    j.begin_object();
    for (const auto* side : {&c.base_inputs, &c.new_inputs}) {
      j.key(side == &c.base_inputs ? "baseline" : "new");
      j.begin_array();
      for (const std::string& in : *side) j.value(std::string_view(in));
      j.end_array();
    }
    j.member("threshold_pct", c.options.threshold_pct);
    j.member("min_change_ns", c.options.min_change_ns);
    j.member("spread_factor", c.options.spread_factor);
    j.member("gate_on", std::string_view(c.options.gate_on == GateOn::kSelf ? "self" : "total"));
    j.key("fail_if_slower_pct");
    if (c.options.fail_if_slower_pct) {
      j.value(*c.options.fail_if_slower_pct);
    } else {
      j.null();
    }
    j.member("compared", c.compared);
    j.member("slower", c.slower);
    j.member("faster", c.faster);
    j.member("added", c.added);
    j.member("removed", c.removed);
    j.member("failing", c.failing);
    j.key("warnings");
    j.begin_array();
    for (const std::string& w : c.warnings) j.value(std::string_view(w));
    j.end_array();
    j.end_object();
  }
  for (const CompareSection& s : c.sections) {
    if (!shown(s, sec)) continue;
    j.key(s.key);
    j.begin_array();
    for (const CompareRow& r : s.rows) {
      j.begin_object();
      j.member("name", std::string_view(r.name));
      if (s.key == "units") {  // the name is the unit_key, or (older traces) the units' name
        j.key("unit_key");
        if (r.by_key) {
          j.value(std::string_view(r.name));
        } else {
          j.null();
        }
        j.key("frame");
        if (r.frame.empty()) {
          j.null();
        } else {
          j.value(std::string_view(r.frame));
        }
      }
      j.member("change", std::string_view(change_name(r.change)));
      j.member("fails", r.fails);
      json_side(j, "baseline", r.base);
      json_side(j, "new", r.next);
      j.key("delta");
      j.begin_object();
      j.member("count", static_cast<std::int64_t>(r.next.median.count) -
                            static_cast<std::int64_t>(r.base.median.count));
      j.member("total_ns", r.delta_total_ns());
      j.key("total_pct");
      if (const auto p = r.delta_pct()) {
        j.value(*p);
      } else {
        j.null();
      }
      j.member("mean_ns", sat_sub(r.next.median.mean_ns, r.base.median.mean_ns));
      j.member("p50_ns", sat_sub(r.next.median.p50_ns, r.base.median.p50_ns));
      j.member("p90_ns", sat_sub(r.next.median.p90_ns, r.base.median.p90_ns));
      j.member("self_ns", r.delta_self_ns());
      j.key("self_pct");
      if (const auto p = r.delta_self_pct()) {
        j.value(*p);
      } else {
        j.null();
      }
      j.end_object();
      j.end_object();
      em.maybe_flush();
    }
    j.end_array();
  }
}

void render_comparison(const Comparison& c, Format format, const CompareSections& sec,
                       const Writer& write) {
  Emitter em(write);
  if (format == Format::kJson) {
    write_comparison_json(c, sec, em);
    return;
  }
  const bool human = format != Format::kCsv;
  const bool many_runs = c.base_inputs.size() > 1 || c.new_inputs.size() > 1;
  std::vector<Table> tables;
  if (sec.header) tables.push_back(header_table(c, human));
  for (const CompareSection& s : c.sections) {
    // Passes and pipelines only where the traces have them.
    const bool empty_extra = (s.key == "passes" || s.key == "pipelines") && s.rows.empty();
    if (shown(s, sec) && !empty_extra)
      tables.push_back(section_table(s, human, many_runs, c.options.gate_on == GateOn::kSelf));
  }
  switch (format) {
    case Format::kCsv: write_csv(tables, em); return;
    case Format::kMarkdown: write_markdown(tables, em); return;
    default: write_text(tables, em); return;
  }
}

}  // namespace jitscope::report
