// The compile layer's locks across fork() (state.hpp). api/session.cpp's
// fork handlers call these after the ring's, NVTX's and CUPTI's locks.
//
// The order, outermost first. Every nesting in the code goes down this list
// (a lock is only ever taken while holding locks above it), so taking them
// all in this order cannot deadlock against a host thread:
//
//   1. the phase registry, then every phase's spin lock (registration order)
//   2. the wait-counter registry
//   3. the unit registry (also the live-unit list), then every live unit's
//      mutex (list order; units are linked and unlinked under the registry's)
//   4. the runtime record
//   5. the step log's sink, then its progress bar (a line said about the bar
//      goes through log_unique, below)
//   6. the recent records and the metrics queue (a dropped line goes through
//      log_unique, below)
//   7. the artifacts state (held for a copy of its folder's name; the unit's
//      mutex and log lines come after it is released)
//   8. the autotuning ledger (held for its own figures only; the record's
//      line goes to the metrics queue after it is released)
//
// Below all of them: base/log's log_unique lock, which the session's
// handlers take last. Each of these is held for a few instructions, an
// allocation or a write to stderr, never across a call into the host (hooks
// and step sinks run outside them), so fork() waits at most that long.
#include "compile/artifacts.hpp"
#include "compile/autotune_ledger.hpp"
#include "compile/state.hpp"

namespace jitscope::detail {

void compile_lock_for_fork() noexcept {
  lock_phases_for_fork();
  lock_waits_for_fork();
  lock_units_for_fork();
  lock_runtime_for_fork();
  lock_step_log_for_fork();
  lock_record_sinks_for_fork();
  lock_artifacts_for_fork();
  lock_ledger_for_fork();
}

void compile_unlock_after_fork() noexcept {
  unlock_ledger_after_fork();
  unlock_artifacts_after_fork();
  unlock_record_sinks_after_fork();
  unlock_step_log_after_fork();
  unlock_runtime_after_fork();
  unlock_units_after_fork();
  unlock_waits_after_fork();
  unlock_phases_after_fork();
}

}  // namespace jitscope::detail
