// Names in memory the caller frees (issue 17): a writable char buffer is
// copied, never stored by pointer. The buffer is overwritten and freed
// before the flusher's first cycle; under ASan a pointer to it would be a
// heap-use-after-free, without it the trace would show the new text.
#include "trace_support.hpp"

#include <jitscope/jitscope.hpp>

#include <cstring>
#include <memory>
#include <type_traits>

namespace jitscope::testing {
namespace {

struct Kernel {
  char name[48];
};

// A key is stored by pointer: a writable buffer does not compile as one.
static_assert(std::is_constructible_v<Arg, const char (&)[4], int>);
static_assert(!std::is_constructible_v<Arg, char (&)[4], int>);
static_assert(!std::is_constructible_v<Arg, char (&)[4], const char*>);

TEST(NameLifetime, AWritableBufferIsCopied) {
  Config cfg;
  cfg.output_path = temp_path("name_lifetime");
  cfg.flush_interval = std::chrono::seconds(30);  // nothing drained before stop()
  cfg.cupti = CuptiMode::kOff;
  ASSERT_TRUE(start(cfg));
  auto kernel = std::make_unique<Kernel>();
  std::strcpy(kernel->name, "kernel_from_buffer");
  {
    Span span(kernel->name);
    Span with_args(kernel->name, {{"n", 1}});
    instant(kernel->name);
    instant(kernel->name, {{"n", 2}});
    counter(kernel->name, 3);
  }
  // Full buffer, no NUL: the whole buffer and not a byte past it.
  std::memset(kernel->name, 'z', sizeof kernel->name);
  { Span unterminated(kernel->name); }
  std::strcpy(kernel->name, "overwritten");
  kernel.reset();
  ASSERT_TRUE(stop());

  const nlohmann::json trace = load_trace(cfg.output_path);
  std::map<std::string, int> count;
  for (const auto& e : trace) {
    if (e.value("ph", "") != "M") ++count[e.value("ph", "") + " " + e.value("name", "")];
  }
  EXPECT_EQ(count["X kernel_from_buffer"], 2);
  EXPECT_EQ(count["I kernel_from_buffer"], 2);
  EXPECT_EQ(count["C kernel_from_buffer"], 1);
  EXPECT_EQ(count["X " + std::string(48, 'z')], 1);
  for (const auto& [key, n] : count) EXPECT_EQ(key.find("overwritten"), std::string::npos) << key;
}

}  // namespace
}  // namespace jitscope::testing
