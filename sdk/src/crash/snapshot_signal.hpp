// The flight recorder's external trigger (Config::snapshot_signal,
// JITSCOPE_SNAPSHOT_SIGNAL): a signal that asks for a snapshot with no
// change to the host's code (`kill -USR2 <pid>`, also from outside a
// container's pid namespace). The handler only sets a flag and wakes the
// flusher (both async-signal-safe); the flusher takes the snapshot.
#pragma once

#include "crash/signal_names.hpp"

#include <string>

namespace jitscope::detail {

// Installs the handler for `signo`. Refused (false, `why`) when the host
// already handles or ignores that signal: it is the host's.
bool install_snapshot_signal(int signo, const char*& why) noexcept;
// Puts back what was there before, if ours is still installed (a handler
// the host installed since stays). Async-signal-safe: a forked child calls it.
void remove_snapshot_signal() noexcept;
// The flusher's side: true once per signal received (those between two
// calls count as one).
bool take_snapshot_signal() noexcept;

}  // namespace jitscope::detail
