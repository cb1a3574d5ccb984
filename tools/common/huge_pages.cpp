#include "huge_pages.hpp"

#include <cstdlib>  // first: it defines __GLIBC__

#if defined(__linux__) && defined(__GLIBC__)
#include <malloc.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <string>

namespace jitscope::tools {
namespace {

std::uintptr_t g_advised_end = 0;  // the heap up to here is advised; 0: not set up

std::uintptr_t heap_top() noexcept { return reinterpret_cast<std::uintptr_t>(::sbrk(0)); }

bool advise(std::uintptr_t from, std::uintptr_t to) noexcept {
  const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
  from &= ~(page - 1);  // the end may be anywhere: the kernel rounds the length up
  return to > from && ::madvise(reinterpret_cast<void*>(from), to - from, MADV_HUGEPAGE) == 0;
}

// The first line of a /proc or /sys file ("" when unreadable).
std::string first_line(const char* path) {
  std::ifstream f(path);
  std::string line;
  std::getline(f, line);
  return line;
}

// Where asking is of no use, or of harm: no transparent huge pages (none
// in this kernel, or "[never]"), or strict overcommit (mode 2), where the
// heap's 256 MiB pad would be charged against the commit limit.
bool worth_asking() {
  const std::string thp = first_line("/sys/kernel/mm/transparent_hugepage/enabled");
  if (thp.empty() || thp.find("[never]") != std::string::npos) return false;
  return first_line("/proc/sys/vm/overcommit_memory") != "2";
}

// glibc's defaults (mallopt(3)), for when the heap turned out not to be advisable.
void default_malloc() noexcept {
  ::mallopt(M_TOP_PAD, 128 * 1024);
  ::mallopt(M_TRIM_THRESHOLD, 128 * 1024);
  ::mallopt(M_MMAP_THRESHOLD, 128 * 1024);
}

}  // namespace

bool prefer_huge_pages() noexcept {
  if (g_advised_end != 0) return true;
  try {
    if (!worth_asking()) return false;
  } catch (...) {  // a stream's allocation: then not asked
    return false;
  }
  ::mallopt(M_TOP_PAD, 256 << 20);        // grow far ahead: the next part is advised before use
  ::mallopt(M_TRIM_THRESHOLD, 1 << 30);   // and keep it (trimmed, it would fault in again)
  ::mallopt(M_MMAP_THRESHOLD, 32 << 20);  // glibc's largest: up to it from the heap
  // A block past the heap's free top grows it now, with its pad (and,
  // freed, it stays there for what comes next).
  void* first = std::malloc(1 << 20);
  asm volatile("" : : "r"(first) : "memory");  // kept: a malloc and free of nothing else go
  const auto start = reinterpret_cast<std::uintptr_t>(first);
  std::free(first);
  const std::uintptr_t top = heap_top();
  // Not from the brk heap (a sanitizer's allocator, or sbrk refused), or
  // the advice refused: malloc as it was.
  if (start == 0 || start >= top || !advise(start, top)) {
    default_malloc();
    return false;
  }
  g_advised_end = top;
  return true;
}

void advise_heap_growth() noexcept {
  if (g_advised_end == 0) return;
  const std::uintptr_t top = heap_top();
  if (top < g_advised_end) {  // trimmed (past M_TRIM_THRESHOLD): what grows back is new
    g_advised_end = top;
    return;
  }
  if (top == g_advised_end) return;
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
