// jitscope-merge's plan: what each input is, how its clock lines up with the
// others, and which pid each of its processes gets in the merged trace.
//
// Pass 1 (scan_input) reads every input once and fills an InputScan. plan()
// then decides, from the scans alone, the shift of each input's timestamps
// and its pid map, or refuses with the reason. Pass 2 (event_rewriter.hpp)
// rewrites the events. Pure functions here, so the rules are unit-tested
// without files (tests/tools/merge_test.cpp).
//
// Alignment rules (docs/tools.md):
// - jitscope traces carry their session start on two clocks (CLOCK_MONOTONIC,
//   which timestamps use, and CLOCK_REALTIME) plus the host's boot_id.
//   Traces from one boot share CLOCK_MONOTONIC: shift 0, exact.
// - Traces from different boots or machines meet on the wall clock: each
//   is shifted by the difference of its (realtime - monotonic) offset to the
//   reference's. As good as the machines' clock sync (NTP: ~ms).
// - A trace with "beginningOfTime" (clang -ftime-trace: µs since the epoch,
//   events relative to it) meets the others on the wall clock too.
// - Anything else cannot be placed: refused, unless --assume-same-clock.
//
// Pid rules: a pid only one input uses keeps its number; a shared one gets
// a fresh number above every pid in the inputs. A jitscope GPU process (pid
// 10000000 * (device + 1) + host pid) moves with its host: if either is
// shared, the host gets a fresh pid below 10000000 (above every host pid in
// the inputs) and the GPU process 10000000 * (device + 1) + that pid, so a
// kernel still names the process that launched it (jitscope-report's GPU
// attribution).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace jitscope::tools::merge {

// One child listed by a jitscope_child metadata event (note_child_process).
struct ChildTrace {
  std::int64_t pid = 0;
  std::string trace;  // as recorded: absolute, or relative to the parent trace's folder
  std::string label;
};

// What pass 1 learns about one input.
struct InputScan {
  std::string path;
  std::uint64_t events = 0;
  // Every distinct pid the input's events use, as its JSON token (numbers as
  // written, strings with their quotes), so 7 and "7" stay apart.
  std::set<std::string> pids;
  // process_name per pid token (the last one written wins, as in viewers).
  std::map<std::string, std::string> process_names;
  // jitscope_session metadata, when present and complete.
  bool has_session = false;
  std::string session_problem;  // why a present jitscope_session cannot be used
  std::string host;
  std::string boot_id;
  std::int64_t session_pid = 0;
  std::int64_t start_unix_ns = 0;
  std::int64_t start_monotonic_ns = 0;
  // clang -ftime-trace's top-level "beginningOfTime" (µs since the epoch).
  std::optional<std::int64_t> beginning_of_time_ns;
  std::vector<ChildTrace> children;
  bool merged = false;  // holds a jitscope_merge event: jitscope-merge output
};

enum class Alignment {
  kReference,        // the timeline the others are placed on
  kSameBoot,         // shares CLOCK_MONOTONIC with the reference: shift 0
  kWallClock,        // placed by CLOCK_REALTIME - CLOCK_MONOTONIC offsets
  kBeginningOfTime,  // placed by clang's beginningOfTime (wall clock)
  kAssumed,          // no clock data; --assume-same-clock: shift 0
};
const char* alignment_name(Alignment a) noexcept;

struct InputPlan {
  Alignment alignment = Alignment::kAssumed;
  std::int64_t shift_ns = 0;  // added to every ts
  int rank = 0;               // the input's position: labels say "rank N"
  // Original pid token -> the pid written (a JSON integer).
  std::map<std::string, std::int64_t> pid_map;
  std::string label_suffix;  // " [host h, rank r, pid p]" without the pid part
};

struct MergePlan {
  std::vector<InputPlan> inputs;
  int reference = -1;  // index of the reference input
};

struct PlanOptions {
  bool assume_same_clock = false;  // place inputs with no clock data unshifted
};

// Builds the plan, or returns false with *error naming the input and why it
// cannot be aligned.
bool plan(const std::vector<InputScan>& scans, const PlanOptions& options, MergePlan* out,
          std::string* error);

// The process name the merged trace shows for `pid_token` of input `scan`:
// the input's own name for it (or the file's name), then
// " [host H, rank R, pid P]".
std::string merged_process_name(const InputScan& scan, const InputPlan& plan,
                                const std::string& pid_token);

}  // namespace jitscope::tools::merge
