// jitscope-merge's two passes over one input's events.
//
// InputScanner (pass 1) fills an InputScan: pids, process names, the
// jitscope_session clock metadata, children, beginningOfTime.
// EventRewriter (pass 2) writes an event into the merged trace with its pid
// mapped, its ts shifted, its flow/async ids renumbered and its process name
// labelled. Every other byte of the event is copied as written: only the
// tokens that change are replaced (numbers keep their spelling, unknown
// fields pass through).
#pragma once

#include "merge_plan.hpp"
#include "trace_reader.hpp"

#include <simdjson.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace jitscope::tools::merge {

class InputScanner {
 public:
  explicit InputScanner(InputScan* scan) : scan_(scan) {}
  // false and *error ("<path>: byte N: ...") for an event it cannot read.
  bool add(const RawEvent& event, std::string* error);
  void add_top_level(const TopLevelField& field);

 private:
  bool read_session(std::string_view args, const char* buffer_end);
  InputScan* scan_;
  simdjson::ondemand::parser parser_;
  simdjson::ondemand::parser args_parser_;
  simdjson::dom::parser validator_;
};

class EventRewriter {
 public:
  // next_flow_id is shared by all inputs, so renumbered ids never meet.
  EventRewriter(const InputScan& scan, const InputPlan& plan, std::int64_t* next_flow_id)
      : scan_(scan), plan_(plan), next_flow_id_(next_flow_id) {}
  // Appends the rewritten event to *out (no separator). false and *error if
  // the event cannot be read.
  bool rewrite(const RawEvent& event, std::string* out, std::string* error);
  // process_name events for this input's pids that have none of their own.
  std::vector<std::string> missing_process_names() const;

 private:
  struct Splice {
    std::size_t at = 0, length = 0;
    std::string text;
  };
  std::int64_t flow_id(std::string_view token);
  const InputScan& scan_;
  const InputPlan& plan_;
  std::int64_t* next_flow_id_;
  std::unordered_map<std::string, std::int64_t> flow_ids_;  // this input's id token -> new id
  simdjson::ondemand::parser parser_;
  std::vector<Splice> splices_;
};

// The jitscope_merge metadata event the merged trace ends with: the
// reference input, and per input its rank, path, host, alignment, shift and
// pid map (scans[i] goes with plan.inputs[i]).
std::string merge_metadata(const std::vector<InputScan>& scans, const MergePlan& plan);

// ns -> µs with three decimals, negative values too ("-1.500").
void append_signed_us(std::string* out, std::int64_t ns);

}  // namespace jitscope::tools::merge
