// What the jitscope-report tests share: running a program (a hang is a
// failure, never a stuck test), temporary traces, and the independent
// totals: compute() reads a trace with nlohmann::json and works out, by the
// rules docs/tools.md states, what the report's JSON must hold, and
// expect_matches() compares the two exactly.
// Used by the report_*_test.cpp files (report_gate_test and
// report_failures_test build their traces with unit_event, unit_span and
// trace_of); report_support.cpp is compiled once for all of them.
#pragma once

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstddef>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

namespace jitscope::testing::report {

using nlohmann::json;

struct Result {
  int code = -1;
  bool signaled = false;
  int signal = 0;
  bool timed_out = false;
  std::string out, err;
};

// Runs argv[0] with stdout/stderr captured and stdin from `in`; kills it
// after `timeout`.
Result run(const std::vector<std::string>& args, const std::string& in = "/dev/null",
           std::chrono::seconds timeout = std::chrono::seconds(120));
// jitscope-report with `args`.
Result report(std::vector<std::string> args, const std::string& in = "/dev/null");
// The report with --format json, parsed; expects exit 0 and no stderr.
json report_json(std::vector<std::string> args);
// `content` in a fresh temporary file; its path.
std::string write_temp(const std::string& stem, const std::string& content);

// Time in ns from a ts/dur number (three decimals at most in these traces).
long long ns_of(const json& v);

inline constexpr long long kMs = 1'000'000;  // ns

// The --baseline rows of one section of a report, by name.
std::map<std::string, json> rows(const json& rep, const char* section);

struct Totals {
  struct Name {
    unsigned long long count = 0;
    long long total = 0, min = 0, max = 0, self = 0;
  };
  struct Phase {
    unsigned long long count = 0;
    long long total = 0, self = 0;
  };
  struct Unit {
    long long wall = -1, start = 0, end = 0, own_end = -1;
    unsigned long long slices = 0;
    std::set<std::string> threads;
    std::map<std::string, Phase> phases;
  };
  struct Span {
    long long start, end;
    std::size_t order;  // the event's position (a B/E pair: its B's)
    bool from_x;
    std::string name;  // empty: a compile-unit slice (nests others, no row)
    std::string phase_unit;
    bool gpu = false;  // on a GPU's stream track (args device and stream)
  };
  std::map<std::string, Name> names;      // host spans
  std::map<std::string, Name> gpu_names;  // GPU work: the report's gpu.names
  std::map<std::string, Unit> units;
  std::vector<std::tuple<long long, long long, std::size_t, std::string, std::string>>
      top;  // -dur, ts, seq, name, unit (host spans)
  unsigned long long events = 0, spans = 0;
};

Totals compute(const json& events);
// The report's JSON against the totals, exactly.
void expect_matches(const json& rep, const Totals& t, std::size_t top_n);
// A trace file's events (array or object form, cut or not).
json load_events(const std::string& path);

// ns as a ts/dur token in µs, exact.
std::string us(long long ns);
// An X event on pid 1.
std::string x_event(const char* name, long long start, long long dur, int tid = 1);
// A compile-unit slice on pid 1 ("[cid] name", cat compile_unit), and a span
// inside a unit; `args` are more members of args, as JSON text without braces
// (R"("unit_key":"fwd","frame":"fwd")").
std::string unit_event(const std::string& cid, const std::string& name, long long start,
                       long long dur, int tid = 1, const std::string& args = "");
std::string unit_span(const std::string& cid, const std::string& name, long long start,
                      long long dur, int tid = 1, const std::string& args = "");
// The same event in process `pid` (the helpers above write pid 1).
std::string in_pid(std::string event, int pid);
// A trace file (array form) of these events; its path.
std::string trace_of(const std::vector<std::string>& events, const std::string& stem = "trace");

// One "jitscope-report: error: " line holding `fragment`, exit `code`, no output.
void expect_error(const Result& r, int code, const std::string& fragment, const std::string& what);

}  // namespace jitscope::testing::report
