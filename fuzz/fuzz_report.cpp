// fuzz_report: jitscope-report's whole pipeline in process (the steps of
// tools/report/main.cpp): TraceReader -> EventDecoder -> Aggregator ->
// finish -> render in all four formats, plus the metrics reader.
//
// Input: a trace; if it holds a line "#metrics", what follows that line is a
// metrics file (JSON lines) to join. Both are handed over as memfd files
// (/proc/self/fd/N), as a path would be.
// Checked:
// - every outcome is an output or an error: a failed read or metrics file
//   has a non-empty message;
// - the reader is chunk-size blind (trace_reader.hpp/json_scan.hpp): read
//   again with a small chunk (1..61 bytes per read(2); up to size/64 + 60
//   for inputs from 2 KiB), it hands over the
//   same events (bytes and offsets) and ends the same way (same result,
//   message, event count, unterminated flag, repairs);
// - the JSON format always parses (simdjson DOM) as an object with the
//   sections asked for, and its header.events is the reader's count;
// - the table, CSV and Markdown formats are valid UTF-8 (names come out of
//   a JSON parser, so they are; clipping must not cut a character).
// The self-time sort's runs (and so its temporary file and merge) and the
// open-B bounds are shrunk for inputs of odd length, so those paths are
// taken on small inputs too.
// Not covered: --output (temporary file and rename), stdin, huge inputs.
#include "fuzz_support.hpp"

#include <aggregator.hpp>
#include <event_decoder.hpp>
#include <metrics.hpp>
#include <render.hpp>
#include <trace_reader.hpp>

#include <simdjson.h>

#include <string>
#include <string_view>
#include <vector>

namespace {

using namespace jitscope;
using jitscope::fuzz::MemFile;

constexpr std::string_view kMetricsSeparator = "\n#metrics\n";

struct Seen {
  std::string json;
  std::uint64_t offset;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static MemFile trace_file("jitscope-fuzz-trace");
  static MemFile metrics_file("jitscope-fuzz-metrics");
  static simdjson::dom::parser json_parser;

  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const auto parts = jitscope::fuzz::split(input, kMetricsSeparator, 2);
  trace_file.set(parts[0]);

  report::MetricsFile metrics;
  bool with_metrics = false;
  std::string why;
  if (parts.size() == 2) {
    metrics_file.set(parts[1]);
    with_metrics = report::read_metrics(metrics_file.path(), &metrics, &why);
    // jitscope-report stops here; the fuzzer goes on without the metrics.
    FUZZ_CHECK(with_metrics || !why.empty(), parts[1]);
    if (!with_metrics) metrics = {};
  }

  // Pass A: the reader alone, default chunk size.
  std::vector<Seen> seen;
  std::string error_a;
  tools::TraceReader reader_a;
  reader_a.set_decoded_fields(true);  // as jitscope-report reads (fuzz_perfetto checks the text)
  const bool ok_a = reader_a.read(
      trace_file.path(),
      [&](const tools::RawEvent& e) {
        seen.push_back({std::string(e.json), e.offset});
        return true;
      },
      nullptr, &error_a);
  FUZZ_CHECK(ok_a || !error_a.empty(), input);
  FUZZ_CHECK(reader_a.events() == seen.size(), input);

  // Pass B: what jitscope-report does, reading in small chunks.
  report::Aggregator::Options opt;
  opt.top_n = 3;
  if (size % 2 == 1) {  // the self-time sort's runs and merge, the open-B bounds
    opt.self_time_run_spans = 4;
    opt.max_open_begins = 3;
    opt.max_open_begins_total = 5;
  }
  report::Aggregator agg(opt);
  // 1..61 bytes per read for small inputs; larger ones in at most ~64 reads,
  // so one input never costs thousands of read(2) calls.
  tools::TraceReader reader(size < 2048 ? 1 + size % 61 : size / 64 + size % 61);
  reader.set_decoded_fields(true);
  tools::EventDecoder decoder;
  tools::DecodedEvent ev;
  std::size_t index = 0;
  bool stopped = false;  // by a decode error, not by the reader
  why.clear();
  const bool ok = reader.read(
      trace_file.path(),
      [&](const tools::RawEvent& raw) {
        FUZZ_CHECK(
            index < seen.size() && seen[index].json == raw.json && seen[index].offset == raw.offset,
            input);
        ++index;
        if (!decoder.decode(raw, &ev, &why)) {
          FUZZ_CHECK(!why.empty(), raw.json);
          stopped = true;
          return false;
        }
        agg.add(ev, decoder);
        return true;
      },
      nullptr, &why);
  if (stopped) {
    FUZZ_CHECK(!ok, input);
    return 0;  // jitscope-report: one error line, exit 1
  }
  FUZZ_CHECK(ok == ok_a && why == error_a, why + " | " + error_a);
  FUZZ_CHECK(reader.events() == reader_a.events() && index == seen.size(), input);
  FUZZ_CHECK(reader.unterminated() == reader_a.unterminated(), input);
  FUZZ_CHECK(tools::repair_warnings(reader.repairs()) == tools::repair_warnings(reader_a.repairs()),
             input);
  if (!ok) return 0;

  const report::Report r =
      agg.finish("trace.json", reader.bytes_read(), reader.events(), reader.unterminated(),
                 decoder.fields_ignored(), with_metrics ? &metrics : nullptr, reader.repairs());

  // Every format with every section, and JSON again with a subset picked by
  // the input.
  const report::Sections subset{(size & 2) != 0,   (size & 4) != 0,   (size & 8) != 0,
                                (size & 16) != 0,  (size & 32) != 0,  (size & 64) != 0,
                                (size & 128) != 0, (size & 256) != 0, (size & 512) != 0};
  for (int pass = 0; pass < 2; ++pass) {
    const report::Sections sec = pass == 0 ? report::Sections{} : subset;
    for (report::Format f : {report::Format::kJson, report::Format::kTable, report::Format::kCsv,
                             report::Format::kMarkdown}) {
      if (pass == 1 && f != report::Format::kJson) continue;
      std::string out;
      report::render(r, f, sec, [&](std::string_view piece) { out.append(piece); });
      if (f != report::Format::kJson) {
        FUZZ_CHECK(simdjson::validate_utf8(out.data(), out.size()), out);
        continue;
      }
      simdjson::dom::element root;
      const auto err = json_parser.parse(out).get(root);
      FUZZ_CHECK(err == simdjson::SUCCESS, std::string(simdjson::error_message(err)) + ": " + out);
      simdjson::dom::object obj;
      FUZZ_CHECK(root.get_object().get(obj) == simdjson::SUCCESS, out);
      const bool want[] = {sec.header, sec.compile_times, sec.phases,
                           sec.units,  sec.top_spans,     sec.gpu,
                           sec.caches, sec.autotune,      sec.critical_path};
      static_assert(std::size(want) == std::size(report::kSectionNames),
                    "a section's flag for each of its names");
      for (std::size_t i = 0; i < std::size(report::kSectionNames); ++i) {
        simdjson::dom::element s;
        FUZZ_CHECK((obj[report::kSectionNames[i]].get(s) == simdjson::SUCCESS) == want[i], out);
      }
      if (sec.header) {
        std::uint64_t events = 0;
        FUZZ_CHECK(obj["header"]["events"].get_uint64().get(events) == simdjson::SUCCESS &&
                       events == reader.events(),
                   out);
      }
    }
  }
  return 0;
}
