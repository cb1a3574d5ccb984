// Test support: out of memory on demand. While a FailOneAllocation lives,
// the `skip`-th allocation made by its thread from then on (0: the next one)
// throws std::bad_alloc; the ones before and after it succeed, so what the
// code under test does about the failure (say a line, undo, go on) can run.
//
// It replaces the global operator new of the test binary, which serves the
// jitscope it links statically too: include it in one source file per binary.
#pragma once

#include <cstddef>
#include <cstdlib>
#include <new>

namespace jitscope::testing {

// Allocations this thread lets through before the failing one; -1: none fails.
inline thread_local long t_allocations_before_failure = -1;
inline thread_local bool t_allocation_failed = false;

class FailOneAllocation {
 public:
  explicit FailOneAllocation(long skip = 0) noexcept {
    t_allocation_failed = false;
    t_allocations_before_failure = skip;
  }
  ~FailOneAllocation() { t_allocations_before_failure = -1; }
  FailOneAllocation(const FailOneAllocation&) = delete;
  FailOneAllocation& operator=(const FailOneAllocation&) = delete;
  // Whether the allocation failed (false: the code made fewer than skip + 1).
  static bool happened() noexcept { return t_allocation_failed; }
};

}  // namespace jitscope::testing

void* operator new(std::size_t bytes) {
  long& before = jitscope::testing::t_allocations_before_failure;
  if (before == 0) {
    before = -1;
    jitscope::testing::t_allocation_failed = true;
    throw std::bad_alloc();
  }
  if (before > 0) --before;
  if (void* p = std::malloc(bytes != 0 ? bytes : 1)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t bytes) { return ::operator new(bytes); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
