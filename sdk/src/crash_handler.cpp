#include "crash_handler.hpp"

#include <cxxabi.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <typeinfo>

namespace jitscope::detail {
namespace {

constexpr int kFatalSignals[] = {SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGILL};
constexpr std::size_t kSignalCount = sizeof kFatalSignals / sizeof kFatalSignals[0];

// What a crash is at: claimed (a crashing thread fills g_info), requested
// (the flusher may read it), done (the flusher wrote what it could).
enum Phase : int { kIdle = 0, kClaimed = 1, kRequested = 2, kDone = 3 };

// Written once by install_crash_handlers before any handler can run.
struct sigaction g_previous[kSignalCount];
std::terminate_handler g_previous_terminate = nullptr;
std::atomic<bool> g_installed{false};

std::atomic<int> g_wake_fd{-1};
std::atomic<bool> g_armed{false};
std::atomic<int> g_flusher_tid{0};
std::atomic<int> g_phase{kIdle};
CrashInfo g_info;  // written by the claiming thread only, before kRequested

std::uint64_t monotonic_now() noexcept {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000u +
         static_cast<std::uint64_t>(ts.tv_nsec);
}

// The handoff. Only async-signal-safe calls: see crash_handler.hpp.
void flush_for_crash(int signo, const siginfo_t* info, const char* exception) noexcept {
  const int tid = static_cast<int>(::syscall(SYS_gettid));
  // acquire: pairs with crash_arm's release.
  if (!g_armed.load(std::memory_order_acquire)) return;
  if (tid == g_flusher_tid.load(std::memory_order_relaxed)) return;
  int phase = kIdle;
  if (g_phase.compare_exchange_strong(phase, kClaimed, std::memory_order_acq_rel)) {
    g_info.signo = signo;
    g_info.code = info != nullptr ? info->si_code : 0;
    g_info.address = info != nullptr && info->si_code > 0
                         ? reinterpret_cast<std::uintptr_t>(info->si_addr)
                         : 0;
    g_info.tid = tid;
    g_info.monotonic_ns = monotonic_now();
    g_info.exception[0] = '\0';
    if (exception != nullptr) {
      std::size_t n = 0;
      while (exception[n] != '\0' && n + 1 < sizeof g_info.exception) {
        g_info.exception[n] = exception[n];
        ++n;
      }
      g_info.exception[n] = '\0';
    }
    // release: the flusher that sees kRequested sees g_info.
    g_phase.store(kRequested, std::memory_order_release);
    wake_flusher();
  } else if (phase == kDone) {
    return;  // already written (std::terminate, then its abort)
  }
  // Ours or another thread's crash: wait for the flusher, bounded.
  const std::uint64_t deadline =
      monotonic_now() + static_cast<std::uint64_t>(kCrashFlushTimeout.count()) * 1'000'000u;
  while (g_phase.load(std::memory_order_acquire) != kDone && monotonic_now() < deadline) {
    timespec pause{0, 1'000'000};  // 1 ms
    ::nanosleep(&pause, nullptr);
  }
}

void on_fatal_signal(int signo, siginfo_t* info, void* /*context*/) {
  const int saved_errno = errno;
  flush_for_crash(signo, info, nullptr);
  // Chain: the disposition from before us comes back, and the signal happens
  // again under it. A fault (si_code > 0) re-runs its instruction when we
  // return; a sent signal (kill, raise, abort) is sent again, and stays
  // pending until we return, as it is blocked in its own handler.
  for (std::size_t i = 0; i < kSignalCount; ++i) {
    if (kFatalSignals[i] == signo) ::sigaction(signo, &g_previous[i], nullptr);
  }
  if (info == nullptr || info->si_code <= 0) ::raise(signo);
  errno = saved_errno;
}

// "type: what()" of the exception std::terminate was called for, if any.
// Not in a signal handler: allocation is allowed here.
void describe_current_exception(char* out, std::size_t size) noexcept {
  out[0] = '\0';
  std::type_info* type = abi::__cxa_current_exception_type();
  if (type == nullptr) return;
  int status = 0;
  char* demangled = abi::__cxa_demangle(type->name(), nullptr, nullptr, &status);
  const char* name = status == 0 && demangled != nullptr ? demangled : type->name();
  std::size_t n = 0;
  const auto put = [&](const char* text) {
    for (; *text != '\0' && n + 1 < size; ++text) out[n++] = *text;
  };
  put(name);
  std::free(demangled);
  try {
    throw;  // the exception being handled
  } catch (const std::exception& e) {
    put(": ");
    put(e.what());
  } catch (...) {
  }
  out[n] = '\0';
}

[[noreturn]] void on_terminate() {
  char exception[sizeof CrashInfo::exception];
  describe_current_exception(exception, sizeof exception);
  flush_for_crash(0, nullptr, exception);
  if (g_previous_terminate != nullptr) g_previous_terminate();
  std::abort();
}

// A stack for the handlers on the thread that started the first session, so
// that a stack overflow there (deep recursion in a compiler) still flushes.
// Other threads use one only if the host gave them one.
alignas(16) char g_alt_stack[64 * 1024];

}  // namespace

void install_crash_handlers() noexcept {
  if (g_installed.exchange(true, std::memory_order_acq_rel)) return;
  for (std::size_t i = 0; i < kSignalCount; ++i) {
    struct sigaction action {};
    action.sa_sigaction = on_fatal_signal;
    action.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&action.sa_mask);
    ::sigaction(kFatalSignals[i], &action, &g_previous[i]);
  }
  g_previous_terminate = std::set_terminate(on_terminate);
  stack_t current{};
  if (::sigaltstack(nullptr, &current) == 0 && (current.ss_flags & SS_DISABLE) != 0) {
    stack_t ours{};
    ours.ss_sp = g_alt_stack;
    ours.ss_size = sizeof g_alt_stack;
    ::sigaltstack(&ours, nullptr);
  }
}

int flusher_wake_fd() noexcept {
  int fd = g_wake_fd.load(std::memory_order_acquire);
  if (fd >= 0) return fd;
  // Callers hold the session control lock: no two make one.
  fd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (fd >= 0) g_wake_fd.store(fd, std::memory_order_release);
  return fd;
}

void wake_flusher() noexcept {
  const int fd = g_wake_fd.load(std::memory_order_acquire);
  if (fd < 0) return;
  const std::uint64_t one = 1;
  const int saved = errno;
  // EAGAIN: the counter is full, so the flusher is awake anyway.
  while (::write(fd, &one, sizeof one) < 0 && errno == EINTR) {
  }
  errno = saved;
}

void crash_set_flusher_tid(int tid) noexcept { g_flusher_tid.store(tid, std::memory_order_relaxed); }

void crash_arm() noexcept {
  g_phase.store(kIdle, std::memory_order_relaxed);
  g_flusher_tid.store(0, std::memory_order_relaxed);
  // release: a crashing thread that sees armed sees the phase reset.
  g_armed.store(true, std::memory_order_release);
}

void crash_disarm() noexcept { g_armed.store(false, std::memory_order_release); }

void crash_forget_in_child() noexcept {
  g_armed.store(false, std::memory_order_relaxed);
  g_phase.store(kIdle, std::memory_order_relaxed);
  const int fd = g_wake_fd.exchange(-1, std::memory_order_relaxed);
  if (fd >= 0) ::close(fd);
}

const CrashInfo* crash_requested() noexcept {
  // acquire: pairs with the crashing thread's release after filling g_info.
  return g_phase.load(std::memory_order_acquire) == kRequested ? &g_info : nullptr;
}

void crash_flush_done() noexcept {
  int phase = kRequested;
  g_phase.compare_exchange_strong(phase, kDone, std::memory_order_acq_rel);
}

const char* crash_signal_name(int signo) noexcept {
  switch (signo) {
    case 0: return "std::terminate";
    case SIGSEGV: return "SIGSEGV";
    case SIGABRT: return "SIGABRT";
    case SIGBUS: return "SIGBUS";
    case SIGFPE: return "SIGFPE";
    case SIGILL: return "SIGILL";
    default: return "signal";
  }
}

}  // namespace jitscope::detail
