// Symbol visibility for the jitscope library. The library builds with hidden
// visibility; only what is marked JITSCOPE_API is exported from the shared one.
#pragma once

#if defined(JITSCOPE_STATIC_DEFINE)
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
