#include "crash/unload_drain.hpp"
#include "crash/crash_handler.hpp"

#include <atomic>
#include <thread>

namespace jitscope::detail {
namespace {

std::atomic<std::uint64_t> g_requested{0};
std::atomic<std::uint64_t> g_answered{0};
std::atomic<bool> g_running{false};

}  // namespace

bool drain_before_unload(std::chrono::milliseconds limit) noexcept {
  // seq_cst: the request is ordered after every ring push this thread made
  // and after those of threads that synchronized with it; the flusher's
  // acquire load of the request then sees them in the rings.
  const std::uint64_t request = g_requested.fetch_add(1) + 1;
  const auto deadline = std::chrono::steady_clock::now() + limit;
  auto pause = std::chrono::microseconds(20);
  for (;;) {
    if (!g_running.load() || g_answered.load() >= request) return true;
    wake_flusher();
    if (std::chrono::steady_clock::now() >= deadline) return false;
    try {
      std::this_thread::sleep_for(pause);
    } catch (...) {
      // sleep_for does not throw on Linux; never let it reach the host.
    }
    if (pause < std::chrono::milliseconds(1)) pause *= 2;
  }
}

std::uint64_t unload_pending() noexcept {
  const std::uint64_t r = g_requested.load(std::memory_order_acquire);
  return r > g_answered.load(std::memory_order_relaxed) ? r : 0;
}

void unload_answer(std::uint64_t request) noexcept {
  std::uint64_t seen = g_answered.load(std::memory_order_relaxed);
  while (seen < request && !g_answered.compare_exchange_weak(seen, request)) {
  }
}

void unload_flusher_running(bool running) noexcept {
  g_running.store(running);
  // Ended: nothing reads the rings of this session any more.
  if (!running) unload_answer(g_requested.load());
}

}  // namespace jitscope::detail
