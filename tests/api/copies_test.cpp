// Two copies of jitscope in one process split the trace (each has its own
// session word, rings and current unit). This test program links the
// static library; loading libjitscope.so beside it makes a second copy,
// which says so in one `jitscope:` line at its load, naming both objects.
#include "api/copies.hpp"
#include "trace_support.hpp"

#include <gtest/gtest.h>

#include <dlfcn.h>

#include <string>

namespace jitscope::testing {
namespace {

std::size_t count_of(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) {
    ++n;
  }
  return n;
}

TEST(Copies, OneCopyFindsNoOther) {
  EXPECT_TRUE(detail::other_jitscope_copies().empty());
  StderrCapture err;
  detail::say_other_copies();
  EXPECT_EQ(err.text(), "");
}

TEST(Copies, TheSharedLibraryLoadedBesideTheStaticOneSaysSoOnce) {
  StderrCapture err;
  void* shared = ::dlopen(JITSCOPE_SHARED_LIBRARY, RTLD_NOW | RTLD_LOCAL);
  const std::string said = err.text();
  ASSERT_NE(shared, nullptr) << ::dlerror();
  EXPECT_EQ(count_of(said, "jitscope: "), 1u) << said;
  EXPECT_NE(said.find("2 copies of jitscope are loaded"), std::string::npos) << said;
  EXPECT_NE(said.find("libjitscope.so"), std::string::npos) << said;
  EXPECT_NE(said.find("copies_test"), std::string::npos) << said;  // this program
  // And this copy now finds the other one too.
  const std::vector<std::string> others = detail::other_jitscope_copies();
  ASSERT_EQ(others.size(), 1u);
  EXPECT_NE(others[0].find("libjitscope.so"), std::string::npos) << others[0];
  ::dlclose(shared);  // -z nodelete: stays mapped
}

}  // namespace
}  // namespace jitscope::testing
