// jitscope — autotuning accounted: per kernel and per config, the time
// spent compiling against benchmarking, and how long until the winner was
// known.
//
// Quickstart
//   #include <jitscope/autotune.hpp>
//
//   jitscope::Autotune tune("matmul");                    // one tuning session
//   for (const Config& c : configs) {
//     jitscope::AutotuneTrial t = tune.trial({{"block", c.block}, {"warps", c.warps}});
//     { auto step = t.compile();   build(c); }            // or t.compiled_by(unit.id())
//     { auto step = t.benchmark(); us = time(c); }
//     t.result(us);
//   }
//   tune.winner(best);                                    // the trial that won
//
// What is recorded, while a session is on (instants for jitscope-report,
// slices for the timeline; every event has args "tune", the session's
// process-unique id, and "trial", the trial's index from 0):
//   - the tuning session: instants "autotune_start" (args kernel) and
//     "autotune_end" (trials), and a slice "autotune session" over it
//     (kernel, trials, winner) written when it ends, on a track of its own
//     (as async_slice's: written after the fact, on the thread it would
//     start after everything the thread wrote meanwhile);
//   - each trial: an instant "autotune_trial" with the config as its args
//     (typed, as given; a parameter named tune, trial or config is left
//     out, said once) and as one string "config" ("block=128, warps=4");
//   - each step: a slice "autotune compile" or "autotune benchmark" on its
//     trial's track, and an instant "autotune_step" (step: "compile" or
//     "benchmark", ns: its length) on the thread that ends it, when it ends;
//   - compiled_by: the trial's compile was that compile unit (built before,
//     on another thread, or shared by trials): an instant
//     "autotune_compiled_by" (compile_id); the report counts the unit's wall
//     time as the trial's compile;
//   - result (the measured value, lower or higher is the host's business),
//     failed (a config that did not build or run), winner: instants
//     "autotune_result" (value), "autotune_failed" (reason),
//     "autotune_winner".
// With a metrics file, each tuning session also writes one line there when
// it ends ("record":"autotune": its trials, step sums, winner and the end
// of its last step; docs/autotuning.md). jitscope-report's autotune section sums the
// trace's events per tuning session: trials,
// compile and benchmark time, wall time, time to the winner (from the
// session's start to the end of the winner's last step) and the time spent
// on trials that did not win (docs/autotuning.md).
//
// A tuning session made with no jitscope session on records nothing, nor
// do its trials and steps; once the jitscope session it was made in
// stops, nothing of it is recorded (not even in a later session). Handles hold ids, never pointers:
// a trial or step may outlive its Autotune, and may be used on any thread. Cold path: each call is
// one library call and a few small strings (a trial's config text). Nothing here throws.
#pragma once

#include <jitscope/compile.hpp>
#include <jitscope/jitscope.hpp>

#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>

JITSCOPE_NAMESPACE_BEGIN

// One step of a trial (its compile, or its benchmark), from its making to
// end() or its destruction; movable, not copyable.
class JITSCOPE_API AutotuneStep {
 public:
  AutotuneStep(AutotuneStep&& other) noexcept;
  AutotuneStep& operator=(AutotuneStep&&) = delete;
  AutotuneStep(const AutotuneStep&) = delete;
  AutotuneStep& operator=(const AutotuneStep&) = delete;
  ~AutotuneStep() { end(); }
  void end() noexcept;

 private:
  friend class AutotuneTrial;
  // Records when `session` (the trial's) is still the one on.
  AutotuneStep(std::uint32_t session, std::uint64_t tune, std::uint32_t trial,
               bool benchmark) noexcept;
  std::uint64_t tune_ = 0;  // 0: records nothing
  std::uint32_t trial_ = 0;
  std::uint32_t session_ = 0;
  std::uint64_t begin_ = 0;  // the session's clock
  bool benchmark_ = false;
};

// One config tried: a value (two ids), copyable, valid after its Autotune.
class JITSCOPE_API AutotuneTrial {
 public:
  AutotuneTrial() = default;
  std::uint32_t index() const noexcept { return index_; }
  [[nodiscard]] AutotuneStep compile() const noexcept;
  [[nodiscard]] AutotuneStep benchmark() const noexcept;
  // The trial's compile was this unit (CompileUnit::id()).
  void compiled_by(const CompileId& unit) const noexcept;
  // The trial's measured value (a time per launch, a throughput...).
  void result(double value) const noexcept;
  // The config did not build or run; `reason` is copied.
  void failed(std::string_view reason) const noexcept;

 private:
  friend class Autotune;
  std::uint64_t tune_ = 0;     // 0: records nothing
  std::uint32_t session_ = 0;  // its Autotune's: a later session gets none of its events
  std::uint32_t index_ = 0;
};

// One tuning session: a kernel's configs tried, one of them the winner.
// Its own calls (trial, winner, the destructor) on one thread at a time;
// its trials and steps on any thread. Its span is written on the thread
// that destroys it.
class JITSCOPE_API Autotune {
 public:
  explicit Autotune(std::string_view kernel) noexcept;
  ~Autotune();
  Autotune(const Autotune&) = delete;
  Autotune& operator=(const Autotune&) = delete;

  // The next trial, of `config` (keys: string literals, as Span's args).
  AutotuneTrial trial(std::initializer_list<Arg> config) noexcept {
    return trial(std::span<const Arg>(config.begin(), config.size()));
  }
  AutotuneTrial trial(std::span<const Arg> config) noexcept;
  // `trial` won (the last call before the end counts).
  void winner(const AutotuneTrial& trial) noexcept;
  // Its process-unique id; 0 when it records nothing (no session when made).
  std::uint64_t id() const noexcept { return id_; }
  std::uint32_t trials() const noexcept { return trials_; }

 private:
  std::uint64_t id_ = 0;
  std::uint32_t session_ = 0;
  std::uint64_t begin_ = 0;  // the session's clock
  std::uint32_t trials_ = 0;
  std::int64_t winner_ = -1;
  std::string kernel_;
};

JITSCOPE_NAMESPACE_END

#if defined(JITSCOPE_DISABLE)
#include <jitscope/detail/disabled_autotune.hpp>
#endif
