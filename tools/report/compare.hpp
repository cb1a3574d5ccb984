// Compares runs: the Reports of one or more baseline runs against those of
// one or more new runs, per span name, per compiler pass and per pipeline
// of passes (NameRow::pass, Report::pipelines), per compile unit (by its
// unit_key) and per GPU kernel name, with what was added or removed and
// what is slower or faster beyond the run-to-run noise. jitscope-report
// --baseline.
//
//   std::vector<Report> base = ..., next = ...;   // one Report per trace
//   const Comparison c = compare(base, next, CompareOptions{});
//   render_comparison(c, Format::kTable, write);
//   if (c.failing > 0) { std::fputs(verdict(c).c_str(), stderr); return kRegression; }
//
// Per run, each key (a span name, a pass, a pipeline, a unit key, a kernel
// name) has count,
// total, self, mean, p50 and p90 (a run without the key: zeros). Per side,
// each of those is the median over its runs (the mean of the middle two for
// an even number), and the side's spread is the [min, max] of the per-run
// totals (and of the self times).
//
// The flag test, on the gated statistic (total time, or with
// GateOn::kSelf self time: a name's or pass's time outside the spans nested
// in it, a unit's time outside its phases; kernels do not nest and a
// pipeline's time is its passes', so theirs is total):
// with d = new median - baseline median, a key is "slower" when d exceeds
// threshold_pct % of the baseline median, min_change_ns, and spread_factor
// times the larger of the two sides' spreads (max - min over their runs:
// the noise; 0 for a side of one run); "faster" when -d exceeds as much.
// A key in no baseline run is "added", in no new run "removed"; the rest
// "unchanged". --fail-if-slower PCT is the same test with PCT: a key that
// fails it makes `failing` count (exit 3).
//
// Units are matched by their unit_key (the SDK's stable identity: the
// caller's key, else the frame's name, else the unit name without its
// "_<n>" counter), never by compile id or name (both depend on compile
// order); a unit without a key (an older trace) by its name, one without a
// name by "[<compile_id>]". All units of one key in a run (recompiles, or a
// frame compiled again) make its count, total and percentiles. A unit's
// time is its wall time in the trace, else its metrics record's duration.
// Rows are sorted by the size of the change of the gated statistic
// (|new - baseline|, medians), largest first.
// Cost: O(keys x runs log runs); the Reports are the memory (main.cpp reads
// the runs one after the other, keeping each one's Report, not its events:
// --baseline of two 1 GiB traces peaks at 54 MiB, of two 256 MiB ones at 52).
#pragma once

#include "render.hpp"
#include "report_data.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace jitscope::report {

// Which time the flag test and the gate compare (--gate-on).
enum class GateOn { kTotal, kSelf };

struct CompareOptions {
  double threshold_pct = 10;                 // --threshold
  std::int64_t min_change_ns = 1'000'000;    // --min-change-ms
  double spread_factor = 1;                  // --spread-factor: times the runs' spread
  GateOn gate_on = GateOn::kTotal;           // --gate-on
  std::optional<double> fail_if_slower_pct;  // --fail-if-slower
};

enum class Change { kUnchanged, kSlower, kFaster, kAdded, kRemoved };
const char* change_name(Change c);  // "unchanged", "slower", ...

struct KeyStats {  // one key on one run, or a side's medians
  std::uint64_t count = 0;
  std::int64_t total_ns = 0, mean_ns = 0, p50_ns = 0, p90_ns = 0;
  std::int64_t self_ns = 0;  // total self time (kernels: their total)
};

struct SideStats {
  bool present = false;                             // in at least one of the side's runs
  KeyStats median;                                  // per statistic, over the runs
  std::int64_t total_min_ns = 0, total_max_ns = 0;  // the spread of the per-run totals
  std::int64_t self_min_ns = 0, self_max_ns = 0;    // and of the per-run self times
  std::vector<std::int64_t> run_totals_ns;          // in input order
  std::vector<std::int64_t> run_selfs_ns;
  // The gated statistic's median and spread.
  std::int64_t gated(GateOn g) const {
    return g == GateOn::kSelf ? median.self_ns : median.total_ns;
  }
  std::int64_t spread(GateOn g) const {
    return g == GateOn::kSelf ? sat_sub(self_max_ns, self_min_ns)
                              : sat_sub(total_max_ns, total_min_ns);
  }
};

struct CompareRow {
  std::string name;     // the key: a span or kernel name, a unit's unit_key (else its name)
  std::string frame;    // units: their frame's name, when they have one
  bool by_key = false;  // units: matched by unit_key (else by name)
  Change change = Change::kUnchanged;
  bool fails = false;  // slower by the --fail-if-slower test
  SideStats base, next;
  std::int64_t delta_total_ns() const {
    return sat_sub(next.median.total_ns, base.median.total_ns);
  }
  std::int64_t delta_self_ns() const { return sat_sub(next.median.self_ns, base.median.self_ns); }
  std::int64_t delta_ns(GateOn g) const {
    return g == GateOn::kSelf ? delta_self_ns() : delta_total_ns();
  }
  // (new - base) / base in %, none when the base is 0.
  std::optional<double> delta_pct() const;
  std::optional<double> delta_self_pct() const;
  std::optional<double> delta_pct(GateOn g) const {
    return g == GateOn::kSelf ? delta_self_pct() : delta_pct();
  }
};

struct CompareSection {
  std::string key;  // "names", "passes", "pipelines", "units", "kernels" (JSON key, CSV section)
  std::string title;
  std::vector<CompareRow> rows;  // by |delta total| desc, then name
};

struct Comparison {
  std::vector<std::string> base_inputs, new_inputs;
  CompareOptions options;
  std::vector<CompareSection> sections;  // names, pipelines, passes, units, kernels
  std::uint64_t slower = 0, faster = 0, added = 0, removed = 0, failing = 0;
  // Keys in both sides (neither added nor removed): none means the runs
  // share nothing (an empty or unrelated new trace), and a gate fails.
  std::uint64_t compared = 0;
  std::vector<std::string> warnings;  // the inputs' header warnings, "<input>: <warning>"
};

// The flag test of one key (compare.hpp's header comment): `pct` % of the
// baseline median, `min_ns`, and `spread_factor` x the larger spread, on
// the statistic `on`.
Change judge(const SideStats& base, const SideStats& next, double pct, std::int64_t min_ns,
             double spread_factor, GateOn on);

Comparison compare(const std::vector<Report>& base, const std::vector<Report>& next,
                   const CompareOptions& options);

// The gate's verdict, one line (no newline) for stderr when c.failing > 0:
// "jitscope-report: regression: 2 of the compared names, passes, pipelines,
// units and kernels are slower than --fail-if-slower 5% (total time; 14
// compared; by at least 1.00 ms and the runs' spread): pass
// \"InstCombinePass\" +4.10 ms (+10.2%), unit \"model__fwd\" +4.10 ms
// (+3.1%)": the `top` largest failing changes, then "and N more".
std::string verdict(const Comparison& c, std::size_t top = 5);

// Which sections: names (from --section compile_times or phases; passes and
// pipelines with them), units, kernels (gpu).
struct CompareSections {
  bool header = true, names = true, units = true, kernels = true;
};

// In the report's formats: tables (text, Markdown, CSV) or one JSON object.
void render_comparison(const Comparison& c, Format format, const CompareSections& sections,
                       const Writer& write);

}  // namespace jitscope::report
