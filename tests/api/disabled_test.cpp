// JITSCOPE_DISABLE in a program that also links the library and has enabled
// translation units (this binary: disabled_test_session.cpp is one). The
// disabled TU's calls are inline no-ops in jitscope::disabled: start() fails
// saying jitscope is compiled out and creates no file, every macro is a no-op
// expression that evaluates nothing, and nothing reaches the library even
// while an enabled TU's session is on.
// Not covered: a consumer with no library at all (disabled_consumer); the
// run-time off path (span_test, WithoutASession...).
#define JITSCOPE_DISABLE 1
#include <jitscope/jitscope.h>
#include <jitscope/compile.hpp>
#include <jitscope/jitscope.hpp>

#include "disabled_test_session.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <string>
#include <type_traits>

namespace jitscope::testing {
namespace {

int g_evaluated = 0;
std::string side_effect() {
  ++g_evaluated;
  return "evaluated";
}

bool exists(const std::string& path) { return ::access(path.c_str(), F_OK) == 0; }

TEST(CompiledOut, StartFailsSayingCompiledOutAndCreatesNoFile) {
  Config cfg;
  cfg.output_path = enabled::temp_file("disabled_start");
  cfg.metrics_path = cfg.output_path + "l";
  const Status st = start(cfg);
  EXPECT_FALSE(st.ok());
  EXPECT_EQ(st.message(), "jitscope is compiled out (JITSCOPE_DISABLE): no session is started");
  EXPECT_FALSE(active());
  EXPECT_FALSE(enabled::session_active());  // the library never saw it
  SessionStats stats;
  EXPECT_TRUE(stop(&stats).ok());
  EXPECT_EQ(stats.events_written, 0u);
  EXPECT_FALSE(exists(cfg.output_path));
  EXPECT_FALSE(exists(cfg.metrics_path));

  jitscope_config c;
  jitscope_config_init(&c);
  c.output_path = cfg.output_path.c_str();
  EXPECT_EQ(jitscope_start(&c), -1);
  EXPECT_STREQ(jitscope_last_error(), st.message().c_str());
  EXPECT_FALSE(enabled::session_active());
  EXPECT_FALSE(exists(cfg.output_path));
}

TEST(CompiledOut, MacrosEvaluateNothingAndRecordNothingWhileALibrarySessionRuns) {
  const std::string path = enabled::start_session("disabled");
  ASSERT_FALSE(path.empty());
  EXPECT_TRUE(enabled::session_active());
  EXPECT_FALSE(active());  // compiled out: always reports off
  {
    JITSCOPE_SPAN("static");
    JITSCOPE_SPAN_ARGS("with_args", {"k", side_effect()});
    JITSCOPE_SPAN_DYN(side_effect());
    JITSCOPE_INSTANT("instant", {"k", side_effect()});
    JITSCOPE_COUNTER("counter", side_effect().size());
    JITSCOPE_THREAD_NAME(side_effect());
    JITSCOPE_PHASE("phase", {.column = "phase_us"});
    Span s("object");
    s.arg("k", 1);
    EXPECT_FALSE(s.recording());
    instant("fn");
    counter("fn", 1.0);
    jitscope_span_begin("c_span");
    jitscope_span_end();
    CompileUnit unit({.frame = "f"});
    Phase p("keyed");
    EXPECT_TRUE(unit.set("kernels", 1).ok());
    EXPECT_FALSE(unit.ref().valid());
  }
  EXPECT_EQ(g_evaluated, 0);
  EXPECT_EQ(enabled::compile_records(), 0u);
  EXPECT_EQ(enabled::phase_keys(), 0u);
  EXPECT_EQ(enabled::stop_session(), 0u);
  EXPECT_EQ(enabled::count_events(path, "X"), 0u);
  EXPECT_EQ(enabled::count_events(path, "I"), 0u);
  EXPECT_EQ(enabled::count_events(path, "C"), 0u);
}

// The macros are expressions of type void, usable where a statement is.
static_assert(std::is_void_v<decltype(JITSCOPE_SPAN("x"))>);
static_assert(std::is_void_v<decltype(JITSCOPE_COUNTER("x", 1))>);
static_assert(std::is_void_v<decltype(JITSCOPE_PHASE("x"))>);
// The disabled API is its own, in an inline namespace: no clash with the library's.
static_assert(std::is_same_v<Span, disabled::Span>);

}  // namespace
}  // namespace jitscope::testing
