#include "huge_pages.hpp"

#include <cstdlib>  // first: it defines __GLIBC__

#if defined(__linux__) && defined(__GLIBC__)
#include <malloc.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>

namespace jitscope::tools {
namespace {

constexpr std::uintptr_t kPage = 4096;
std::uintptr_t g_advised_end = 0;  // the heap up to here is advised; 0: not set up

std::uintptr_t heap_top() noexcept { return reinterpret_cast<std::uintptr_t>(::sbrk(0)); }

bool advise(std::uintptr_t from, std::uintptr_t to) noexcept {
  from &= ~(kPage - 1);
  return to > from && ::madvise(reinterpret_cast<void*>(from), to - from, MADV_HUGEPAGE) == 0;
}

}  // namespace

bool prefer_huge_pages() noexcept {
  if (g_advised_end != 0) return true;
  ::mallopt(M_TOP_PAD, 256 << 20);         // grow far ahead: the next part is advised before use
  ::mallopt(M_TRIM_THRESHOLD, 1 << 30);    // and keep it (trimmed, it would fault in again)
  ::mallopt(M_MMAP_THRESHOLD, 32 << 20);   // glibc's largest: up to it from the heap
  // A block past the heap's free top grows it now, with its pad (and,
  // freed, it stays there for what comes next).
  void* first = std::malloc(1 << 20);
  asm volatile("" : : "r"(first) : "memory");  // kept: a malloc and free of nothing else go
  std::free(first);
  const auto start = reinterpret_cast<std::uintptr_t>(first);
  const std::uintptr_t top = heap_top();
  if (first == nullptr || start >= top) return false;  // not from the brk heap
  if (!advise(start, top)) return false;
  g_advised_end = top;
  return true;
}

void advise_heap_growth() noexcept {
  if (g_advised_end == 0) return;
  const std::uintptr_t top = heap_top();
  if (top <= g_advised_end) return;
  advise(g_advised_end, top);
  g_advised_end = top;
}

}  // namespace jitscope::tools

#else

namespace jitscope::tools {
bool prefer_huge_pages() noexcept { return false; }
void advise_heap_growth() noexcept {}
}  // namespace jitscope::tools

#endif
