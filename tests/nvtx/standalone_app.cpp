// A program with no jitscope in it, only a library that emits NVTX. Run with
// NVTX_INJECTION64_PATH=libjitscope_nvtx.so and JITSCOPE_TRACE=<file>: the
// injection library loads libjitscope.so from its own folder, which starts a
// session from JITSCOPE_TRACE and writes the library's ranges at exit.
#include "vendor_lib.h"

#include <thread>

int main() {
  vendor_push_pop(2);
  vendor_mark("standalone.mark");
  vendor_domain_ranges();
  // Started here, ended on another thread: one async slice.
  const std::uint64_t id = vendor_range_start("standalone.async");
  std::thread([id] { vendor_range_end(id); }).join();
  return 0;
}
