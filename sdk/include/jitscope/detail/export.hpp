// Symbol visibility for the jitscope library, and the namespace of the
// public API. Internal: included by every public header.
//
// The library builds with hidden visibility; only what is marked
// JITSCOPE_API is exported from the shared one.
//
// Compiled out (JITSCOPE_DISABLE defined before the first jitscope include):
// every call is defined inline in the headers (detail/disabled_*.hpp), so no
// library is needed and JITSCOPE_API marks nothing. The public API then lives
// in the inline namespace jitscope::disabled: source still says
// jitscope::Span, but the mangled names differ from the library's, so a
// program may mix translation units with and without JITSCOPE_DISABLE (the
// disabled ones never call into the library). jitscope::detail is the same
// in both.
#pragma once

#if defined(JITSCOPE_DISABLE) && defined(JITSCOPE_BUILDING_LIBRARY)
#error "JITSCOPE_DISABLE is for consumers: the library itself is never compiled out"
#endif

#if defined(JITSCOPE_DISABLE)
#define JITSCOPE_API
#elif defined(JITSCOPE_STATIC_DEFINE)
#define JITSCOPE_API
#elif defined(_WIN32)
#if defined(JITSCOPE_BUILDING_LIBRARY)
#define JITSCOPE_API __declspec(dllexport)
#else
#define JITSCOPE_API __declspec(dllimport)
#endif
#else
#define JITSCOPE_API __attribute__((visibility("default")))
#endif

#if defined(JITSCOPE_DISABLE)
#define JITSCOPE_NAMESPACE_BEGIN \
  namespace jitscope {           \
  inline namespace disabled {
#define JITSCOPE_NAMESPACE_END \
  }                            \
  }
// What start() (and jitscope_last_error()) says when compiled out.
#define JITSCOPE_COMPILED_OUT_MESSAGE \
  "jitscope is compiled out (JITSCOPE_DISABLE): no session is started"
#else
#define JITSCOPE_NAMESPACE_BEGIN namespace jitscope {
#define JITSCOPE_NAMESPACE_END }
#endif
