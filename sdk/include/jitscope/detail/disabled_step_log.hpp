// The calls of <jitscope/step_log.hpp> compiled out (JITSCOPE_DISABLE):
// no step numbers, no lines, no bar. Internal: included by
// <jitscope/step_log.hpp>.
#pragma once

#if !defined(JITSCOPE_DISABLE)
#error "detail/disabled_step_log.hpp is for JITSCOPE_DISABLE builds only"
#endif

JITSCOPE_NAMESPACE_BEGIN

inline void set_step_sink(StepSink sink) noexcept { static_cast<void>(sink); }
inline void reset_steps() noexcept {}
inline void set_progress_enabled(bool enabled) noexcept { static_cast<void>(enabled); }

inline StepLogger::StepLogger(std::string_view stage) noexcept { static_cast<void>(stage); }
inline void StepLogger::log(std::string_view message, LogLevel level) const noexcept {
  static_cast<void>(message), static_cast<void>(level);
}

inline CompileProgress::CompileProgress(std::string_view description, int stages) noexcept
    : stages_(stages < 0 ? 0 : stages) {
  static_cast<void>(description);
}
inline CompileProgress::~CompileProgress() = default;
inline void CompileProgress::advance(std::string_view label) noexcept { static_cast<void>(label); }
inline int CompileProgress::done() const noexcept { return 0; }

JITSCOPE_NAMESPACE_END
