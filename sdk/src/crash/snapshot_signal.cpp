#include "crash/snapshot_signal.hpp"

#include "crash/crash_handler.hpp"

#include <signal.h>

#include <atomic>

namespace jitscope::detail {
namespace {

std::atomic<bool> g_signalled{false};
int g_signo = 0;  // installed: start/stop's lock
struct sigaction g_previous {};

void on_snapshot_signal(int) {
  // Both async-signal-safe: a store and a futex wake.
  g_signalled.store(true, std::memory_order_relaxed);
  wake_flusher();
}

}  // namespace

bool install_snapshot_signal(int signo, const char*& why) noexcept {
  struct sigaction current {};
  if (::sigaction(signo, nullptr, &current) != 0) {
    why = "cannot read its handler";
    return false;
  }
  const bool has_handler = (current.sa_flags & SA_SIGINFO) != 0 || current.sa_handler != SIG_DFL;
  if (has_handler) {
    why = "the process already handles or ignores it";
    return false;
  }
  // Cleared first: a signal that comes as the handler goes in is kept.
  g_signalled.store(false, std::memory_order_relaxed);
  struct sigaction action {};
  action.sa_handler = on_snapshot_signal;
  ::sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  if (::sigaction(signo, &action, &g_previous) != 0) {
    why = "sigaction refused it";
    return false;
  }
  g_signo = signo;
  return true;
}

void remove_snapshot_signal() noexcept {
  if (g_signo == 0) return;
  // Only if ours is still there: a handler the host installed since stays.
  struct sigaction current {};
  if (::sigaction(g_signo, nullptr, &current) == 0 && (current.sa_flags & SA_SIGINFO) == 0 &&
      current.sa_handler == on_snapshot_signal) {
    (void)::sigaction(g_signo, &g_previous, nullptr);
  }
  g_signo = 0;
}

bool take_snapshot_signal() noexcept {
  return g_signalled.exchange(false, std::memory_order_relaxed);
}

}  // namespace jitscope::detail
