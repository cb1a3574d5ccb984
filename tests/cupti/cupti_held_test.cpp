// When another client holds CUPTI (its one subscriber: Nsight Systems, or
// torch.profiler's Kineto, which keeps it once it has run), jitscope's
// session runs without GPU activity and touches nothing of that client's:
// not its buffer callbacks, not its timestamps. Seen on an H200: with the
// old order, a jitscope session started inside torch.profiler took Kineto's
// buffers, and Kineto reported no CUDA activity.
//
// CUPTI here is held_cupti.cpp, loaded through JITSCOPE_CUPTI_LIBRARY: it
// logs the calls made to it. One process, so one CUPTI load, for the test.
#include "trace_support.hpp"

#include <jitscope/jitscope.hpp>

#include <dlfcn.h>
#include <stdlib.h>

#include <string>

namespace jitscope::testing {
namespace {

struct HeldCupti {
  void (*set_held)(int) = nullptr;
  const char* (*calls)() = nullptr;
  void (*clear)() = nullptr;
  void (*fail)(const char*) = nullptr;
};

// The library the collector loaded (RTLD_NOLOAD: the same copy).
HeldCupti controls() {
  HeldCupti h;
  void* lib = ::dlopen(JITSCOPE_TEST_HELD_CUPTI, RTLD_NOW | RTLD_NOLOAD);
  if (lib == nullptr) return h;
  h.set_held = reinterpret_cast<void (*)(int)>(::dlsym(lib, "held_cupti_set_held"));
  h.calls = reinterpret_cast<const char* (*)()>(::dlsym(lib, "held_cupti_calls"));
  h.clear = reinterpret_cast<void (*)()>(::dlsym(lib, "held_cupti_clear"));
  h.fail = reinterpret_cast<void (*)(const char*)>(::dlsym(lib, "held_cupti_fail"));
  return h;
}

SessionStats run_session(const std::string& stem) {
  Config cfg = test_config(stem);
  cfg.cupti = CuptiMode::kOn;
  EXPECT_TRUE(start(cfg).ok());
  SessionStats stats;
  EXPECT_TRUE(stop(&stats).ok());
  return stats;
}

TEST(CuptiHeld, AHeldCuptiIsLeftAsItsClientSetItAndFreedItIsTakenAnew) {
  ASSERT_EQ(::setenv("JITSCOPE_CUPTI_LIBRARY", JITSCOPE_TEST_HELD_CUPTI, 1), 0);
  // Held by another client from the start: only the subscribe is tried.
  const SessionStats held = run_session("cupti_held_1");
  HeldCupti cupti = controls();
  ASSERT_NE(cupti.calls, nullptr) << "the stand-in CUPTI was not loaded";
  EXPECT_FALSE(held.cupti_on);
  EXPECT_NE(held.cupti_off_reason.find("MULTIPLE_SUBSCRIBERS"), std::string::npos)
      << held.cupti_off_reason;
  EXPECT_NE(held.cupti_off_reason.find("torch.profiler"), std::string::npos);
  EXPECT_EQ(std::string(cupti.calls()), "cuptiSubscribe ");

  // Let go: the subscriber first, then the callbacks, then the kinds.
  cupti.set_held(0);
  cupti.clear();
  const SessionStats free1 = run_session("cupti_held_2");
  EXPECT_TRUE(free1.cupti_on) << free1.cupti_off_reason;
  const std::string first = cupti.calls();
  EXPECT_EQ(first.rfind("cuptiSubscribe cuptiActivityRegisterTimestampCallback "
                        "cuptiActivityRegisterCallbacks cuptiSetThreadIdType cuptiActivityEnable ",
                        0),
            0u)
      << first;
  EXPECT_NE(first.find("cuptiUnsubscribe"), std::string::npos) << first;

  // Another client may have set its buffer callbacks since: they are set
  // again at every start (the timestamp callback stays from the first).
  cupti.clear();
  const SessionStats free2 = run_session("cupti_held_3");
  EXPECT_TRUE(free2.cupti_on) << free2.cupti_off_reason;
  const std::string second = cupti.calls();
  EXPECT_EQ(second.rfind("cuptiSubscribe cuptiActivityRegisterCallbacks cuptiSetThreadIdType ", 0),
            0u)
      << second;

  // A start that fails once subscribed lets go of the subscriber.
  for (const char* failing : {"cuptiActivityRegisterCallbacks", "cuptiActivityEnable"}) {
    cupti.fail(failing);
    cupti.clear();
    const SessionStats refused = run_session(std::string("cupti_held_") + failing);
    EXPECT_FALSE(refused.cupti_on) << failing;
    EXPECT_NE(refused.cupti_off_reason.find(failing), std::string::npos)
        << refused.cupti_off_reason;
    const std::string calls = cupti.calls();
    EXPECT_EQ(calls.rfind("cuptiSubscribe ", 0), 0u) << calls;
    EXPECT_EQ(calls.substr(calls.size() - std::string("cuptiUnsubscribe ").size()),
              "cuptiUnsubscribe ")
        << calls;
  }
}

}  // namespace
}  // namespace jitscope::testing
