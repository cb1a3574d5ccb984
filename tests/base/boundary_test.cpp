// The host boundary (base/boundary.hpp): an exception from a guarded body
// never escapes; it becomes one deduplicated `jitscope:` line, a failed
// Status, or (quiet) nothing. Not covered here: the call sites (each
// module's tests drive its own failures).
#include "base/boundary.hpp"

#include <gtest/gtest.h>

#include <new>
#include <stdexcept>
#include <string>

namespace jitscope::detail {
namespace {

TEST(Boundary, ABodyThatRunsToItsEndIsTrueAndSaysNothing) {
  int ran = 0;
  ::testing::internal::CaptureStderr();
  EXPECT_TRUE(guarded("counting", [&] { ++ran; }));
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
  EXPECT_EQ(ran, 1);
}

TEST(Boundary, EachKindOfExceptionBecomesOneLineNamingWhatFailed) {
  ::testing::internal::CaptureStderr();
  EXPECT_FALSE(guarded("boundary test: allocating", [] { throw std::bad_alloc(); }));
  EXPECT_FALSE(guarded("boundary test: parsing", [] { throw std::runtime_error("bad digit"); }));
  EXPECT_FALSE(guarded("boundary test: a host hook", [] { throw 42; }));
  EXPECT_EQ(::testing::internal::GetCapturedStderr(),
            "jitscope: boundary test: allocating failed: out of memory\n"
            "jitscope: boundary test: parsing failed: bad digit\n"
            "jitscope: boundary test: a host hook failed: unknown exception\n");
}

TEST(Boundary, TheSameFailureIsSaidOnce) {
  ::testing::internal::CaptureStderr();
  for (int i = 0; i < 3; ++i) {
    EXPECT_FALSE(guarded("boundary test: repeating", [] { throw std::bad_alloc(); }));
  }
  EXPECT_EQ(::testing::internal::GetCapturedStderr(),
            "jitscope: boundary test: repeating failed: out of memory\n");
}

TEST(Boundary, GuardedStatusReturnsTheBodysStatusOrTheFailure) {
  ::testing::internal::CaptureStderr();
  const Status fine = guarded_status("boundary test: fine", [] { return Status(); });
  const Status refused =
      guarded_status("boundary test: refused", [] { return Status::error("no such unit"); });
  const Status thrown =
      guarded_status("boundary test: adding a metric", []() -> Status { throw std::bad_alloc(); });
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "") << "the caller decides what to log";
  EXPECT_TRUE(fine.ok());
  EXPECT_FALSE(refused.ok());
  EXPECT_EQ(refused.message(), "no such unit");
  EXPECT_FALSE(thrown.ok());
  EXPECT_EQ(thrown.message(), "boundary test: adding a metric failed: out of memory");
}

TEST(Boundary, QuietSaysNothing) {
  ::testing::internal::CaptureStderr();
  EXPECT_FALSE(guarded_quiet([] { throw std::runtime_error("x"); }));
  EXPECT_TRUE(guarded_quiet([] {}));
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
}

}  // namespace
}  // namespace jitscope::detail
