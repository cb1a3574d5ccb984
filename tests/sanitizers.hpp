// Which sanitizer a test binary is built with, for the tests that size
// their work by it (a sanitized flusher runs 10-50x slower). GCC says so
// with __SANITIZE_*__, clang with __has_feature.
#pragma once

namespace jitscope::testing {

#if defined(__SANITIZE_THREAD__)
inline constexpr bool kTsan = true;
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
inline constexpr bool kTsan = true;
#else
inline constexpr bool kTsan = false;
#endif
#else
inline constexpr bool kTsan = false;
#endif

#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kAsan = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kAsan = true;
#else
inline constexpr bool kAsan = false;
#endif
#else
inline constexpr bool kAsan = false;
#endif

inline constexpr bool kSanitized = kTsan || kAsan;

}  // namespace jitscope::testing
