// jitscope-report: compile-time tables from any Chrome trace-event JSON file
// (jitscope's, `clang -ftime-trace`, PyTorch profiler traces), streamed.
//
//   jitscope-report TRACE [--metrics FILE] [--format table|csv|json|markdown]
//                   [--top N] [--section NAME[,NAME...]] [--output FILE]
//
// Exit status: 0 done, 1 bad input (unreadable, not a trace, truncated
// inside the object form, an event over 256 MiB, a bad metrics line) or an
// unwritable output, 2 bad usage. Errors are one line on stderr:
// "jitscope-report: error: ...". What the reader repairs (a BOM, a trailing
// ',', an array cut inside its last event, invalid UTF-8) is a header
// warning, not an error.
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
// place; a symbolic link followed (the link stays); a directory refused.
#include "aggregator.hpp"
#include "metrics.hpp"
#include "render.hpp"

#include <event_decoder.hpp>
#include <output_file.hpp>
#include <trace_reader.hpp>

#include <CLI/CLI.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <new>
#include <string>
#include <vector>

namespace {

constexpr int kBadInput = 1;
constexpr int kUsage = 2;

int error(const std::string& what, int code = kBadInput) {
  std::fprintf(stderr, "jitscope-report: error: %s\n", what.c_str());
  return code;
}

int run(int argc, char** argv) {
  using namespace jitscope;
  CLI::App app{
      "jitscope-report: compile-time tables from a Chrome trace-event JSON file (jitscope, "
      "clang -ftime-trace, PyTorch profiler), read as a stream.\n"
      "Sections: header, compile_times (count/total/mean/min/max per span name), phases "
      "(inclusive and self time per name), units (per compile unit: wall time, time per phase, "
      "--metrics records), top_spans (the slowest spans), gpu (kernels per compile unit that "
      "built them, compile-to-first-launch latency).",
      "jitscope-report"};
  std::string trace, metrics_path, format = "table", output;
  std::size_t top = 10;
  std::vector<std::string> sections;
  app.add_option("TRACE", trace, "the trace: a Chrome trace-event JSON file, '-' for stdin")
      ->required();
  app.add_option("--metrics", metrics_path,
                 "jitscope's metrics file (JITSCOPE_METRICS, JSON lines) to join per compile unit");
  app.add_option("--format,-f", format, "table (default), csv, json or markdown")
      ->check(CLI::IsMember({"table", "csv", "json", "markdown"}));
  app.add_option("--top,-n", top, "how many of the slowest spans to list (default 10)")
      ->check(CLI::Range(std::size_t{0}, std::size_t{1000000}));
  app.add_option("--section,-s", sections,
                 "only these sections (repeat or comma-separate): header, compile_times, phases, "
                 "units, top_spans, gpu (or with '-' for '_')")
      ->delimiter(',')
      ->transform(CLI::IsMember({"header", "compile_times", "phases", "units", "top_spans", "gpu"},
                                [](std::string s) {  // compile-times == compile_times
                                  std::replace(s.begin(), s.end(), '-', '_');
                                  return s;
                                }));
  app.add_option("--output,-o", output, "write the report here instead of stdout");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help
    return error(std::string(e.what()) + " (run with --help for usage)", kUsage);
  }

  report::Sections sec;
  if (!sections.empty()) {
    sec = report::Sections{false, false, false, false, false, false};
    for (const std::string& s : sections) {
      if (s == "header") sec.header = true;
      if (s == "compile_times") sec.compile_times = true;
      if (s == "phases") sec.phases = true;
      if (s == "units") sec.units = true;
      if (s == "top_spans") sec.top_spans = true;
      if (s == "gpu") sec.gpu = true;
    }
  }
  report::Format fmt = report::Format::kTable;
  if (format == "csv") fmt = report::Format::kCsv;
  if (format == "json") fmt = report::Format::kJson;
  if (format == "markdown") fmt = report::Format::kMarkdown;

  report::MetricsFile metrics;
  std::string why;
  if (!metrics_path.empty() && !report::read_metrics(metrics_path, &metrics, &why))
    return error(why);

  report::Aggregator::Options opt;
  opt.top_n = top;
  report::Aggregator agg(opt);
  tools::TraceReader reader;
  tools::EventDecoder decoder;
  tools::DecodedEvent ev;
  const std::string label = trace == "-" ? "<stdin>" : trace;
  const bool ok = reader.read(
      trace,
      [&](const tools::RawEvent& raw) {
        if (!decoder.decode(raw, &ev, &why)) {
          why = label + ": " + why;
          return false;
        }
        agg.add(ev, decoder);
        return true;
      },
      nullptr, &why);
  if (!ok) return error(why);
  const report::Report r = agg.finish(label, reader.bytes_read(), reader.events(),
                                      reader.unterminated(), decoder.fields_ignored(),
                                      metrics_path.empty() ? nullptr : &metrics, reader.repairs());
  // stdout, or the file through OutputFile (a regular file by rename, a
  // device or FIFO in place, a link followed, a directory refused).
  tools::OutputFile file("the report");
  if (!output.empty() && !file.open(output, &why)) return error(why);
  bool written = true;
  report::render(r, fmt, sec, [&](std::string_view piece) {
    if (!written) return;
    if (output.empty()) {
      if (std::fwrite(piece.data(), 1, piece.size(), stdout) != piece.size()) {
        written = false;
        why = std::string("<stdout>: cannot write the report: ") + std::strerror(errno);
      }
    } else if (!file.write(piece, &why)) {
      written = false;
    }
  });
  if (written && output.empty() && std::fflush(stdout) != 0) {
    written = false;
    why = std::string("<stdout>: cannot write the report: ") + std::strerror(errno);
  }
  if (written && !output.empty() && !file.commit(&why)) written = false;
  if (!written) return error(why);
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
