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
// kept waits (two compile ids and two pids each, at most kMaxWaits).
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
  std::uint64_t not_a_pid() const { return not_a_pid_; }  // on_pid not a positive number

 private:
  std::vector<Wait> waits_;
  std::uint64_t seen_ = 0, beyond_ = 0, not_a_pid_ = 0;
};

// The path through `units` (those with a slice), following `waits`.
CriticalPath find_critical_path(const std::vector<UnitRow>& units, const UnitWaits& waits);

}  // namespace jitscope::report
