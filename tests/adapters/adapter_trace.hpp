// Reading an adapter's spans back from a written trace: per-thread nesting
// from the times alone (no trust in the writer's order), as (name, depth)
// sequences that a test compares with what LLVM or MLIR reported itself.
#pragma once

#include "trace_support.hpp"

#include <algorithm>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace jitscope::testing {

struct TraceSpan {
  std::string name;
  long tid = 0;
  long long begin_ns = 0;
  long long end_ns = 0;
  nlohmann::json args;
  int depth = 0;  // spans of the same selection on the same thread that contain it
};

// An LLVM pass run's span (jitscope::llvm's "ir" arg), not an analysis'.
inline bool is_llvm_pass_span(const nlohmann::json& e) {
  const auto args = e.value("args", nlohmann::json::object());
  return args.contains("ir") && !args.contains("analysis");
}

// The complete events `keep` selects, per thread, in begin order (an outer
// span before the spans it contains), with their depths.
inline std::map<long, std::vector<TraceSpan>> spans_by_thread(
    const nlohmann::json& trace, const std::function<bool(const nlohmann::json&)>& keep) {
  std::map<long, std::vector<TraceSpan>> out;
  for (const nlohmann::json& e : events_with_ph(trace, "X")) {
    if (!keep(e)) continue;
    TraceSpan s;
    s.name = e["name"].get<std::string>();
    s.tid = e["tid"].get<long>();
    s.begin_ns = to_ns(e["ts"]);
    s.end_ns = s.begin_ns + to_ns(e["dur"]);
    s.args = e.value("args", nlohmann::json::object());
    out[s.tid].push_back(std::move(s));
  }
  for (auto& [tid, spans] : out) {
    std::stable_sort(spans.begin(), spans.end(), [](const TraceSpan& a, const TraceSpan& b) {
      return a.begin_ns != b.begin_ns ? a.begin_ns < b.begin_ns : a.end_ns > b.end_ns;
    });
    std::vector<long long> open_ends;
    for (TraceSpan& s : spans) {
      while (!open_ends.empty() && open_ends.back() <= s.begin_ns) open_ends.pop_back();
      s.depth = static_cast<int>(open_ends.size());
      open_ends.push_back(s.end_ns);
    }
  }
  return out;
}

// Spans on one thread that overlap without one containing the other; empty
// when the thread's spans nest properly. Each entry names both spans.
inline std::vector<std::string> overlaps(const std::vector<TraceSpan>& spans) {
  std::vector<std::string> bad;
  std::vector<const TraceSpan*> open;
  for (const TraceSpan& s : spans) {
    while (!open.empty() && open.back()->end_ns <= s.begin_ns) open.pop_back();
    if (!open.empty() && s.end_ns > open.back()->end_ns) {
      bad.push_back(s.name + " overlaps " + open.back()->name);
    }
    open.push_back(&s);
  }
  return bad;
}

// "name@depth" per span, in order: the shape a test compares.
inline std::vector<std::string> shape(const std::vector<TraceSpan>& spans) {
  std::vector<std::string> out;
  out.reserve(spans.size());
  for (const TraceSpan& s : spans) out.push_back(s.name + "@" + std::to_string(s.depth));
  return out;
}

// The session of the adapters' args tests: the TSC clock where there is
// one, since an adapter's inline path runs only behind the inline clock's
// gate (with another clock every run takes the library's path, which the
// tests would then check alone). `wrap`: a ring of 256 slots that the
// flusher must drain as the pipeline runs (kBlock: nothing dropped), so
// that args' slots wrap at the ring's end.
inline jitscope::Config args_config(const std::string& name, bool wrap = false) {
  jitscope::Config cfg = test_config(name);
#if defined(__x86_64__) || defined(__i386__)
  cfg.clock = jitscope::ClockChoice::kTsc;
#endif
  if (wrap) {
    cfg.ring_capacity = 256;
    cfg.overflow = jitscope::OverflowPolicy::kBlock;
  }
  return cfg;
}

// An MLIR function `symbol` ("@f0", "@\"q\\22\"") of a few arith ops,
// with `location` ("loc(...)") after it, or none.
inline std::string mlir_function_text(const std::string& symbol, const std::string& location = {}) {
  return "func.func " + symbol +
         "(%a: i32) -> i32 {\n"
         "  %c0 = arith.constant 0 : i32\n"
         "  %x = arith.addi %a, %c0 : i32\n"
         "  %y = arith.addi %a, %c0 : i32\n"
         "  %z = arith.muli %x, %y : i32\n"
         "  return %z : i32\n"
         "}" +
         (location.empty() ? "" : " " + location) + "\n";
}

}  // namespace jitscope::testing
