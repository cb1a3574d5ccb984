// ThreadSanitizer builds only: NVRTC and nvJitLink are not instrumented, and
// TSan misreads how they publish their own lazily created mutexes when two
// compile threads make their first calls at once (a "data race" inside
// libnvrtc's pthread_mutex_lock, seen in CI under --preset tsan). Their races
// are theirs to have; ours are still checked. This hook is TSan's documented
// way for a program to carry its suppressions.
#if defined(__SANITIZE_THREAD__)
#define NVRTC_JIT_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define NVRTC_JIT_TSAN 1
#endif
#endif

#if defined(NVRTC_JIT_TSAN)
extern "C" __attribute__((visibility("default"), used)) const char* __tsan_default_suppressions() {
  return "race:libnvrtc.so\n"
         "race:libnvrtc-builtins.so\n"
         "race:libnvJitLink.so\n";
}
#endif
