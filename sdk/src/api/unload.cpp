// An image that includes a jitscope header is being unloaded
// (<jitscope/detail/unload_hook.h>): nothing may read its static names after
// this returns, so the flusher writes every event recorded so far and copies
// the names of the spans still open, and NVTX emission forgets the names it
// registered by address.
#include "base/boundary.hpp"
#include "base/log.hpp"
#include "crash/unload_drain.hpp"
#include "nvtx/nvtx.hpp"
#include "ring/thread_registry.hpp"

#include <jitscope/detail/unload_hook.h>
#include <jitscope/jitscope.hpp>

#include <dlfcn.h>

#include <chrono>
#include <string>

namespace jitscope::detail {
namespace {

// Long enough for a flusher cycle on a slow disk; a flusher stuck longer is
// not waited for (the host must not hang in dlclose()).
constexpr std::chrono::milliseconds kUnloadDrainLimit{10'000};

[[gnu::cold]] void say_drain_timed_out(const void* address) noexcept {
  (void)guarded("reporting an unload", [&] {
    Dl_info info{};
    const char* image =
        ::dladdr(address, &info) != 0 && info.dli_fname != nullptr ? info.dli_fname : "an image";
    log_line(std::string("unloading ") + image + ": the flusher did not answer in " +
             std::to_string(kUnloadDrainLimit.count() / 1000) +
             " s; events it recorded may be written with its names gone");
  });
}

}  // namespace
}  // namespace jitscope::detail

extern "C" void jitscope_image_unloading(const void* address) {
  using namespace jitscope::detail;
  // No session: no ring holds an event to write (at process exit the
  // session has ended before images are finalized).
  if (session_word() == 0) return;
  // The flusher never records, and must not wait for itself.
  if (on_flusher_thread()) return;
  nvtx_emit_forget_static_names();
  if (!drain_before_unload(kUnloadDrainLimit)) say_drain_timed_out(address);
}
