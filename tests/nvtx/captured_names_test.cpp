// The captured-names registry (nvtx/captured_names.hpp) when memory runs
// out: each allocation a call makes is failed in turn; the call gives what
// its contract says (no domain, the fixed string, the old category name),
// one `jitscope:` line says what failed, and the next call works, with no
// half-made entry left behind (a domain's name without its domain).
//
// Not covered here: the NVTX slots that call these (nvtx_capture_test), the
// cap on registered strings.
#include "nvtx/captured_names.hpp"

#include "fail_allocation.hpp"

#include <gtest/gtest.h>

#include <string>

namespace jitscope::testing {
namespace {

using detail::CapturedDomain;

// Enough allocation points for each call: keys and names longer than the
// small-string buffer, a map node, a bucket array, the domain itself.
constexpr long kAllocationPoints = 12;

TEST(CapturedNames, OutOfMemoryCreatingADomainGivesNoneThenTheDomain) {
  ::testing::internal::CaptureStderr();
  int failures = 0;
  for (long skip = 0; skip < kAllocationPoints; ++skip) {
    const std::string name = "a domain created short of memory, attempt " + std::to_string(skip);
    CapturedDomain* first = nullptr;
    bool failed = false;
    {
      FailOneAllocation fail(skip);
      first = detail::captured_domain(name);
      failed = FailOneAllocation::happened();
    }
    CapturedDomain* again = detail::captured_domain(name);
    ASSERT_NE(again, nullptr) << "skip " << skip << ": a failed call left its name behind";
    EXPECT_EQ(detail::captured_domain(name), again);
    EXPECT_EQ(std::string(detail::captured_domain_name(again)), name);
    if (failed) {
      ++failures;
      EXPECT_EQ(first, nullptr) << "skip " << skip;
    } else {
      EXPECT_EQ(first, again) << "skip " << skip;
    }
  }
  EXPECT_GE(failures, 2) << "at least the map's node and the domain itself";
  EXPECT_LT(failures, kAllocationPoints) << "some calls needed fewer allocations and succeeded";
  EXPECT_EQ(::testing::internal::GetCapturedStderr(),
            "jitscope: NVTX capture: creating a domain failed: out of memory\n");
}

TEST(CapturedNames, OutOfMemoryRegisteringAStringGivesTheFixedTextThenTheString) {
  CapturedDomain* domain = detail::captured_domain("strings short of memory");
  ASSERT_NE(domain, nullptr);
  ::testing::internal::CaptureStderr();
  int failures = 0;
  for (long skip = 0; skip < kAllocationPoints; ++skip) {
    const std::string text = "a string registered short of memory, attempt " + std::to_string(skip);
    const char* first = nullptr;
    bool failed = false;
    {
      FailOneAllocation fail(skip);
      first = detail::captured_string(domain, text);
      failed = FailOneAllocation::happened();
    }
    const char* again = detail::captured_string(domain, text);
    ASSERT_NE(again, nullptr);
    EXPECT_EQ(std::string(again), text) << "skip " << skip;
    EXPECT_EQ(detail::captured_string(domain, text), again);
    if (failed) {
      ++failures;
      EXPECT_EQ(std::string(first), "<too many registered strings>") << "skip " << skip;
    } else {
      EXPECT_EQ(first, again) << "skip " << skip;
    }
  }
  EXPECT_GE(failures, 1);
  EXPECT_EQ(::testing::internal::GetCapturedStderr(),
            "jitscope: NVTX capture: registering a string failed: out of memory\n");
}

TEST(CapturedNames, OutOfMemoryNamingACategoryKeepsGoing) {
  CapturedDomain* domain = detail::captured_domain("categories short of memory");
  ASSERT_NE(domain, nullptr);
  ::testing::internal::CaptureStderr();
  int failures = 0;
  for (long skip = 0; skip < kAllocationPoints; ++skip) {
    const auto id = static_cast<std::uint32_t>(100 + skip);
    const std::string name = "a category named short of memory, attempt " + std::to_string(skip);
    {
      FailOneAllocation fail(skip);
      detail::name_captured_category(domain, id, name);
      if (FailOneAllocation::happened()) ++failures;
    }
    detail::name_captured_category(domain, id, name);
    std::string out;
    ASSERT_TRUE(detail::captured_category_name(domain, id, out)) << "skip " << skip;
    EXPECT_EQ(out, name) << "skip " << skip;
  }
  EXPECT_GE(failures, 1);
  EXPECT_EQ(::testing::internal::GetCapturedStderr(),
            "jitscope: NVTX capture: naming a category failed: out of memory\n");
}

}  // namespace
}  // namespace jitscope::testing
