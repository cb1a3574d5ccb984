// Per-thread heap state that is safe to reach at any point of a thread's
// life, exit included. A thread_local object with a destructor is not: glibc
// destroys the main thread's thread_locals before static destructors and
// atexit handlers run, and a worker's in reverse order of construction, so
// NVTX calls made from other libraries' teardown would touch freed memory.
// Here the thread_local is a plain pointer; a guard frees the state when a
// worker thread exits (then get() returns nullptr for good), and the main
// thread's state is left for the process exit to reclaim.
#pragma once

#include "base/boundary.hpp"

#include <sys/syscall.h>
#include <unistd.h>

#include <new>

namespace jitscope::detail {

template <class T, class Tag>
class PerThread {
 public:
  // The calling thread's state, built on first use; nullptr while the thread
  // is exiting or if it could not be allocated (then for the rest of the thread).
  static T* get() noexcept {
    if (T* t = state_) [[likely]]
      return t;
    if (gone_) return nullptr;
    return create();
  }
  // The state if it exists; never builds it.
  static T* existing() noexcept { return state_; }
  // True once the thread's state is freed (it is exiting) or failed to build.
  static bool gone() noexcept { return gone_; }

 private:
  struct Guard {
    ~Guard() {
      if (::getpid() == static_cast<pid_t>(::syscall(SYS_gettid))) return;  // main thread
      delete state_;
      state_ = nullptr;
      gone_ = true;
    }
  };
  [[gnu::noinline]] static T* create() noexcept {
    gone_ = true;  // until it works: a failed allocation is not retried
    T* t = new (std::nothrow) T();
    if (t == nullptr) return nullptr;
    // Quiet: this runs inside other libraries' NVTX calls, on any thread;
    // the caller counts what it could not record.
    if (!guarded_quiet([] {
          static thread_local Guard guard;  // registers its destructor now
          (void)guard;
        })) {
      delete t;
      return nullptr;
    }
    state_ = t;
    gone_ = false;
    return t;
  }
  static constinit thread_local T* state_;
  static constinit thread_local bool gone_;
};

template <class T, class Tag>
constinit thread_local T* PerThread<T, Tag>::state_ = nullptr;
template <class T, class Tag>
constinit thread_local bool PerThread<T, Tag>::gone_ = false;

}  // namespace jitscope::detail
