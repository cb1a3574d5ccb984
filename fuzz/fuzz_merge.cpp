// fuzz_merge: jitscope-merge's pipeline in process (the steps of
// tools/merge/main.cpp run()): pass 1 (TraceReader + InputScanner), plan(),
// pass 2 (EventRewriter, missing process names, the jitscope_merge
// metadata event), into a string instead of a file.
//
// Input: one to three traces, separated by a line "#input". Each is handed
// over as a memfd file (/proc/self/fd/N), read twice as main.cpp does.
// plan() runs as the command line would by default; if it refuses (no
// clock metadata), again with --assume-same-clock, so pass 2 runs on most
// inputs. --children is not followed (it opens the paths a trace names).
// Checked:
// - every failure (pass 1, plan, pass 2) has a non-empty message;
// - pass 2 sees as many events as pass 1 (same bytes);
// - a merged trace always parses (simdjson DOM, strict JSON) as an array of
//   objects: the metadata event, the added process names and every input
//   event, so the count is exact;
// - jitscope-report's reader and decoder take every event of it.
// Not covered: the output file (temporary + rename), --children.
#include "fuzz_support.hpp"

#include <event_decoder.hpp>
#include <event_rewriter.hpp>
#include <merge_plan.hpp>
#include <trace_reader.hpp>

#include <simdjson.h>

#include <string>
#include <string_view>
#include <vector>

namespace {

using namespace jitscope::tools;
using namespace jitscope::tools::merge;
using jitscope::fuzz::MemFile;

constexpr std::string_view kInputSeparator = "\n#input\n";
constexpr std::size_t kMaxInputs = 3;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static MemFile files[kMaxInputs] = {MemFile("jitscope-fuzz-merge-0"),
                                      MemFile("jitscope-fuzz-merge-1"),
                                      MemFile("jitscope-fuzz-merge-2")};
  static simdjson::dom::parser json_parser;

  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const auto parts = jitscope::fuzz::split(input, kInputSeparator, kMaxInputs);

  // Pass 1.
  std::vector<InputScan> scans;
  TraceReader reader;
  std::string error;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    files[i].set(parts[i]);
    InputScan scan;
    scan.path = files[i].path();
    InputScanner scanner(&scan);
    error.clear();
    const bool ok = reader.read(
        scan.path, [&](const RawEvent& e) { return scanner.add(e, &error); },
        [&](const TopLevelField& f) { scanner.add_top_level(f); }, &error);
    if (!ok) {
      FUZZ_CHECK(!error.empty(), parts[i]);
      return 0;
    }
    FUZZ_CHECK(scan.events == reader.events(), parts[i]);
    scans.push_back(std::move(scan));
  }

  MergePlan plan;
  error.clear();
  if (!jitscope::tools::merge::plan(scans, PlanOptions{}, &plan, &error)) {
    FUZZ_CHECK(!error.empty(), input);
    plan = {};
    error.clear();
    PlanOptions same_clock;
    same_clock.assume_same_clock = true;
    if (!jitscope::tools::merge::plan(scans, same_clock, &plan, &error)) {
      FUZZ_CHECK(!error.empty(), input);
      return 0;
    }
  }
  FUZZ_CHECK(plan.inputs.size() == scans.size() && plan.reference >= 0 &&
                 static_cast<std::size_t>(plan.reference) < scans.size(),
             input);

  // Pass 2.
  std::string out = "[\n";
  std::uint64_t events = 0;
  auto next = [&]() -> std::string& {
    if (events++ != 0) out.append(",\n");
    return out;
  };
  next().append(merge_metadata(scans, plan));
  std::int64_t next_flow_id = 1;
  for (std::size_t i = 0; i < scans.size(); ++i) {
    EventRewriter rewriter(scans[i], plan.inputs[i], &next_flow_id);
    for (const std::string& e : rewriter.missing_process_names()) next().append(e);
    error.clear();
    const bool ok = reader.read(
        scans[i].path, [&](const RawEvent& e) { return rewriter.rewrite(e, &next(), &error); },
        nullptr, &error);
    if (!ok) {
      FUZZ_CHECK(!error.empty(), parts[i]);
      return 0;
    }
    FUZZ_CHECK(reader.events() == scans[i].events, parts[i]);
  }
  out.append("\n]\n");

  simdjson::dom::element root;
  const auto err = json_parser.parse(out).get(root);
  FUZZ_CHECK(err == simdjson::SUCCESS, std::string(simdjson::error_message(err)) + ": " + out);
  simdjson::dom::array arr;
  FUZZ_CHECK(root.get_array().get(arr) == simdjson::SUCCESS, out);
  std::uint64_t n = 0;
  for (simdjson::dom::element e : arr) {
    FUZZ_CHECK(e.is_object(), out);
    ++n;
  }
  FUZZ_CHECK(n == events, out);

  // What jitscope-report reads a merged trace with takes every event.
  static MemFile merged("jitscope-fuzz-merged");
  merged.set(out);
  EventDecoder decoder;
  DecodedEvent ev;
  error.clear();
  const bool read_back = reader.read(
      merged.path(), [&](const RawEvent& e) { return decoder.decode(e, &ev, &error); }, nullptr,
      &error);
  FUZZ_CHECK(read_back && reader.events() == events && !reader.unterminated(), error + ": " + out);
  return 0;
}
