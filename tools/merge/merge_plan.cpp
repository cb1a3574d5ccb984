#include "merge_plan.hpp"

#include <algorithm>
#include <charconv>
#include <limits>
#include <map>
#include <set>

namespace jitscope::tools::merge {
namespace {

// A pid token that is a plain JSON integer, as a number.
std::optional<std::int64_t> integer_pid(const std::string& token) {
  std::int64_t v = 0;
  const char* end = token.data() + token.size();
  const auto [ptr, ec] = std::from_chars(token.data(), end, v);
  if (ec != std::errc() || ptr != end) return std::nullopt;
  return v;
}

// Pids from here up (none a real OS has) are renumbered, so that counting
// fresh pids up from the largest kept one never overflows.
constexpr std::int64_t kLargestKeptPid = std::int64_t{1} << 53;

std::string file_name(const std::string& path) {
  const std::size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// Where an input's clock meets the wall clock: unix_ns = ts_ns + offset.
struct ClockFacts {
  enum class Kind { kNone, kSession, kBeginningOfTime } kind = Kind::kNone;
  std::int64_t unix_offset_ns = 0;
};

ClockFacts clock_facts(const InputScan& s) {
  std::int64_t offset = 0;
  if (s.has_session && !__builtin_sub_overflow(s.start_unix_ns, s.start_monotonic_ns, &offset)) {
    return {ClockFacts::Kind::kSession, offset};
  }
  if (s.beginning_of_time_ns) {
    return {ClockFacts::Kind::kBeginningOfTime, *s.beginning_of_time_ns};
  }
  return {};
}

// jitscope writes a GPU's slices on pid 10000000 * (device + 1) + host pid
// (sdk/src/format/gpu_trace.cpp), and jitscope-report finds a kernel's
// compile unit through that host pid.
constexpr std::int64_t kGpuPidBase = 10'000'000;

void assign_pids(const std::vector<InputScan>& scans, MergePlan* out) {
  // How many inputs use each integer pid; the largest pid and host pid.
  std::map<std::int64_t, int> users;
  std::int64_t max_pid = 0, max_host = 0;
  for (const InputScan& s : scans) {
    for (const std::string& token : s.pids) {
      if (const auto v = integer_pid(token); v && *v < kLargestKeptPid) {
        ++users[*v];
        max_pid = std::max(max_pid, *v);
        if (*v < kGpuPidBase) max_host = std::max(max_host, *v);
      }
    }
  }
  std::set<std::int64_t> given;  // fresh pids handed out
  auto is_free = [&](std::int64_t p) { return users.count(p) == 0 && given.count(p) == 0; };
  std::int64_t next_free = max_pid + 1, next_host = max_host + 1;
  for (std::size_t i = 0; i < scans.size(); ++i) {
    auto& map = out->inputs[i].pid_map;
    std::map<std::int64_t, std::string> tokens;  // this input's integer pids
    for (const std::string& token : scans[i].pids) {
      if (const auto v = integer_pid(token); v && *v < kLargestKeptPid) tokens.emplace(*v, token);
    }
    // A host pid and its GPU pids move together, so that a GPU pid still
    // names its host: 10000000 * (device + 1) + the host's new pid, the new
    // host pid below 10000000 and above every host pid in the inputs.
    std::map<std::int64_t, std::vector<std::int64_t>> gpus;  // host -> its GPU pids
    for (const auto& [v, token] : tokens) {
      if (v >= kGpuPidBase && tokens.count(v % kGpuPidBase) != 0)
        gpus[v % kGpuPidBase].push_back(v);
    }
    for (const auto& [host, members] : gpus) {
      bool shared = users[host] > 1;
      for (const std::int64_t g : members) shared = shared || users[g] > 1;
      if (!shared) continue;  // all keep their numbers (below)
      std::int64_t h = next_host;
      for (; h < kGpuPidBase; ++h) {
        bool free = is_free(h);
        for (const std::int64_t g : members)
          free = free && is_free(g / kGpuPidBase * kGpuPidBase + h);
        if (free) break;
      }
      if (h >= kGpuPidBase) continue;  // none left: renumbered one by one below
      next_host = h + 1;
      given.insert(h);
      map[tokens.at(host)] = h;
      for (const std::int64_t g : members) {
        const std::int64_t moved = g / kGpuPidBase * kGpuPidBase + h;
        given.insert(moved);
        map[tokens.at(g)] = moved;
      }
    }
    for (const std::string& token : scans[i].pids) {
      if (map.count(token) != 0) continue;
      const auto v = integer_pid(token);
      // A pid only this input uses keeps its number, so that it still
      // matches the OS's and the GPU track names that mention it.
      if (v && *v < kLargestKeptPid && users[*v] == 1) {
        map[token] = *v;
        continue;
      }
      while (!is_free(next_free)) ++next_free;
      given.insert(next_free);
      map[token] = next_free++;
    }
  }
}

}  // namespace

const char* alignment_name(Alignment a) noexcept {
  switch (a) {
    case Alignment::kReference: return "reference";
    case Alignment::kSameBoot: return "same boot (CLOCK_MONOTONIC)";
    case Alignment::kWallClock: return "wall clock";
    case Alignment::kBeginningOfTime: return "beginningOfTime (wall clock)";
    case Alignment::kAssumed: return "assumed same clock";
  }
  return "?";
}

bool plan(const std::vector<InputScan>& scans, const PlanOptions& options, MergePlan* out,
          std::string* error) {
  *out = MergePlan{};
  out->inputs.resize(scans.size());
  for (const InputScan& s : scans) {
    if (!s.merged) continue;
    // Its session events keep their own clocks while its timestamps were
    // moved: placing it again would move them twice.
    *error = s.path +
             ": already a merged trace (jitscope-merge output); merge the traces it was "
             "made from instead";
    return false;
  }
  std::vector<ClockFacts> facts;
  for (const InputScan& s : scans) facts.push_back(clock_facts(s));

  // The reference: the first jitscope trace (its CLOCK_MONOTONIC axis keeps
  // every jitscope timestamp positive); else the earliest-starting clang
  // trace, so that no shift is negative; else the first input.
  int ref = -1;
  for (std::size_t i = 0; i < scans.size() && ref < 0; ++i) {
    if (facts[i].kind == ClockFacts::Kind::kSession) ref = static_cast<int>(i);
  }
  for (std::size_t i = 0; i < scans.size() && ref < 0; ++i) {
    if (facts[i].kind != ClockFacts::Kind::kBeginningOfTime) continue;
    std::int64_t earliest = std::numeric_limits<std::int64_t>::max();
    for (std::size_t j = 0; j < scans.size(); ++j) {
      if (facts[j].kind == ClockFacts::Kind::kBeginningOfTime &&
          facts[j].unix_offset_ns < earliest) {
        earliest = facts[j].unix_offset_ns;
        ref = static_cast<int>(j);
      }
    }
  }
  for (std::size_t i = 0; i < scans.size(); ++i) {
    if (facts[i].kind != ClockFacts::Kind::kNone || options.assume_same_clock) continue;
    const InputScan& s = scans[i];
    std::string why = !s.session_problem.empty()
                          ? s.session_problem
                          : "it has neither jitscope_session metadata nor a beginningOfTime "
                            "(clang -ftime-trace)";
    *error = s.path + ": cannot place its timestamps on the merged timeline: " + why +
             ". If its timestamps are on the same clock as the other inputs' (CLOCK_MONOTONIC "
             "of the same boot), pass --assume-same-clock";
    return false;
  }
  if (ref < 0) ref = 0;  // nothing has clock data, and the user said it is all one clock
  out->reference = ref;

  // Traces of one boot share CLOCK_MONOTONIC: they all move by their group's
  // first member's offset, so they stay exact relative to each other.
  std::map<std::string, std::int64_t> boot_offset;
  for (std::size_t i = 0; i < scans.size(); ++i) {
    if (facts[i].kind == ClockFacts::Kind::kSession && !scans[i].boot_id.empty()) {
      boot_offset.emplace(scans[i].boot_id, facts[i].unix_offset_ns);
    }
  }
  auto offset_of = [&](std::size_t i) {
    if (facts[i].kind == ClockFacts::Kind::kSession && !scans[i].boot_id.empty()) {
      return boot_offset[scans[i].boot_id];
    }
    return facts[i].unix_offset_ns;
  };
  const std::int64_t ref_offset = offset_of(static_cast<std::size_t>(ref));
  auto out_of_range = [&](std::size_t i) {
    *error = scans[i].path + ": its clock metadata is too far from " +
             scans[static_cast<std::size_t>(ref)].path +
             "'s to place it (a shift beyond 292 years)";
    return false;
  };
  for (std::size_t i = 0; i < scans.size(); ++i) {
    InputPlan& p = out->inputs[i];
    p.rank = static_cast<int>(i);
    if (static_cast<int>(i) == ref) {
      p.alignment = Alignment::kReference;
    } else if (facts[i].kind == ClockFacts::Kind::kNone ||
               facts[ref].kind == ClockFacts::Kind::kNone) {
      p.alignment = Alignment::kAssumed;
    } else if (facts[i].kind == ClockFacts::Kind::kBeginningOfTime) {
      p.alignment = Alignment::kBeginningOfTime;
      if (__builtin_sub_overflow(offset_of(i), ref_offset, &p.shift_ns)) return out_of_range(i);
    } else if (facts[ref].kind == ClockFacts::Kind::kSession && !scans[i].boot_id.empty() &&
               scans[i].boot_id == scans[ref].boot_id) {
      p.alignment = Alignment::kSameBoot;
    } else {
      p.alignment = Alignment::kWallClock;
      if (__builtin_sub_overflow(offset_of(i), ref_offset, &p.shift_ns)) return out_of_range(i);
    }
    std::string suffix = " [";
    if (!scans[i].host.empty()) suffix += "host " + scans[i].host + ", ";
    suffix += "rank " + std::to_string(i);
    p.label_suffix = suffix;
  }
  assign_pids(scans, out);
  return true;
}

std::string merged_process_name(const InputScan& scan, const InputPlan& plan,
                                const std::string& pid_token) {
  const auto named = scan.process_names.find(pid_token);
  std::string name = named != scan.process_names.end() ? named->second : file_name(scan.path);
  // The pid of the process that wrote the trace: a jitscope GPU track's
  // own pid is made up (its name already says whose it is).
  const std::string pid = scan.has_session ? std::to_string(scan.session_pid) : pid_token;
  return name + plan.label_suffix + ", pid " + pid + "]";
}

}  // namespace jitscope::tools::merge
