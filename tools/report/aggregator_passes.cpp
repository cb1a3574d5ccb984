// Aggregator: compiler passes and the pipelines they ran in.
//
// A span name is a pass when its first span with args (on its B or E for
// a B/E pair) has "ir" (the LLVM adapter's) or "pass" (the MLIR adapter's,
// and any pass manager that marks its spans so), not null, and is not an
// analysis ("analysis": true, or "true"). A pipeline is
// the span that ran passes at its top: the span an outermost pass run (one
// whose parent is not a pass) nests in, named by that span's name ("lower"
// for a phase "lower" holding a PassManager's run), "(compile unit)" when
// the passes ran directly in a unit's slice, "(no enclosing span)" for
// passes outside every span of their thread. MLIR's nested pipelines (its
// adapter's "pipeline" spans, inside an adaptor pass or on a worker
// thread) are pipelines of their own, named "pipeline": their time is in
// the adaptor's pipeline too. One run of a pipeline is one
// such span; its time is the time of the outermost pass runs inside it (the
// pass manager's own time between passes is the span's, not the
// pipeline's). Self time hands spans over children first, so a run's
// passes are summed before its span closes.
#include "aggregator.hpp"
#include "aggregator_state.hpp"

#include <algorithm>

namespace jitscope::report {

void Aggregator::classify_pass(std::uint32_t name, const tools::DecodedEvent& ev,
                               tools::EventDecoder& decoder) {
  NameStats& n = names_[name];
  if (n.pass != NameStats::Pass::kUndecided || !ev.has_args) return;
  std::string_view raw;
  const auto has = [&](std::string_view key) {
    return decoder.arg(ev, key, &raw) && raw != "null";
  };
  const bool marked = has("ir") || has("pass");
  const bool analysis = decoder.arg(ev, "analysis", &raw) && (raw == "true" || raw == "\"true\"");
  n.pass = marked && !analysis ? NameStats::Pass::kYes : NameStats::Pass::kNo;
}

void Aggregator::pipeline_step(const TimedSpan& s, const TimedSpan* parent) {
  if (!pipeline_runs_.empty()) {  // s ran passes at its top: that run of its pipeline ends
    const auto run = pipeline_runs_.find(s.order);
    if (run != pipeline_runs_.end()) {
      end_pipeline_run(run->second.first, run->second.second);
      pipeline_runs_.erase(run);
    }
  }
  if (s.name == kNone || names_[s.name].pass != NameStats::Pass::kYes) return;
  const bool in_pass = parent != nullptr && parent->name != kNone &&
                       names_[parent->name].pass == NameStats::Pass::kYes;
  if (in_pass) return;  // its time is in the outermost pass around it
  const std::int64_t ns = s.end - s.start;
  if (parent == nullptr) {  // a run of its own
    end_pipeline_run(kNone, ns);
    return;
  }
  auto& run = pipeline_runs_[parent->order];
  run.first = parent->name == kNone ? kUnitPipeline : parent->name;
  run.second = sat_add(run.second, ns);
}

std::int64_t ir_size_arg(tools::EventDecoder& decoder, const tools::DecodedEvent& ev,
                         std::string_view key) {
  std::int64_t n = -1;
  // A count written as a number: "12" (not "12.5", "-3", "\"12\"" or past 2^62).
  if (!decoder.arg_integer(ev, key, &n) || n < 0 || n > kMaxIrSize) return -1;
  return n;
}

void Aggregator::ir_sizes(std::uint32_t name, std::int64_t dur, const tools::DecodedEvent& ev,
                          tools::EventDecoder& decoder, std::int64_t before) {
  // Passes only: their names are decided, and the other spans pay no lookup.
  if (!ev.has_args || names_[name].pass != NameStats::Pass::kYes) return;
  const std::int64_t after = ir_size_arg(decoder, ev, "ir_size_after");
  if (after < 0) return;
  if (before < 0) before = ir_size_arg(decoder, ev, "ir_size_before");
  if (before < 0) return;
  IrGrowthRow& g = ir_growth_[name];
  // Saturating: a hand-made trace's sizes stay below 2^62 each, not their sums.
  if (g.runs == 0 || after - before > g.largest) {
    g.largest = after - before;
    g.largest_before = before;
  }
  ++g.runs;
  g.before = sat_add(g.before, before);
  g.after = sat_add(g.after, after);
  g.total_ns = sat_add(g.total_ns, dur);
}

void Aggregator::ir_growth_rows(Report& r) const {
  for (const auto& [name, g] : ir_growth_) {
    r.ir_growth.push_back(g);
    r.ir_growth.back().pass = names_[name].name;
  }
  std::sort(r.ir_growth.begin(), r.ir_growth.end(), [](const IrGrowthRow& a, const IrGrowthRow& b) {
    return a.growth() != b.growth() ? a.growth() > b.growth() : a.pass < b.pass;
  });
}

void Aggregator::end_pipeline_run(std::uint32_t name, std::int64_t ns) { pipelines_[name].add(ns); }

void Aggregator::pipeline_rows(Report& r) {
  for (const auto& [name, p] : pipelines_) {
    std::string label = name == kNone           ? "(no enclosing span)"
                        : name == kUnitPipeline ? "(compile unit)"
                                                : names_[name].name;
    // Its time is all its passes': no self time apart from the total.
    r.pipelines.push_back(p.row(std::move(label), p.total, GpuWork::kNone));
  }
  std::sort(r.pipelines.begin(), r.pipelines.end(), [](const NameRow& a, const NameRow& b) {
    return a.total_ns != b.total_ns ? a.total_ns > b.total_ns : a.name < b.name;
  });
}

}  // namespace jitscope::report
