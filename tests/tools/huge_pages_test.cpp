// prefer_huge_pages and advise_heap_growth (tools/common/huge_pages.hpp):
// the heap's memory, where the report's allocations go, is advised
// MADV_HUGEPAGE, the part it grew to later too. Read back from the kernel:
// the "hg" flag of the mapping that holds a fresh block
// (/proc/self/smaps). Skipped under a sanitizer (its allocator is not
// glibc's brk heap) and where prefer_huge_pages asks nothing (no
// transparent huge pages, "never", strict overcommit), or glibc asks
// itself (GLIBC_TUNABLES).
// Not covered here: what it saves (docs/performance.md).
#include <huge_pages.hpp>

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
#else
constexpr bool kSanitized = false;
#endif

// The VmFlags of the mapping holding `p` ("" if none is found).
std::string flags_of(const void* p) {
  const auto at = reinterpret_cast<std::uintptr_t>(p);
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    std::uintptr_t lo = 0, hi = 0;
    char dash = 0;
    std::istringstream head(line);
    if (head >> std::hex >> lo >> dash >> hi && dash == '-') {
      inside = lo <= at && at < hi;
      continue;
    }
    if (inside && line.rfind("VmFlags:", 0) == 0) return line;
  }
  return "";
}

bool advised(const void* p) { return flags_of(p).find(" hg") != std::string::npos; }

std::string first_line(const char* path) {
  std::ifstream f(path);
  std::string line;
  std::getline(f, line);
  return line;
}

// Why prefer_huge_pages asks nothing here, or "".
std::string not_asked() {
  const std::string thp = first_line("/sys/kernel/mm/transparent_hugepage/enabled");
  if (thp.empty()) return "no transparent huge pages in this kernel";
  if (thp.find("[never]") != std::string::npos) return "transparent huge pages are off";
  if (first_line("/proc/sys/vm/overcommit_memory") == "2") return "strict overcommit";
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  if (tunables != nullptr && std::string(tunables).find("hugetlb") != std::string::npos) {
    return "glibc advises its heap itself (GLIBC_TUNABLES)";
  }
  return "";
}

// The heap's last byte: in the part malloc grows next.
const void* heap_end() { return static_cast<const char*>(::sbrk(0)) - 1; }

TEST(HugePages, TheHeapAndWhatItGrowsToAreAdvised) {
  if (kSanitized) GTEST_SKIP() << "a sanitizer's allocator: no brk heap to advise";
  if (const std::string why = not_asked(); !why.empty()) GTEST_SKIP() << why;
  ASSERT_TRUE(jitscope::tools::prefer_huge_pages());
  EXPECT_TRUE(jitscope::tools::prefer_huge_pages());  // once: the second call changes nothing
  EXPECT_TRUE(advised(heap_end())) << flags_of(heap_end());
  // Past the heap's 256 MiB pad, in blocks below malloc's mmap threshold:
  // the heap grows, unadvised until advise_heap_growth.
  std::vector<void*> blocks;
  for (int i = 0; i < 300; ++i) blocks.push_back(std::malloc(1 << 20));
  void* last = blocks.back();
  ASSERT_FALSE(flags_of(last).empty()) << "not found in /proc/self/smaps";
  EXPECT_FALSE(advised(last)) << "grown before it was asked: " << flags_of(last);
  jitscope::tools::advise_heap_growth();
  EXPECT_TRUE(advised(last)) << flags_of(last);
  EXPECT_TRUE(advised(blocks.front())) << flags_of(blocks.front());
  EXPECT_TRUE(advised(heap_end())) << flags_of(heap_end());
  for (void* b : blocks) std::free(b);
}

}  // namespace
