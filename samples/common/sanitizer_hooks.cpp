// ThreadSanitizer builds only (CI runs the suite under --preset tsan): NVRTC,
// nvJitLink and the Debian libLLVM and libMLIR are not instrumented, so TSan
// cannot see the synchronization inside them and may report their own
// accesses as races. Theirs to have; ours are still checked. Seen in CI for
// NVRTC (libnvrtc publishing its lazily created mutexes when two compile
// threads make their first calls at once); for libLLVM and libMLIR (MLIR's
// uniquer and thread pool, LLVM's lazily built statics) a guard, none seen.
// One list for both samples: a library a sample does not load costs nothing.
// This hook is TSan's documented way for a program to carry its suppressions.
#if defined(__SANITIZE_THREAD__)
#define SAMPLE_COMMON_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define SAMPLE_COMMON_TSAN 1
#endif
#endif

#if defined(SAMPLE_COMMON_TSAN)
extern "C" __attribute__((visibility("default"), used)) const char* __tsan_default_suppressions() {
  return "race:libnvrtc.so\n"
         "race:libnvrtc-builtins.so\n"
         "race:libnvJitLink.so\n"
         "race:libLLVM-16.so\n"
         "race:libMLIR.so\n";
}
#endif
