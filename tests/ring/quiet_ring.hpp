// For tests that count what a ring holds when nothing drains it before
// stop (a long flush interval): the ring's early wake of the flusher, at
// half full, is off while one of these lives.
#pragma once

#include "ring/producer.hpp"

namespace jitscope::testing {

struct NoEarlyWake {
  NoEarlyWake() noexcept { detail::set_wake_at_half(false); }
  ~NoEarlyWake() { detail::set_wake_at_half(true); }
  NoEarlyWake(const NoEarlyWake&) = delete;
  NoEarlyWake& operator=(const NoEarlyWake&) = delete;
};

}  // namespace jitscope::testing
