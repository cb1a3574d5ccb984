// DuplicateWarningChecker compiled out (JITSCOPE_DISABLE): keeps no key, so
// every add() says "new" (a warning is better repeated than lost). Internal:
// included by <jitscope/dedup.hpp>.
#pragma once

#if !defined(JITSCOPE_DISABLE)
#error "detail/disabled_dedup.hpp is for JITSCOPE_DISABLE builds only"
#endif

JITSCOPE_NAMESPACE_BEGIN

inline DuplicateWarningChecker::DuplicateWarningChecker(std::size_t capacity, bool verbose) noexcept
    : capacity_(capacity == 0 ? 1 : capacity), verbose_(verbose) {}
inline DuplicateWarningChecker::~DuplicateWarningChecker() = default;
inline bool DuplicateWarningChecker::add(std::string_view key) noexcept {
  static_cast<void>(key);
  return true;
}
inline void DuplicateWarningChecker::reset() noexcept {}
inline std::size_t DuplicateWarningChecker::size() const noexcept { return 0; }

JITSCOPE_NAMESPACE_END
