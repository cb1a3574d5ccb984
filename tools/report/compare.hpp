// Compares runs: the Reports of one or more baseline runs against those of
// one or more new runs, per span name, per compile unit (by name) and per
// GPU kernel name, with what was added or removed and what is slower or
// faster beyond the run-to-run spread. jitscope-report --baseline.
//
//   std::vector<Report> base = ..., next = ...;   // one Report per trace
//   const Comparison c = compare(base, next, CompareOptions{});
//   render_comparison(c, Format::kTable, write);
//   return c.failing > 0 ? kRegression : 0;
//
// Per run, each key (a span name, a unit name, a kernel name) has count,
// total, mean, p50 and p90 (a run without the key: zeros). Per side, each
// of those is the median over its runs (the mean of the middle two for an
// even number), and the side's spread is the [min, max] of the per-run
// totals.
//
// The flag test, on totals: a key is "slower" when the new median total
// exceeds the baseline's max by more than threshold_pct % of that max and by
// at least min_change_ns; "faster" when it is below the baseline's min by
// as much (threshold_pct % of the min, at least min_change_ns). With one
// baseline run the spread is its one value: a relative + absolute test on
// the change. A key in no baseline run is "added", in no new run "removed";
// the rest "unchanged". --fail-if-slower PCT is the same test with PCT: a
// key that fails it makes `failing` count (exit 3).
//
// Units are matched by name, never by compile id (ids are a run's own
// numbering): all units of one name in a run (recompiles) make its count,
// total and percentiles. A unit's time is its wall time in the trace, else
// its metrics record's duration; a unit without a name is keyed
// "[<compile_id>]". Rows are sorted by the size of the change (|new total -
// baseline total|, medians), largest first.
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

struct CompareOptions {
  double threshold_pct = 10;                 // --threshold
  std::int64_t min_change_ns = 1'000'000;    // --min-change-ms
  std::optional<double> fail_if_slower_pct;  // --fail-if-slower
};

enum class Change { kUnchanged, kSlower, kFaster, kAdded, kRemoved };
const char* change_name(Change c);  // "unchanged", "slower", ...

struct KeyStats {  // one key on one run, or a side's medians
  std::uint64_t count = 0;
  std::int64_t total_ns = 0, mean_ns = 0, p50_ns = 0, p90_ns = 0;
};

struct SideStats {
  bool present = false;                             // in at least one of the side's runs
  KeyStats median;                                  // per statistic, over the runs
  std::int64_t total_min_ns = 0, total_max_ns = 0;  // the spread of the per-run totals
  std::vector<std::int64_t> run_totals_ns;          // in input order
};

struct CompareRow {
  std::string name;
  Change change = Change::kUnchanged;
  bool fails = false;  // slower by the --fail-if-slower test
  SideStats base, next;
  std::int64_t delta_total_ns() const {
    return sat_sub(next.median.total_ns, base.median.total_ns);
  }
  // (new - base) / base in %, none when the base total is 0.
  std::optional<double> delta_pct() const;
};

struct CompareSection {
  std::string key;  // "names", "units", "kernels" (JSON key, CSV section)
  std::string title;
  std::vector<CompareRow> rows;  // by |delta total| desc, then name
};

struct Comparison {
  std::vector<std::string> base_inputs, new_inputs;
  CompareOptions options;
  std::vector<CompareSection> sections;  // names, units, kernels
  std::uint64_t slower = 0, faster = 0, added = 0, removed = 0, failing = 0;
  std::vector<std::string> warnings;  // the inputs' header warnings, "<input>: <warning>"
};

// The flag test of one key's totals (compare.hpp's header comment).
Change judge(const SideStats& base, const SideStats& next, double pct, std::int64_t min_ns);

Comparison compare(const std::vector<Report>& base, const std::vector<Report>& next,
                   const CompareOptions& options);

// Which sections: names (from --section compile_times or phases), units, kernels (gpu).
struct CompareSections {
  bool header = true, names = true, units = true, kernels = true;
};

// In the report's formats: tables (text, Markdown, CSV) or one JSON object.
void render_comparison(const Comparison& c, Format format, const CompareSections& sections,
                       const Writer& write);

}  // namespace jitscope::report
