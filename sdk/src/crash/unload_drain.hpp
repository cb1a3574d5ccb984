// Draining before an image is unloaded (<jitscope/detail/unload_hook.h>).
// A thread in dlclose() asks the flusher for one cycle that writes every
// event recorded so far and copies the static names of the spans still open,
// and waits for it, so that nothing the flusher reads later points into the
// unmapped image.
//
// Lock-free on purpose: the requesting thread holds the dynamic loader's
// lock, and a fork() may come at any point (no lock to inherit held).
#pragma once

#include <chrono>
#include <cstdint>

namespace jitscope::detail {

// The requesting side. Returns false if the flusher did not answer within
// `limit` (it is stuck, e.g. on a slow disk); true when it answered or when
// no flusher runs (then nothing will read the names).
bool drain_before_unload(std::chrono::milliseconds limit) noexcept;

// The flusher's side. The newest unanswered request (0: none), read before
// a cycle's drain and answered after it.
std::uint64_t unload_pending() noexcept;
void unload_answer(std::uint64_t request) noexcept;
// Set before the flusher thread is made (so that no request made once a
// producer can record is skipped), cleared when it ends (then every request
// counts as answered).
void unload_flusher_running(bool running) noexcept;

}  // namespace jitscope::detail
