// Autotuning sessions (jitscope::Autotune, <jitscope/autotune.hpp>) from
// their instants: per tuning session, its trials' configs, compile and
// benchmark time, results and the winner; then the figures the report
// shows (docs/autotuning.md).
//
// Keyed by (pid, tune id): ids restart in every process, and a merged
// trace holds several. An event of a session whose autotune_start is not
// in the trace (cut, or the session began before a flight-recorder
// window) still counts; such a session has no start and so no wall time
// or time to the winner. Memory: bounded by kMaxSessions sessions of
// kMaxTrials trials each kept, each naming up to kMaxTrials units, every
// kept string cut at kMaxTextBytes. A session's trials beyond those still count
// in its sums (their steps, and up to kMaxTrials units they name) but not
// as rows, and not as its winner: a winner among them leaves the session
// without a time to the winner, its time counted as not won. Events of
// sessions beyond kMaxSessions are counted (events_beyond) and said.
#pragma once

#include "report_data.hpp"

#include <event_decoder.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace jitscope::report {

class AutotuneSessions {
 public:
  static constexpr std::size_t kMaxSessions = 100'000;
  static constexpr std::size_t kMaxTrials = 10'000;
  // A kernel name, config text, failure reason or compile id kept, cut there
  // (then "…"): memory bounded in bytes whatever a hand-made trace holds.
  static constexpr std::size_t kMaxTextBytes = 1024;

  // An instant whose name starts with "autotune_"; others are ignored.
  void add(const tools::DecodedEvent& ev, tools::EventDecoder& decoder);

  // What the report needs of a compile unit a trial names: its wall time and
  // where its own slice ended. Null: not in the trace.
  struct UnitTimes {
    std::int64_t wall_ns = 0, end_ns = 0;
  };
  using UnitLookup =
      std::function<std::optional<UnitTimes>(const std::optional<Id>& pid, const std::string&)>;
  // The sessions' rows, longest wall time first (those without one last).
  std::vector<AutotuneRow> rows(const UnitLookup& unit) const;
  std::uint64_t events_beyond() const noexcept { return events_beyond_; }
  bool any() const noexcept { return !sessions_.empty(); }

 private:
  struct Trial {
    std::string config;
    std::int64_t compile_ns = 0, benchmark_ns = 0;
    std::optional<std::int64_t> last_end_ns;  // of its steps
    std::optional<double> result;
    std::optional<std::string> failed;
    std::vector<std::string> units;  // compiled_by's compile ids
  };
  struct Session {
    std::optional<Id> pid;
    std::uint64_t tune = 0;
    std::string kernel;
    std::optional<std::int64_t> start_ns, end_ns;
    std::optional<std::uint32_t> winner;
    std::uint64_t trials_seen = 0;  // trial indexes seen, those beyond kMaxTrials too
    // The kept trials by index, and kBucket: the sums of those not kept.
    std::map<std::uint32_t, Trial> trials;
  };
  static constexpr std::uint32_t kBucket = UINT32_MAX;  // no trial's index (add refuses it)
  Session* session(const tools::DecodedEvent& ev, std::uint64_t tune);
  Trial* trial(Session& s, std::uint32_t index);

  std::map<std::pair<std::string, std::uint64_t>, Session> sessions_;  // (pid text, tune)
  std::uint64_t events_beyond_ = 0;
};

}  // namespace jitscope::report
