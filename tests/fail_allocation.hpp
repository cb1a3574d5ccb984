// Test support: out of memory on demand. While a FailOneAllocation lives,
// the `skip`-th allocation made by its thread from then on (0: the next one)
// throws std::bad_alloc (a nothrow new returns nullptr); the ones before and
// after it succeed, so what the code under test does about the failure (say
// a line, undo, go on) can run. Other threads (gtest's, the flusher) are
// never touched.
//
// It replaces the global operator new of the test binary, which serves the
// jitscope it links statically too: include it in one source file per
// binary. malloc and free underneath, so the forms pair with each other and
// with ASan, which intercepts malloc. The aligned forms are left to the
// library: nothing the tests drive is over-aligned.
#pragma once

#include <cstddef>
#include <cstdlib>
#include <new>

namespace jitscope::testing {

// Allocations this thread lets through before the failing one; -1: none
// fails. Constant-initialized: usable before main.
inline constinit thread_local long t_allocations_before_failure = -1;
inline constinit thread_local bool t_allocation_failed = false;

class FailOneAllocation {
 public:
  static constexpr long kNotYet = -1;  // armed later with arm()
  explicit FailOneAllocation(long skip = 0) noexcept { arm(skip); }
  ~FailOneAllocation() { t_allocations_before_failure = -1; }
  FailOneAllocation(const FailOneAllocation&) = delete;
  FailOneAllocation& operator=(const FailOneAllocation&) = delete;
  static void arm(long skip) noexcept {
    t_allocation_failed = false;
    t_allocations_before_failure = skip;
  }
  // Whether the allocation failed (false: the code made fewer than skip + 1).
  static bool happened() noexcept { return t_allocation_failed; }
  bool fired() const noexcept { return happened(); }
};

// True if this allocation is the one to fail (then off again).
inline bool allocation_fails_now() noexcept {
  long& before = t_allocations_before_failure;
  if (before < 0) return false;
  if (before-- > 0) return false;
  t_allocation_failed = true;  // `before` is -1 now: off
  return true;
}

}  // namespace jitscope::testing

void* operator new(std::size_t bytes) {
  if (jitscope::testing::allocation_fails_now()) throw std::bad_alloc();
  if (void* p = std::malloc(bytes != 0 ? bytes : 1)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t bytes) { return ::operator new(bytes); }
void* operator new(std::size_t bytes, const std::nothrow_t&) noexcept {
  if (jitscope::testing::allocation_fails_now()) return nullptr;
  return std::malloc(bytes != 0 ? bytes : 1);
}
void* operator new[](std::size_t bytes, const std::nothrow_t& tag) noexcept {
  return ::operator new(bytes, tag);
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
