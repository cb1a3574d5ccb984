// CUPTI's entry points, loaded with dlopen() when a session asks for the
// collector, so that neither the library nor a program linking it needs
// libcupti (or anything else from CUDA) to load. Only the headers are used
// at build time.
#pragma once

#include <cupti.h>

#include <string>

namespace jitscope::detail {

// Every CUPTI function the collector calls.
#define JITSCOPE_CUPTI_ENTRY_POINTS(X)      \
  X(cuptiActivityDisable)                   \
  X(cuptiActivityEnable)                    \
  X(cuptiActivityFlushAll)                  \
  X(cuptiActivityGetNextRecord)             \
  X(cuptiActivityGetNumDroppedRecords)      \
  X(cuptiActivityRegisterCallbacks)         \
  X(cuptiActivityRegisterTimestampCallback) \
  X(cuptiEnableCallback)                    \
  X(cuptiGetCallbackName)                   \
  X(cuptiGetResultString)                   \
  X(cuptiGetTimestamp)                      \
  X(cuptiSetThreadIdType)                   \
  X(cuptiSubscribe)                         \
  X(cuptiUnsubscribe)

// Until CUPTI is loaded every entry answers CUPTI_ERROR_NOT_INITIALIZED.
template <class F>
struct CuptiNotLoaded;
template <class... A>
struct CuptiNotLoaded<CUptiResult (*)(A...)> {
  static CUptiResult call(A...) noexcept { return CUPTI_ERROR_NOT_INITIALIZED; }
};

struct CuptiApi {
#define JITSCOPE_CUPTI_MEMBER(f) decltype(&::f) f = &CuptiNotLoaded<decltype(&::f)>::call;
  JITSCOPE_CUPTI_ENTRY_POINTS(JITSCOPE_CUPTI_MEMBER)
#undef JITSCOPE_CUPTI_MEMBER
};

// Loads libcupti once per process: JITSCOPE_CUPTI_LIBRARY if set (that file
// only), else libcupti.so.<major> from the loader's search path, else the
// copy the library was built against. Later calls return the first outcome.
// false, and `why` in words, if it cannot be loaded or lacks an entry point.
bool load_cupti(std::string& why) noexcept;
// The entry points: CUPTI's once load_cupti() succeeded. Every caller runs
// after that (a session's start, or a callback CUPTI makes).
const CuptiApi& cupti_api() noexcept;

}  // namespace jitscope::detail
