// The CUPTI collector in a build without CUPTI (no CUDA toolkit, or
// JITSCOPE_WITH_CUDA=OFF): always off, and says so when asked for.
#include "cupti/cupti.hpp"

#include "base/boundary.hpp"
#include "base/log.hpp"

namespace jitscope::detail {

CuptiSessionState cupti_begin_session(const Config& config) noexcept {
  CuptiSessionState s;
  if (config.cupti == CuptiMode::kOff) {
    // Quiet: turned off by the config, which says no line (cupti.hpp); out
    // of memory only leaves the reason empty.
    (void)guarded_quiet([&] { s.reason = std::string(kCuptiOffByConfig); });
    return s;
  }
  (void)guarded("recording why CUPTI is off", [&] {
    s.reason = "this jitscope was built without CUPTI (no CUDA toolkit at configure time)";
    // Asked for by name: say why it is not there. auto: nothing to say.
    if (config.cupti == CuptiMode::kOn) log_unique("CUPTI off: " + s.reason);
  });
  return s;
}
void cupti_flush(bool) noexcept {}
void cupti_end_session() noexcept {}
void take_gpu_activities(std::vector<GpuActivity>& out) { out.clear(); }
GpuCollectorCounts cupti_counts() noexcept { return {}; }
void cupti_lock_for_fork() noexcept {}
void cupti_unlock_after_fork(bool) noexcept {}

}  // namespace jitscope::detail
