// The calls of <jitscope/autotune.hpp> compiled out (JITSCOPE_DISABLE):
// nothing is recorded. Internal: included by <jitscope/autotune.hpp>.
#pragma once

#if !defined(JITSCOPE_DISABLE)
#error "detail/disabled_autotune.hpp is for JITSCOPE_DISABLE builds only"
#endif

JITSCOPE_NAMESPACE_BEGIN

inline AutotuneStep::AutotuneStep(std::uint32_t session, std::uint64_t tune, std::uint32_t trial,
                                  bool benchmark) noexcept
    : trial_(trial), benchmark_(benchmark) {
  static_cast<void>(session), static_cast<void>(tune);
}
inline AutotuneStep::AutotuneStep(AutotuneStep&& other) noexcept
    : trial_(other.trial_), benchmark_(other.benchmark_) {}
inline void AutotuneStep::end() noexcept {}

inline AutotuneStep AutotuneTrial::compile() const noexcept {
  return AutotuneStep(0, 0, index_, false);
}
inline AutotuneStep AutotuneTrial::benchmark() const noexcept {
  return AutotuneStep(0, 0, index_, true);
}
inline void AutotuneTrial::compiled_by(const CompileId& unit) const noexcept {
  static_cast<void>(unit);
}
inline void AutotuneTrial::result(double value) const noexcept { static_cast<void>(value); }
inline void AutotuneTrial::failed(std::string_view reason) const noexcept {
  static_cast<void>(reason);
}

inline Autotune::Autotune(std::string_view kernel) noexcept { static_cast<void>(kernel); }
inline Autotune::~Autotune() = default;
inline AutotuneTrial Autotune::trial(std::span<const Arg> config) noexcept {
  static_cast<void>(config);
  AutotuneTrial t;
  t.index_ = trials_++;
  return t;
}
inline void Autotune::winner(const AutotuneTrial& trial) noexcept { static_cast<void>(trial); }

JITSCOPE_NAMESPACE_END
