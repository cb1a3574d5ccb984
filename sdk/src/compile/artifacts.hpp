// Compile artifacts (CompileUnit::artifact): the session's artifacts folder,
// its byte bound, and writing one file for a unit.
#pragma once

#include "compile/state.hpp"

#include <cstdint>
#include <string>

namespace jitscope::detail {

struct ArtifactTotals {
  std::uint64_t written = 0;
  std::uint64_t bytes = 0;
  std::uint64_t over_cap = 0;
};

// Starts the session's artifacts in `dir` (absolute from here on), up to
// `max_bytes`. The folder is made by the first artifact, so a session that
// writes none leaves none; a folder that cannot be made is said then, once.
// Returns the folder, or "" when off (no folder, or max_bytes 0).
std::string begin_artifacts(const std::string& dir, std::uint64_t max_bytes) noexcept;
// Ends them (later artifacts are refused) and returns the session's totals.
ArtifactTotals end_artifacts() noexcept;
// The totals so far (for the trace's stats).
ArtifactTotals artifact_totals() noexcept;

// Writes one artifact for `unit` and lists it in the unit's record.
Status record_artifact(UnitState& unit, std::string_view kind, std::string_view content,
                       std::string_view extension) noexcept;

// fork(): the artifacts state's lock, after the record sinks' (fork.cpp).
void lock_artifacts_for_fork() noexcept;
void unlock_artifacts_after_fork() noexcept;

}  // namespace jitscope::detail
