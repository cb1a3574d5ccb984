// A Comparison in the report's formats: the terminal, Markdown and CSV
// through the same Table model and writers as the report (render_internal.hpp),
// JSON straight from the Comparison. Separate from render_tables.cpp: a
// comparison's rows are pairs of sides, not a trace's sections.
#include "base/json_writer.hpp"
#include "compare.hpp"
#include "render_internal.hpp"

namespace jitscope::report {
namespace {

std::string pct_text(const std::optional<double>& p, bool human) {
  if (!p) return human ? "-" : "";
  return (human && *p > 0 ? "+" : "") + fixed(*p, 1) + (human ? "%" : "");
}

// "1.20 ms → 2.40 ms" (one value when equal).
std::string pair_text(const std::string& a, const std::string& b) {
  return a == b ? a : a + " → " + b;
}

std::string range_text(const SideStats& s) {
  return s.run_totals_ns.size() < 2
             ? "-"
             : "[" + human_ns(s.total_min_ns) + ", " + human_ns(s.total_max_ns) + "]";
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
  if (c.options.fail_if_slower_pct) {
    row(human ? "fail if slower" : "fail_if_slower_pct",
        fixed(*c.options.fail_if_slower_pct, 1) + (human ? "%" : ""));
  }
  row("slower", std::to_string(c.slower));
  row("faster", std::to_string(c.faster));
  row("added", std::to_string(c.added));
  row("removed", std::to_string(c.removed));
  if (c.options.fail_if_slower_pct) row("failing", std::to_string(c.failing));
  for (const std::string& w : c.warnings) row("warning", w);
  return tb;
}

Table section_table(const CompareSection& s, bool human, bool many_runs) {
  Table tb{s.key, s.title, {}, {}, {}, {}, "none in either run", {}};
  if (human) {
    tb.columns = {"name", "change", "count", "total", "delta", "delta %", "mean", "p50", "p90"};
    tb.numeric = {false, false, true, true, true, true, true, true, true};
    if (many_runs) {
      tb.columns.insert(tb.columns.end(), {"baseline range", "new range"});
      tb.numeric.insert(tb.numeric.end(), {true, true});
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
    tb.numeric.assign(tb.columns.size(), true);
    tb.numeric[0] = tb.numeric[1] = tb.numeric[2] = false;
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
      if (many_runs) {
        row.push_back(range_text(r.base));
        row.push_back(range_text(r.next));
      }
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
    j.key("fail_if_slower_pct");
    if (c.options.fail_if_slower_pct) {
      j.value(*c.options.fail_if_slower_pct);
    } else {
      j.null();
    }
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
    if ((s.key == "names" && !sec.names) || (s.key == "units" && !sec.units) ||
        (s.key == "kernels" && !sec.kernels))
      continue;
    j.key(s.key);
    j.begin_array();
    for (const CompareRow& r : s.rows) {
      j.begin_object();
      j.member("name", std::string_view(r.name));
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
    if ((s.key == "names" && sec.names) || (s.key == "units" && sec.units) ||
        (s.key == "kernels" && sec.kernels))
      tables.push_back(section_table(s, human, many_runs));
  }
  switch (format) {
    case Format::kCsv: write_csv(tables, em); return;
    case Format::kMarkdown: write_markdown(tables, em); return;
    default: write_text(tables, em); return;
  }
}

}  // namespace jitscope::report
