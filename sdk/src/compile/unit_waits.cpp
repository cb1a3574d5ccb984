// CompileUnit::waits_for: a unit that needed another's result, as the
// instant "unit_waits" that jitscope-report's critical path follows
// (docs/critical-path.md). Cold: one instant with three args.
#include "base/boundary.hpp"
#include "compile/state.hpp"

#include <jitscope/compile.hpp>

#include <unistd.h>

namespace jitscope {

Status CompileUnit::waits_for(CompileId on, std::int64_t pid) noexcept {
  detail::UnitState* state = state_.get();
  if (state == nullptr || !frame_.open) {
    return Status::error("waits_for: the compile unit is not open");
  }
  if (pid < 0) return Status::error("waits_for: pid must be a pid, or 0 for this process");
  if ((pid == 0 || pid == ::getpid()) && on == state->id) {
    return Status::error("waits_for: a unit cannot wait for itself");
  }
  if (!active()) return Status::error("waits_for: no session is recording");
  return detail::guarded_status("waits_for", [&] {
    const std::string unit = state->id.str();
    const std::string target = on.str();
    if (pid == 0) {
      instant("unit_waits", {{"unit", std::string_view(unit)}, {"on", std::string_view(target)}});
    } else {
      instant(
          "unit_waits",
          {{"unit", std::string_view(unit)}, {"on", std::string_view(target)}, {"on_pid", pid}});
    }
    return Status();
  });
}

}  // namespace jitscope
