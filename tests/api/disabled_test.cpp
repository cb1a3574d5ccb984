// JITSCOPE_DISABLE: every macro is a no-op expression that evaluates nothing,
// and the classes record nothing even while a session is active.
// Not covered: the run-time off path (span_test, WithoutASession...).
#define JITSCOPE_DISABLE 1
#include "trace_support.hpp"

#include <type_traits>

namespace jitscope::testing {
namespace {

int g_evaluated = 0;
std::string side_effect() {
  ++g_evaluated;
  return "evaluated";
}

TEST(CompiledOut, MacrosEvaluateNothingAndRecordNothing) {
  Config cfg = test_config("disabled");
  ScopedSession session(cfg);
  ASSERT_TRUE(session.status().ok());
  EXPECT_FALSE(active());  // compiled out: always reports off
  {
    JITSCOPE_SPAN("static");
    JITSCOPE_SPAN_ARGS("with_args", {"k", side_effect()});
    JITSCOPE_SPAN_DYN(side_effect());
    JITSCOPE_INSTANT("instant", {"k", side_effect()});
    JITSCOPE_COUNTER("counter", side_effect().size());
    JITSCOPE_THREAD_NAME(side_effect());
    Span s("object");
    s.arg("k", 1);
    EXPECT_FALSE(s.recording());
    instant("fn");
    counter("fn", 1.0);
  }
  EXPECT_EQ(g_evaluated, 0);
  const SessionStats stats = session.finish();
  EXPECT_EQ(stats.events_written, 0u);
  const nlohmann::json trace = load_trace(session.path());
  EXPECT_TRUE(events_with_ph(trace, "X").empty());
  EXPECT_TRUE(events_with_ph(trace, "I").empty());
  EXPECT_TRUE(events_with_ph(trace, "C").empty());
}

// The macros are expressions of type void, usable where a statement is.
static_assert(std::is_void_v<decltype(JITSCOPE_SPAN("x"))>);
static_assert(std::is_void_v<decltype(JITSCOPE_COUNTER("x", 1))>);

}  // namespace
}  // namespace jitscope::testing
