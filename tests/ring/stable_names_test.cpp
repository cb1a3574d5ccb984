// stable_name and the adapters' per-thread cache in front of it
// (adapter_stack.hpp's kept_name): one NUL-terminated copy per text, kept
// for the process; a view's address reused for other text gets that
// text's copy; bounded, and then nullptr (callers copy the name).
#include <jitscope/detail/adapter_stack.hpp>

#include <gtest/gtest.h>

#include <cstring>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace jitscope::detail {
namespace {

TEST(StableNames, OneCopyPerTextNulTerminated) {
  const std::string a = "InstCombinePass";
  const std::string b = "InstCombinePass";  // another buffer, the same text
  const char* ka = stable_name(a);
  ASSERT_NE(ka, nullptr);
  EXPECT_EQ(stable_name(b), ka);
  EXPECT_STREQ(ka, "InstCombinePass");
  EXPECT_NE(static_cast<const void*>(ka), static_cast<const void*>(a.data()));
  // A view that is not NUL-terminated: only its bytes are kept.
  const std::string_view prefix = std::string_view(a).substr(0, 4);
  EXPECT_STREQ(stable_name(prefix), "Inst");
  EXPECT_EQ(stable_name(""), nullptr);
  EXPECT_EQ(stable_name(std::string_view("a\0b", 3)), nullptr);
}

TEST(StableNames, TheCacheChecksTheTextNotOnlyTheAddress) {
  char buffer[32] = "LoopVectorizePass";
  const std::string_view view(buffer, 17);
  const char* first = kept_name(view);
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(kept_name(view), first);
  std::memcpy(buffer, "SLPVectorizerPass", 17);  // same address and size, other text
  const char* second = kept_name(view);
  ASSERT_NE(second, nullptr);
  EXPECT_STREQ(second, "SLPVectorizerPass");
  EXPECT_STREQ(first, "LoopVectorizePass") << "a kept copy never changes";
}

TEST(StableNames, ManyThreadsGetTheSamePointers) {
  std::vector<std::string> names;
  for (int i = 0; i < 300; ++i) names.push_back("pass_" + std::to_string(i));
  std::vector<std::vector<const char*>> seen(4);
  std::vector<std::thread> threads;
  for (std::size_t t = 0; t < seen.size(); ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < 3; ++round) {
        for (const std::string& n : names) {
          const char* k = kept_name(n);
          if (round == 2) seen[t].push_back(k);
        }
      }
    });
  }
  for (std::thread& th : threads) th.join();
  for (std::size_t t = 1; t < seen.size(); ++t) EXPECT_EQ(seen[t], seen[0]);
  for (std::size_t i = 0; i < names.size(); ++i) EXPECT_EQ(std::string(seen[0][i]), names[i]);
}

// Last in the file: it fills the table.
TEST(StableNames, BoundedThenNullptrAndOldNamesStillFound) {
  const char* early = stable_name("kept_before_the_bound");
  ASSERT_NE(early, nullptr);
  std::size_t added = 0;
  for (std::size_t i = 0; i < 20000; ++i) {
    if (stable_name("filler_" + std::to_string(i)) == nullptr) break;
    ++added;
  }
  EXPECT_LT(added, 16384u);
  EXPECT_GT(added, 15000u);
  EXPECT_EQ(stable_name("one_more_new_name"), nullptr);
  EXPECT_EQ(stable_name("kept_before_the_bound"), early);
}

}  // namespace
}  // namespace jitscope::detail
