// What a registering thread needs to know about the active session. Written
// by start() before it publishes the session word (release), read by the
// registration slow path after an acquire load of it.
#pragma once

#include <jitscope/jitscope.hpp>

#include <atomic>
#include <cstddef>

namespace jitscope::detail {

struct SessionParams {
  // relaxed everywhere: ordered by the session word's release/acquire; a
  // reader racing a stop+start may see a mix, which only yields a state for
  // a stale session word that is replaced on the next event.
  std::atomic<std::size_t> ring_capacity{kDefaultRingCapacity};
  std::atomic<OverflowPolicy> overflow{OverflowPolicy::kDrop};
  // What a producer calls when it must wait for room (kBlock): the
  // flusher's wake, so that it drains now rather than at its next interval
  // (a 256-slot ring under kBlock wrote 1,300 spans a second, not 1 M).
  // Set by the api layer, which knows the flusher; null: none to wake.
  std::atomic<void (*)()> wake_flusher{nullptr};
};

SessionParams& session_params() noexcept;

}  // namespace jitscope::detail
