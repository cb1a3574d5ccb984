// The critical path through the compile units (CriticalPath in
// report_data.hpp; docs/critical-path.md): which units the run's wall time
// actually waited for, against the work summed over threads and processes.
//
// The walk starts at the unit that ended last and steps back to the unit
// that the current one last waited for: among the units it named with
// CompileUnit::waits_for (ended by its end) and the unit that ended last on
// its thread before it started, the one that ended latest. A wait names its
// unit by compile id and pid, so it crosses processes in a merged trace.
// Cost: O(units log units + waits) after the trace is read; memory: the
// kept waits: at most kMaxWaits, each four ids of at most kMaxIdBytes
// (under 300 MB for a hostile trace; a few dozen bytes a wait as the SDK
// writes them).
#pragma once

#include "report_data.hpp"

#include <event_decoder.hpp>

#include <string>
#include <vector>

namespace jitscope::report {

// CompileUnit::waits_for's instants ("unit_waits": args unit, on, on_pid).
class UnitWaits {
 public:
  void add(const tools::DecodedEvent& ev, tools::EventDecoder& decoder);
  struct Wait {
    std::string waiter_pid, waiter;  // the waiting unit: its pid's text, its compile id
    std::string on_pid, on;          // the unit waited for
  };
  const std::vector<Wait>& waits() const { return waits_; }
  std::uint64_t seen() const { return seen_; }
  std::uint64_t beyond() const { return beyond_; }
  // Waits that name no unit whatever the trace holds: on_pid not a
  // positive number, or an id longer than kMaxIdBytes (a compile id is at
  // most 21, "4294967295/4294967295"; a pid's text at most 20).
  std::uint64_t unfollowable() const { return unfollowable_; }
  static constexpr std::size_t kMaxIdBytes = 32;

 private:
  std::vector<Wait> waits_;
  std::uint64_t seen_ = 0, beyond_ = 0, unfollowable_ = 0;
};

// The path through `units` (those with a slice), following `waits`.
CriticalPath find_critical_path(const std::vector<UnitRow>& units, const UnitWaits& waits);

}  // namespace jitscope::report
