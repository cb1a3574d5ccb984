// jitscope — numbered compile steps and a terminal progress bar.
//
// Quickstart
//   #include <jitscope/step_log.hpp>
//
//   void compile(Graph& g) {
//     jitscope::CompileProgress bar("compile", 3);   // draws only if enabled
//     jitscope::StepLogger trace_log("trace");       // takes step 1, bar 1/3
//     trace_log.log("captured 12 ops");              // "Step 1: captured 12 ops"
//     jitscope::StepLogger lower_log("lower");       // step 2, bar 2/3
//     lower_log.log("fused 4 kernels", jitscope::LogLevel::kDebug);
//   }                                                // bar ends with "\n"
//
// Steps (after PyTorch's get_step_logger, torch/_dynamo/logging.py): one
// process-wide counter starting at 1; each StepLogger takes the next number
// when constructed and prefixes every line with "Step N: ". Lines go to a
// sink: by default stderr, one write(2) per line, kInfo and above, no
// "jitscope: " prefix (they are the host's messages). set_step_sink()
// redirects them (to the host's own logger, say) at every level. While a
// session is on, each log() also records a "step" instant with args
// {"step": N, "message": "..."}.
//
// Progress bar: off by default. On with set_progress_enabled(true) or
// JITSCOPE_PROGRESS=1 (read once, at first use; "0" or "1" only), and then
// only when stderr is a terminal. It is rewritten in place,
//   "\r<description> [########------------] 2/3 <label>\x1b[K",
// and ends with "\n". At most one bar is active in the process: one made
// while another is active is inert (never draws). Constructing a StepLogger
// advances the active bar and shows its stage as the label.
//
// Cost: a StepLogger costs one atomic increment plus, with a bar active, one
// mutex lock. log() formats one std::string, takes one mutex to read the
// sink, and does one write(2) (or calls the sink). Cold-path only: not for
// per-op logging.
//
// Compiled out (JITSCOPE_DISABLE): no step is numbered (step() is 0), no line
// is written and no bar is drawn.
//
// Nothing here throws. Out of memory, a line is dropped. The sink is called
// with no jitscope lock held, from the logging thread, and may be called
// concurrently; an exception from it is caught and ignored.
#pragma once

#include <jitscope/detail/export.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace jitscope::detail {
struct ProgressAccess;  // step_log.cpp: the default sink redraws the bar
}  // namespace jitscope::detail

JITSCOPE_NAMESPACE_BEGIN

enum class LogLevel : std::uint8_t { kDebug, kInfo, kWarning, kError };

// Receives each complete line ("Step 3: message"), without a newline.
using StepSink = std::function<void(LogLevel level, std::string_view line)>;

// Replaces the sink for every StepLogger; an empty function restores the
// default (stderr, kInfo and above).
JITSCOPE_API void set_step_sink(StepSink sink) noexcept;

// Sets the next step number back to 1 (tests; hosts that restart).
JITSCOPE_API void reset_steps() noexcept;

// Turns the progress bar on or off; overrides JITSCOPE_PROGRESS. Takes effect
// for bars constructed afterwards.
JITSCOPE_API void set_progress_enabled(bool enabled) noexcept;

class JITSCOPE_API StepLogger {
 public:
  // Takes the next step number; advances the active progress bar to `stage`.
  explicit StepLogger(std::string_view stage = {}) noexcept;

  int step() const noexcept { return step_; }
  const std::string& stage() const noexcept { return stage_; }
  // Emits "Step N: message" at `level`.
  void log(std::string_view message, LogLevel level = LogLevel::kInfo) const noexcept;

 private:
  int step_ = 0;
  std::string stage_;
};

class JITSCOPE_API CompileProgress {
 public:
  // `stages` below 0 counts as 0.
  CompileProgress(std::string_view description, int stages) noexcept;
  CompileProgress(const CompileProgress&) = delete;
  CompileProgress& operator=(const CompileProgress&) = delete;
  ~CompileProgress();

  // One more stage done (never past stages()); `label` is shown after the
  // count. A StepLogger does this for the active bar.
  void advance(std::string_view label = {}) noexcept;
  int done() const noexcept;
  int stages() const noexcept { return stages_; }
  // True when this bar is the active one and draws on a terminal.
  bool drawn() const noexcept { return drawn_; }

 private:
  friend struct detail::ProgressAccess;

  std::string description_;
  std::string label_;
  int stages_ = 0;
  int done_ = 0;  // guarded by the process-wide progress mutex
  int fd_ = -1;
  bool drawn_ = false;
};

JITSCOPE_NAMESPACE_END

#if defined(JITSCOPE_DISABLE)
#include <jitscope/detail/disabled_step_log.hpp>
#endif
