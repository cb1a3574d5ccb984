#include "base/env_variables.hpp"

#include "base/edit_distance.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

extern char** environ;

namespace jitscope::detail {
namespace {

constexpr KnownVariable kVariables[] = {
    {"JITSCOPE_TRACE", "output path; starts a session at load, stops at exit"},
    {"JITSCOPE_RING_CAPACITY", "records per thread ring"},
    {"JITSCOPE_OVERFLOW", "drop|block"},
    {"JITSCOPE_FORMAT",
     "json|perfetto: the trace's form (default: by extension, .pftrace: perfetto)"},
    {"JITSCOPE_COMPRESSION", "none|deflate|zstd: the Perfetto form's packets"},
    {"JITSCOPE_FLUSH_INTERVAL_MS", "flusher period"},
    {"JITSCOPE_PROCESS_NAME", "process name in the trace"},
    {"JITSCOPE_CLOCK", "auto|tsc|monotonic"},
    {"JITSCOPE_METRICS", "compile records file (JSON lines)"},
    {"JITSCOPE_COMPILE_TIMES", "off|table|csv: compile-times report on stderr at stop"},
    {"JITSCOPE_PROGRESS", "0|1: progress bar on a terminal"},
    {"JITSCOPE_NVTX", "on|off|emit|capture: NVTX emission and capture"},
    {"JITSCOPE_CUPTI", "auto|on|off: GPU activity through CUPTI"},
    {"JITSCOPE_CUPTI_BUFFER_KB", "size of one CUPTI activity buffer"},
    {"JITSCOPE_CUPTI_BUFFERS", "number of CUPTI activity buffers in the pool"},
    {"JITSCOPE_CUPTI_LIBRARY",
     "path of libcupti to load (default: the loader's search, then the build's)"},
    {"JITSCOPE_CRASH_HANDLER", "1|0: flush the trace on a fatal signal or std::terminate"},
    {"JITSCOPE_MAX_TRACE_SIZE", "cap on the trace's bytes, e.g. 512M (K, M, G: powers of 1024)"},
    {"JITSCOPE_ROTATE_SIZE", "start a new numbered trace file at this size, e.g. 100M"},
    {"JITSCOPE_FLIGHT",
     "flight recorder: keep the newest events in a window of this size, e.g. 64M"},
    {"JITSCOPE_MAX_SNAPSHOTS", "flight recorder: snapshots kept on disk (the oldest removed)"},
    {"JITSCOPE_SNAPSHOT_MIN_INTERVAL_MS", "flight recorder: the least time between two snapshots"},
    {"JITSCOPE_SNAPSHOT_SIGNAL",
     "flight recorder: a signal that asks for a snapshot, e.g. SIGUSR2"},
    {"JITSCOPE_SNAPSHOT_SLOW_UNIT",
     "a line (and a snapshot) for a compile unit this slow, e.g. 500ms"},
    {"JITSCOPE_SNAPSHOT_FAILED_UNIT", "a line (and a snapshot) for a failed compile unit: 1"},
    {"JITSCOPE_SNAPSHOT_MISS_STORM",
     "a line (and a snapshot) for N cache misses within a time: 20/10s"},
    {"JITSCOPE_SNAPSHOT_AFTER_READY",
     "flight recorder: a snapshot for a compile after mark_ready(): 1, 0"},
    {"JITSCOPE_ARTIFACTS", "folder for compile artifacts (default: <metrics file>.artifacts)"},
    {"JITSCOPE_MAX_ARTIFACT_SIZE", "bound on all artifacts' bytes, e.g. 1G; 0: off (default 256M)"},
    {"JITSCOPE_PARENT_PID",
     "pid of the process that spawned this one: its spawn's arrow ends at the first compile unit"},
    {"JITSCOPE_BUILD_DIR",
     "pip install of python/: a CMake build tree to package instead of building one"},
};

bool is_known(std::string_view name) noexcept {
  return std::any_of(std::begin(kVariables), std::end(kVariables),
                     [&](const KnownVariable& v) { return name == v.name; });
}

}  // namespace

std::span<const KnownVariable> known_variables() noexcept { return kVariables; }

std::string_view closest_known_variable(std::string_view name) noexcept {
  std::string_view best = kVariables[0].name;
  std::size_t best_distance = static_cast<std::size_t>(-1);
  for (const KnownVariable& v : kVariables) {
    const std::size_t d = edit_distance(name, v.name);
    if (d < best_distance) {
      best = v.name;
      best_distance = d;
    }
  }
  return best;
}

std::string unknown_variables() {
  std::vector<std::string> unknown;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    if (std::strncmp(*e, "JITSCOPE_", 9) != 0) continue;
    const char* eq = std::strchr(*e, '=');
    std::string name(*e, eq ? static_cast<std::size_t>(eq - *e) : std::strlen(*e));
    if (!is_known(name)) unknown.push_back(std::move(name));
  }
  if (unknown.empty()) return {};
  std::string m = unknown.size() == 1 ? "unknown variable " : "unknown variables ";
  for (std::size_t i = 0; i < unknown.size(); ++i) {
    if (i != 0) m += ", ";
    m += unknown[i] + " (did you mean " + std::string(closest_known_variable(unknown[i])) + "?)";
  }
  m += "; the known ones are listed in docs/configuration.md";
  return m;
}

}  // namespace jitscope::detail
