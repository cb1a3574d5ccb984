// jitscope-report: compile-time tables from any Chrome trace-event JSON file
// (jitscope's, `clang -ftime-trace`, PyTorch profiler traces) or Perfetto
// protobuf trace (.pftrace: trace_reader.hpp, perfetto_decoder.hpp), streamed;
// traces and metrics files plain or gzip'd (.json.gz, .jsonl.gz), or stdin.
//
//   jitscope-report TRACE [--metrics FILE] [--format table|csv|json|markdown|html]
//                   [--top N] [--section NAME[,NAME...]] [--output FILE]
//   jitscope-report --baseline BASE [--baseline BASE...] NEW [NEW...]
//                   [--metrics FILE...] [--baseline-metrics FILE...]
//                   [--threshold PCT] [--min-change-ms MS] [--spread-factor K]
//                   [--gate-on total|self] [--fail-if-slower PCT]
//                   [--format ...] [--section ...] [--output FILE]
//
// With --baseline it compares runs (compare.hpp): the i-th --metrics goes
// with the i-th NEW trace, the i-th --baseline-metrics with the i-th BASE.
// --format html is one self-contained page (docs/report-html.md): with
// --baseline, the first NEW trace's report and the comparison.
//
// Exit status: 0 done, 1 bad input (unreadable, not a trace, truncated
// inside the object form, an event over 256 MiB, a bad metrics line) or an
// unwritable output, 2 bad usage (a compare number that is not finite or
// out of its range included), 3 a comparison with --fail-if-slower found
// a key slower beyond it (after the report is written; the stderr line
// names the largest changes), 4 a comparison with --fail-if-slower that
// had nothing to compare (no key in both sides: an empty or unrelated new
// trace), after the report is written. Errors are one line
// on stderr: "jitscope-report: error: ...". What the reader repairs (a BOM,
// a trailing ',', an array cut inside its last event, invalid UTF-8) is a
// header warning, not an error.
//
// Compile units are keyed by (pid, compile_id): compile ids restart in every
// process, so a merged multi-process trace keeps one row per process (a pid
// column in the tables when units come from more than one process; "pid" in
// JSON rows always). A GPU slice's units are its host process's (jitscope's
// GPU pid is 10000000 * (device + 1) + host pid).
//
// Hostile numbers: an event whose end does not fit in int64 ns (ts + dur, or
// E - B) is skipped and counted in a header warning; sums and differences of
// times saturate at the int64 limits. A metrics duration_us that does not
// fit in int64 ns is an error (other *_us columns are left out).
//
// --output FILE goes through OutputFile (tools/common/output_file.hpp): a
// temporary file in FILE's folder renamed over FILE at the end, so a failure
// leaves FILE as it was; a device or FIFO (e.g. /dev/stdout) written in
// place; a symbolic link followed (the link stays); a directory refused;
// an input (by any path, hard link or symbolic link) refused.
#include "aggregator.hpp"
#include "compare.hpp"
#include "metrics.hpp"
#include "render.hpp"

#include <event_decoder.hpp>
#include <huge_pages.hpp>
#include <output_file.hpp>
#include <trace_reader.hpp>

#include <CLI/CLI.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <new>
#include <optional>
#include <string>
#include <vector>

namespace {

constexpr int kBadInput = 1;
constexpr int kUsage = 2;
constexpr int kRegression = 3;       // --fail-if-slower: a key is slower beyond it
constexpr int kNothingCompared = 4;  // --fail-if-slower: no key in both the baseline and new runs

// A compare option's number: finite, in [lo, hi] ("nan", "inf", "-1" and
// "1e300" are usage errors, never a gate that cannot fail or an INT64_MIN).
CLI::Validator finite_in(double lo, double hi) {
  char range[64];
  std::snprintf(range, sizeof range, "[%g, %g]", lo, hi);
  const std::string want = std::string("a finite number in ") + range;
  return CLI::Validator(
      [lo, hi, want](std::string& text) -> std::string {
        const char* b = text.c_str();
        char* e = nullptr;
        const double v = std::strtod(b, &e);
        if (text.empty() || e != b + text.size() || !std::isfinite(v) || v < lo || v > hi)
          return "'" + text + "' is not " + want;
        return {};
      },
      "NUMBER", "finite");
}

int error(const std::string& what, int code = kBadInput) {
  std::fprintf(stderr, "jitscope-report: error: %s\n", what.c_str());
  return code;
}

// One trace (and its metrics file, when `metrics_path` is not empty) read
// into *out; false with *why on bad input.
bool read_report(const std::string& trace, const std::string& metrics_path,
                 const jitscope::report::Aggregator::Options& opt, jitscope::report::Report* out,
                 std::string* why) {
  using namespace jitscope;
  report::MetricsFile metrics;
  if (!metrics_path.empty() && !report::read_metrics(metrics_path, &metrics, why)) return false;
  report::Aggregator agg(opt);
  tools::TraceReader reader;
  reader.set_decoded_fields(true);  // every event goes through the decoder below
  tools::EventDecoder decoder;
  tools::DecodedEvent ev;
  const std::string label = trace == "-" ? "<stdin>" : trace;
  std::uint64_t events = 0;
  const bool ok = reader.read(
      trace,
      [&](const tools::RawEvent& raw) {
        if (!decoder.decode(raw, &ev, why)) {
          *why = label + ": " + *why;
          return false;
        }
        agg.add(ev, decoder);
        if ((++events & 4095) == 0) tools::advise_heap_growth();
        return true;
      },
      nullptr, why);
  if (!ok) return false;
  tools::advise_heap_growth();
  *out = agg.finish(label, reader.bytes_read(), reader.events(), reader.unterminated(),
                    decoder.fields_ignored(), metrics_path.empty() ? nullptr : &metrics,
                    reader.repairs());
  return true;
}

int run(int argc, char** argv) {
  using namespace jitscope;
  CLI::App app{
      "jitscope-report: compile-time tables from a Chrome trace-event JSON file (jitscope, "
      "clang -ftime-trace, PyTorch profiler) or a Perfetto protobuf trace (.pftrace, jitscope's "
      "JITSCOPE_FORMAT=perfetto; known by its first bytes, same results as the JSON form), read "
      "as a stream; .json.gz / .pftrace.gz (gzip'd) traces and metrics files are read directly.\n"
      "Sections: header, compile_times (count/total/mean/min/max/p50/p90/p99/stddev per span "
      "name), phases "
      "(inclusive and self time per name), units (per compile unit: wall time, time per phase, "
      "--metrics records), top_spans (the slowest spans), gpu (kernels per compile unit that "
      "built them, compile-to-first-launch latency), caches (lookups per cache layer, and why "
      "each miss missed: the key parts that differ from the nearest earlier key; "
      "CompileUnit::cache_lookup), autotune (per tuning session: trials, compile and benchmark "
      "time, wall time, time to the winner, time on trials that did not win; "
      "jitscope::Autotune), critical_path (the units the run's wall time waited for: from the "
      "unit that ended last, back through the unit each waited for, CompileUnit::waits_for, or "
      "ran after on its thread; its share of the wall against the work summed over threads and "
      "processes).\n"
      "Compare runs: --baseline BASE [--baseline BASE2...] NEW [NEW2...]: per span name, compile "
      "unit (by unit_key) and GPU kernel, what is slower or faster beyond the runs' spread, "
      "added or removed (docs/tools.md, 'Comparing runs'); --fail-if-slower PCT exits 3 on a "
      "regression, 4 when nothing could be compared.\n"
      "--format html: one self-contained page (no network; opens from file://): summary, sortable "
      "and paged units table with each unit's phase waterfall, metrics record and artifact links, "
      "compile-time histograms, GPU attribution, a timeline of units per thread, and with "
      "--baseline the comparison (docs/report-html.md).",
      "jitscope-report"};
  std::string format = "table", output;
  std::vector<std::string> traces, metrics_paths, baselines, base_metrics;
  report::CompareOptions copt;
  double min_change_ms = 1.0, fail_pct = 0;
  std::string gate_on = "total";
  std::size_t top = 10;
  std::size_t waterfall_units = report::Aggregator::kDefaultWaterfallUnits;
  std::vector<std::string> sections;
  app.add_option("TRACE", traces,
                 "the trace: a Chrome trace-event JSON file, plain or gzip'd (.json.gz, known by "
                 "its first bytes), '-' for stdin; with --baseline, the new runs' traces")
      ->required();
  app.add_option("--metrics", metrics_paths,
                 "jitscope's metrics file (JITSCOPE_METRICS, JSON lines; plain or gzip'd, "
                 ".jsonl.gz) to join per compile unit; with --baseline, one per new trace, in "
                 "order")
      ->allow_extra_args(false);
  auto* base_opt =
      app.add_option("--baseline", baselines,
                     "compare: a baseline run's trace (repeat for several runs); TRACE... are "
                     "the new runs")
          ->allow_extra_args(false);
  auto* base_metrics_opt =
      app.add_option("--baseline-metrics", base_metrics,
                     "compare: a baseline run's metrics file, one per --baseline, in order")
          ->allow_extra_args(false);
  auto* threshold_opt =
      app.add_option("--threshold", copt.threshold_pct,
                     "compare: flag a change of the median by more than PCT % of the baseline "
                     "(default 10), --min-change-ms and the runs' spread")
          ->check(finite_in(0, 1e9));
  auto* min_change_opt = app.add_option("--min-change-ms", min_change_ms,
                                        "compare: and by at least MS milliseconds (default 1)")
                             ->check(finite_in(0, 1e9));
  auto* spread_opt =
      app.add_option("--spread-factor", copt.spread_factor,
                     "compare: and by more than K times the larger run-to-run spread (max - min) "
                     "of the two sides' runs (default 1; 0: no noise test)")
          ->check(finite_in(0, 1e6));
  auto* gate_opt = app.add_option("--gate-on", gate_on,
                                  "compare: judge total time (default) or self time (a name's "
                                  "time outside the spans nested in it, a unit's outside its "
                                  "phases: only the pass that got slower fails)")
                       ->check(CLI::IsMember({"total", "self"}));
  auto* fail_opt = app.add_option("--fail-if-slower", fail_pct,
                                  "compare: exit 3 when a name, unit or kernel is slower than "
                                  "PCT % (and --min-change-ms, and the runs' spread); exit 4 "
                                  "when no name, unit or kernel is in both sides")
                       ->check(finite_in(0, 1e9));
  app.add_option("--format,-f", format,
                 "table (default), csv, json, markdown or html (one self-contained page; "
                 "artifact links relative to the --output file's folder)")
      ->check(CLI::IsMember({"table", "csv", "json", "markdown", "html"}));
  app.add_option("--top,-n", top, "how many of the slowest spans to list (default 10)")
      ->check(CLI::Range(std::size_t{0}, std::size_t{1000000}));
  app.add_option("--waterfall-units", waterfall_units,
                 "json and html: how many units keep their phase waterfall, the slowest by "
                 "wall time (default 1000; each holds up to 128 spans, so memory stays flat "
                 "over millions of units)")
      ->check(CLI::Range(std::size_t{0}, std::size_t{100000000}));
  app.add_option("--section,-s", sections,
                 "only these sections (repeat or comma-separate): header, compile_times, phases, "
                 "units, top_spans, gpu, caches, autotune, critical_path (or with '-' for '_')")
      ->delimiter(',')
      ->transform(CLI::IsMember({"header", "compile_times", "phases", "units", "top_spans", "gpu",
                                 "caches", "autotune", "critical_path"},
                                [](std::string s) {  // compile-times == compile_times
                                  std::replace(s.begin(), s.end(), '-', '_');
                                  return s;
                                }));
  app.add_option("--output,-o", output, "write the report here instead of stdout");
  bool small_pages = false;
  app.add_flag("--no-huge-pages", small_pages,
               "leave malloc as it is: by default the heap asks for 2 MiB pages (about a "
               "quarter less CPU on large traces, a few percent more peak memory)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help
    return error(std::string(e.what()) + " (run with --help for usage)", kUsage);
  }
  if (!small_pages) tools::prefer_huge_pages();
  const bool comparing = base_opt->count() > 0;
  if (!comparing) {
    for (const CLI::Option* o :
         {base_metrics_opt, threshold_opt, min_change_opt, spread_opt, gate_opt, fail_opt}) {
      if (o->count() > 0)
        return error(o->get_name() + " compares runs: it needs --baseline", kUsage);
    }
    if (traces.size() > 1)
      return error("one TRACE (several are for comparing runs, with --baseline)", kUsage);
    if (metrics_paths.size() > 1)
      return error("one --metrics (several are for comparing runs, with --baseline)", kUsage);
  } else {
    if (metrics_paths.size() > traces.size())
      return error("more --metrics than new traces (one per new trace, in order)", kUsage);
    if (base_metrics.size() > baselines.size())
      return error("more --baseline-metrics than --baseline traces (one per baseline, in order)",
                   kUsage);
    copt.min_change_ns = static_cast<std::int64_t>(std::llround(min_change_ms * 1e6));
    copt.gate_on = gate_on == "self" ? report::GateOn::kSelf : report::GateOn::kTotal;
    if (fail_opt->count() > 0) copt.fail_if_slower_pct = fail_pct;
  }
  // stdin can be read once: by one trace or one metrics file.
  if (std::count(traces.begin(), traces.end(), "-") +
          std::count(baselines.begin(), baselines.end(), "-") +
          std::count(metrics_paths.begin(), metrics_paths.end(), "-") +
          std::count(base_metrics.begin(), base_metrics.end(), "-") >
      1)
    return error("'-' (stdin) can be one input only", kUsage);
  // --output never replaces an input (a trace or metrics file, by any path,
  // hard link or symbolic link; stdin's file too): merge refuses it alike.
  if (!output.empty()) {
    for (const auto* inputs : {&traces, &baselines, &metrics_paths, &base_metrics}) {
      for (const std::string& in : *inputs) {
        if (tools::same_file(output, in))
          return error((in == "-" ? "<stdin>" : in) + " is both an input and the output");
      }
    }
  }
  report::CompareSections csec;
  std::optional<report::Comparison> comparison;
  report::Report r;
  std::string why;

  report::Sections sec;
  if (!sections.empty()) {
    sec = report::Sections{false, false, false, false, false, false, false, false, false};
    for (const std::string& s : sections) {
      if (s == "header") sec.header = true;
      if (s == "compile_times") sec.compile_times = true;
      if (s == "phases") sec.phases = true;
      if (s == "units") sec.units = true;
      if (s == "top_spans") sec.top_spans = true;
      if (s == "gpu") sec.gpu = true;
      if (s == "caches") sec.caches = true;
      if (s == "autotune") sec.autotune = true;
      if (s == "critical_path") sec.critical_path = true;
    }
  }
  report::Format fmt = report::Format::kTable;
  if (format == "csv") fmt = report::Format::kCsv;
  if (format == "json") fmt = report::Format::kJson;
  if (format == "markdown") fmt = report::Format::kMarkdown;
  if (format == "html") fmt = report::Format::kHtml;

  report::Aggregator::Options opt;
  opt.top_n = top;
  opt.waterfall_units = waterfall_units;
  // Only the JSON and HTML forms show waterfalls: the others keep none.
  if (fmt != report::Format::kJson && fmt != report::Format::kHtml) opt.waterfall_units = 0;
  if (!baselines.empty()) {
    if (!sections.empty()) {
      csec = report::CompareSections{false, false, false, false};
      for (const std::string& s : sections) {
        if (s == "header") csec.header = true;
        if (s == "compile_times" || s == "phases") csec.names = true;
        if (s == "units") csec.units = true;
        if (s == "gpu") csec.kernels = true;
      }
    }
    // The HTML page shows the first new run's report too, slowest spans included.
    if (fmt != report::Format::kHtml) opt.top_n = 0;
    std::vector<report::Report> base, next;
    for (std::size_t i = 0; i < baselines.size(); ++i) {
      base.emplace_back();
      if (!read_report(baselines[i], i < base_metrics.size() ? base_metrics[i] : "", opt,
                       &base.back(), &why))
        return error(why);
    }
    for (std::size_t i = 0; i < traces.size(); ++i) {
      next.emplace_back();
      if (!read_report(traces[i], i < metrics_paths.size() ? metrics_paths[i] : "", opt,
                       &next.back(), &why))
        return error(why);
    }
    comparison = report::compare(base, next, copt);
    if (fmt == report::Format::kHtml) r = std::move(next.front());
  } else {
    if (!read_report(traces.front(), metrics_paths.empty() ? "" : metrics_paths.front(), opt, &r,
                     &why))
      return error(why);
  }
  // stdout, or the file through OutputFile (a regular file by rename, a
  // device or FIFO in place, a link followed, a directory refused).
  tools::OutputFile file("the report");
  if (!output.empty() && !file.open(output, &why)) return error(why);
  bool written = true;
  const report::Writer write = [&](std::string_view piece) {
    if (!written) return;
    if (output.empty()) {
      if (std::fwrite(piece.data(), 1, piece.size(), stdout) != piece.size()) {
        written = false;
        why = std::string("<stdout>: cannot write the report: ") + std::strerror(errno);
      }
    } else if (!file.write(piece, &why)) {
      written = false;
    }
  };
  if (fmt == report::Format::kHtml) {
    // Artifact links are relative to the page's folder (stdout: the current one).
    namespace fs = std::filesystem;
    std::error_code ec;
    fs::path base = fs::current_path(ec);
    if (!output.empty()) base = fs::absolute(fs::path(output), ec).parent_path();
    if (ec) base.clear();  // unknown: artifact links stay file:// URLs
    report::render_html(r, sec, comparison ? &*comparison : nullptr, &csec,
                        report::HtmlOptions{base.lexically_normal().string()}, write);
  } else if (comparison) {
    report::render_comparison(*comparison, fmt, csec, write);
  } else {
    report::render(r, fmt, sec, write);
  }
  if (written && output.empty() && std::fflush(stdout) != 0) {
    written = false;
    why = std::string("<stdout>: cannot write the report: ") + std::strerror(errno);
  }
  if (written && !output.empty() && !file.commit(&why)) written = false;
  if (!written) return error(why);
  if (comparison && comparison->failing > 0) {
    std::fprintf(stderr, "%s\n", report::verdict(*comparison).c_str());
    return kRegression;
  }
  if (comparison && copt.fail_if_slower_pct && comparison->compared == 0) {
    return error(
        "nothing to compare: no span name, unit or kernel is in both the baseline and the new "
        "runs (an empty or unrelated trace?)",
        kNothingCompared);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::bad_alloc&) {
    return error("out of memory");
  } catch (const std::exception& e) {
    return error(e.what());
  }
}
