// ThreadSanitizer builds only (CI runs the suite under --preset tsan): the
// Debian libLLVM, libMLIR and libnvJitLink are not instrumented, so TSan
// cannot see the synchronization inside them (MLIR's uniquer and thread
// pool, LLVM's lazily built statics) and may report their own accesses as
// races. Theirs to have; ours are still checked. None was reported here (the
// tests and 3 runs of 24 kernels on 4 threads under --preset tsan): a guard,
// as nvrtc_jit's hooks are for NVRTC, where CI did see one. This hook is
// TSan's documented way for a program to carry its suppressions.
#if defined(__SANITIZE_THREAD__)
#define MLIR_GPU_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define MLIR_GPU_TSAN 1
#endif
#endif

#if defined(MLIR_GPU_TSAN)
extern "C" __attribute__((visibility("default"), used)) const char* __tsan_default_suppressions() {
  return "race:libLLVM-16.so\n"
         "race:libMLIR.so\n"
         "race:libnvJitLink.so\n";
}
#endif
