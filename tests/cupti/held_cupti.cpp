// A stand-in libcupti (JITSCOPE_CUPTI_LIBRARY) for cupti_held_test: every
// entry point the collector loads, each call's name logged in order, and a
// subscriber that another client can hold, as Nsight Systems or
// torch.profiler's Kineto do. CUPTI allows one subscriber per process.
#include <cupti.h>

#include <string>

namespace {
std::string g_calls;
bool g_held = true;
std::string g_failing;  // the entry point that answers CUPTI_ERROR_UNKNOWN

CUptiResult logged(const char* name, CUptiResult result = CUPTI_SUCCESS) {
  g_calls += name;
  g_calls += ' ';
  return g_failing == name ? CUPTI_ERROR_UNKNOWN : result;
}
}  // namespace

extern "C" {

// The test's controls, found with dlsym.
__attribute__((visibility("default"))) void held_cupti_set_held(int held) { g_held = held != 0; }
__attribute__((visibility("default"))) const char* held_cupti_calls() { return g_calls.c_str(); }
__attribute__((visibility("default"))) void held_cupti_clear() { g_calls.clear(); }
__attribute__((visibility("default"))) void held_cupti_fail(const char* name) { g_failing = name; }

CUptiResult CUPTIAPI cuptiSubscribe(CUpti_SubscriberHandle* subscriber, CUpti_CallbackFunc, void*) {
  if (g_held) return logged("cuptiSubscribe", CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED);
  *subscriber = reinterpret_cast<CUpti_SubscriberHandle>(&g_held);
  return logged("cuptiSubscribe");
}
CUptiResult CUPTIAPI cuptiUnsubscribe(CUpti_SubscriberHandle) { return logged("cuptiUnsubscribe"); }
CUptiResult CUPTIAPI cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc,
                                                    CUpti_BuffersCallbackCompleteFunc) {
  return logged("cuptiActivityRegisterCallbacks");
}
CUptiResult CUPTIAPI cuptiActivityRegisterTimestampCallback(CUpti_TimestampCallbackFunc) {
  return logged("cuptiActivityRegisterTimestampCallback");
}
CUptiResult CUPTIAPI cuptiActivityEnable(CUpti_ActivityKind) {
  return logged("cuptiActivityEnable");
}
CUptiResult CUPTIAPI cuptiActivityDisable(CUpti_ActivityKind) {
  return logged("cuptiActivityDisable");
}
CUptiResult CUPTIAPI cuptiEnableCallback(uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain,
                                         CUpti_CallbackId) {
  return CUPTI_SUCCESS;  // one per watched call: not logged
}
CUptiResult CUPTIAPI cuptiSetThreadIdType(CUpti_ActivityThreadIdType) {
  return logged("cuptiSetThreadIdType");
}
// Not logged: the flusher calls it on its own schedule.
CUptiResult CUPTIAPI cuptiActivityFlushAll(uint32_t) { return CUPTI_SUCCESS; }
CUptiResult CUPTIAPI cuptiActivityGetNextRecord(uint8_t*, size_t, CUpti_Activity**) {
  return CUPTI_ERROR_MAX_LIMIT_REACHED;
}
CUptiResult CUPTIAPI cuptiActivityGetNumDroppedRecords(CUcontext, uint32_t, size_t* dropped) {
  *dropped = 0;
  return CUPTI_SUCCESS;
}
CUptiResult CUPTIAPI cuptiGetCallbackName(CUpti_CallbackDomain, uint32_t, const char**) {
  return CUPTI_ERROR_INVALID_PARAMETER;
}
CUptiResult CUPTIAPI cuptiGetResultString(CUptiResult result, const char** text) {
  *text = result == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED
              ? "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED"
              : "CUPTI_ERROR_UNKNOWN";
  return CUPTI_SUCCESS;
}
CUptiResult CUPTIAPI cuptiGetTimestamp(uint64_t* timestamp) {
  *timestamp = 0;
  return CUPTI_SUCCESS;
}

}  // extern "C"
