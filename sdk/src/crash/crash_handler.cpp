#include "crash/crash_handler.hpp"

#include <cxxabi.h>
#include <linux/futex.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <typeinfo>

namespace jitscope::detail {
namespace {

constexpr int kFatalSignals[] = {SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGILL};
constexpr std::size_t kSignalCount = sizeof kFatalSignals / sizeof kFatalSignals[0];

// What a crash is at: claimed (a crashing thread fills g_info), requested
// (the flusher may read it), done (the flusher wrote what it could, or gave up).
enum Phase : int { kIdle = 0, kClaimed = 1, kRequested = 2, kDone = 3 };

// Written by install_crash_handlers before our handler for that signal is in
// place, never after: a handler reads them without a lock.
struct sigaction g_previous[kSignalCount];
// Set by a handler that handed its signal back to g_previous (chaining);
// install_crash_handlers then puts ours back for the next session.
std::atomic<bool> g_unhooked[kSignalCount];
std::atomic<std::terminate_handler> g_previous_terminate{nullptr};
std::atomic<bool> g_installed{false};

std::atomic<std::uint32_t> g_wake_count{0};
std::atomic<bool> g_armed{false};
std::atomic<pid_t> g_armed_pid{0};  // a child made without fork's handlers is not armed
std::atomic<int> g_flusher_tid{0};
std::atomic<int> g_phase{kIdle};
CrashInfo g_info;  // written by the claiming thread only, before kRequested

// The two futex(2) calls the wake word and the flusher's end use. Both
// async-signal-safe; the wake keeps errno (it runs in signal handlers).
void futex_wait(std::atomic<std::uint32_t>& word, std::uint32_t expected,
                const timespec* relative) noexcept {
  (void)::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAIT_PRIVATE, expected,
                  relative, nullptr, 0);
}

void futex_wake_all(std::atomic<std::uint32_t>& word) noexcept {
  const int saved = errno;
  (void)::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAKE_PRIVATE, INT_MAX,
                  nullptr, nullptr, 0);
  errno = saved;
}

// How the flusher thread ended: stop() waits on this word (a futex) rather
// than only joining, because a flusher that faulted while writing a crash
// the host then survived never returns.
enum FlusherEnd : std::uint32_t { kFlusherRunning = 0, kFlusherReturned = 1, kFlusherParked = 2 };
std::atomic<std::uint32_t> g_flusher_end{kFlusherRunning};

void set_flusher_end(FlusherEnd end) noexcept {
  g_flusher_end.store(end, std::memory_order_release);
  futex_wake_all(g_flusher_end);
}

std::uint64_t monotonic_now() noexcept {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000u +
         static_cast<std::uint64_t>(ts.tv_nsec);
}

int current_tid() noexcept { return static_cast<int>(::syscall(SYS_gettid)); }

// Armed for this process: a session's flusher will answer a crash.
bool armed_here() noexcept {
  // acquire: pairs with crash_arm's release.
  return g_armed.load(std::memory_order_acquire) &&
         g_armed_pid.load(std::memory_order_relaxed) == ::getpid();
}

// The handoff. Only async-signal-safe calls: see crash_handler.hpp.
void flush_for_crash(int signo, const siginfo_t* info, const char* exception) noexcept {
  if (!armed_here()) return;
  const int tid = current_tid();
  if (tid == g_flusher_tid.load(std::memory_order_relaxed)) {
    // The flusher itself crashed. If it was writing another thread's crash,
    // that thread goes on now and dies of its own signal; the flusher stays
    // here so that its fault does not end the process first. Should the host
    // survive that signal, stop() finds the flusher parked and lets it be.
    if (g_phase.load(std::memory_order_acquire) == kRequested) {
      g_armed.store(false, std::memory_order_release);
      g_phase.store(kDone, std::memory_order_release);
      set_flusher_end(kFlusherParked);
      for (;;) ::pause();
    }
    return;
  }
  int phase = kIdle;
  if (g_phase.compare_exchange_strong(phase, kClaimed, std::memory_order_acq_rel)) {
    g_info.signo = signo;
    g_info.code = info != nullptr ? info->si_code : 0;
    g_info.address =
        info != nullptr && info->si_code > 0 ? reinterpret_cast<std::uintptr_t>(info->si_addr) : 0;
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
  } else if (phase == kRequested && g_info.tid == tid) {
    return;  // this thread already waited once (std::terminate, then its abort)
  }
  // Ours or another thread's crash: wait for the flusher, bounded, and no
  // longer than it runs.
  const std::uint64_t deadline =
      monotonic_now() + static_cast<std::uint64_t>(kCrashFlushTimeout.count()) * 1'000'000u;
  while (g_phase.load(std::memory_order_acquire) != kDone &&
         g_armed.load(std::memory_order_acquire) && monotonic_now() < deadline) {
    timespec pause{0, 1'000'000};  // 1 ms
    ::nanosleep(&pause, nullptr);
  }
}

// Whether returning from the handler re-runs what raised the signal: a
// fault's instruction does; a sent signal (kill, raise, abort: si_code <= 0)
// and an asynchronous machine-check report do not.
bool signal_repeats(int signo, const siginfo_t* info) noexcept {
  if (info == nullptr || info->si_code <= 0 || signo == SIGABRT) return false;
#ifdef BUS_MCEERR_AO
  if (signo == SIGBUS && info->si_code == BUS_MCEERR_AO) return false;
#endif
#ifdef SEGV_MTEAERR
  if (signo == SIGSEGV && info->si_code == SEGV_MTEAERR) return false;  // arm64 MTE, reported late
#endif
  return true;
}

bool is_ignored(const struct sigaction& action) noexcept {
  return (action.sa_flags & SA_SIGINFO) == 0 && action.sa_handler == SIG_IGN;
}

// A handler function, not SIG_DFL or SIG_IGN.
bool is_function(const struct sigaction& action) noexcept {
  if ((action.sa_flags & SA_SIGINFO) != 0) return action.sa_sigaction != nullptr;
  return action.sa_handler != SIG_DFL && action.sa_handler != SIG_IGN;
}

void on_fatal_signal(int signo, siginfo_t* info, void* context);

bool ours_is_installed(int signo) noexcept {
  struct sigaction current {};
  return ::sigaction(signo, nullptr, &current) == 0 && (current.sa_flags & SA_SIGINFO) != 0 &&
         current.sa_sigaction == on_fatal_signal;
}

void on_fatal_signal(int signo, siginfo_t* info, void* context) {
  const int saved_errno = errno;
  std::size_t i = 0;
  while (i < kSignalCount && kFatalSignals[i] != signo) ++i;
  if (i == kSignalCount) return;
  const struct sigaction& previous = g_previous[i];
  const bool repeats = signal_repeats(signo, info);
  // A sent signal the host ignored before jitscope is still ignored: no
  // crash. (Not SIGABRT: abort() raises it again under SIG_DFL.)
  if (!repeats && signo != SIGABRT && is_ignored(previous)) {
    errno = saved_errno;
    return;
  }
  flush_for_crash(signo, info, nullptr);
  if (!ours_is_installed(signo) && is_function(previous)) {
    // A handler the host installed after ours called us, as a chaining
    // handler does: we answer as the one from before ours would, by calling
    // it, and leave the host's in place (it may recover and fault again).
    errno = saved_errno;
    if ((previous.sa_flags & SA_SIGINFO) != 0) {
      previous.sa_sigaction(signo, info, context);
    } else {
      previous.sa_handler(signo);
    }
    return;
  }
  // Chain: the disposition from before us comes back, and the signal happens
  // again under it. A fault re-runs its instruction when we return; a sent
  // signal is sent again, and stays pending until we return, as it is
  // blocked in its own handler. (Called by a host handler with SIG_DFL
  // before us, this too: the default action is the process's end.)
  g_unhooked[i].store(true, std::memory_order_relaxed);
  ::sigaction(signo, &previous, nullptr);
  if (!repeats) ::raise(signo);
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
    // Not a std::exception: its type name, put above, is all there is to say.
  }
  out[n] = '\0';
}

[[noreturn]] void on_terminate() {
  if (armed_here()) {
    char exception[sizeof CrashInfo::exception];
    describe_current_exception(exception, sizeof exception);
    flush_for_crash(0, nullptr, exception);
  }
  const std::terminate_handler previous = g_previous_terminate.load(std::memory_order_acquire);
  if (previous != nullptr) previous();
  std::abort();
}

// A stack for the handlers on the thread that started the first session, so
// that a stack overflow there (deep recursion in a compiler) still flushes.
// Other threads use one only if the host gave them one. A guard page below
// it: a handler that overruns it faults instead of writing over memory.
constexpr std::size_t kAltStackBytes = 64 * 1024;

void install_alt_stack() noexcept {
  stack_t current{};
  if (::sigaltstack(nullptr, &current) != 0 || (current.ss_flags & SS_DISABLE) == 0) return;
  const long page_size = ::sysconf(_SC_PAGESIZE);
  const std::size_t page = page_size > 0 ? static_cast<std::size_t>(page_size) : 4096;
  std::size_t size = kAltStackBytes;
#ifdef _SC_SIGSTKSZ
  const long minimum = ::sysconf(_SC_SIGSTKSZ);  // grows with the CPU's vector state
  if (minimum > 0 && static_cast<std::size_t>(minimum) * 4 > size) {
    size = static_cast<std::size_t>(minimum) * 4;
  }
#endif
  size = (size + page - 1) / page * page;
  void* mapping = ::mmap(nullptr, size + page, PROT_READ | PROT_WRITE,
                         MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (mapping == MAP_FAILED) return;  // no alternate stack: a stack overflow is not flushed
  (void)::mprotect(mapping, page, PROT_NONE);  // stacks grow down: the guard is the low page
  stack_t ours{};
  ours.ss_sp = static_cast<char*>(mapping) + page;
  ours.ss_size = size;
  if (::sigaltstack(&ours, nullptr) != 0) ::munmap(mapping, size + page);
}

// Ours for one signal: SA_RESTART as the host had it, so that a host that
// survives a sent signal sees its system calls restarted as before.
struct sigaction our_action(const struct sigaction& previous) noexcept {
  struct sigaction action {};
  action.sa_sigaction = on_fatal_signal;
  action.sa_flags = SA_SIGINFO | SA_ONSTACK | (previous.sa_flags & SA_RESTART);
  // No second fatal signal on this thread while it waits for the flush.
  sigemptyset(&action.sa_mask);
  for (int signo : kFatalSignals) sigaddset(&action.sa_mask, signo);
  return action;
}

bool same_disposition(const struct sigaction& a, const struct sigaction& b) noexcept {
  if ((a.sa_flags & SA_SIGINFO) != (b.sa_flags & SA_SIGINFO)) return false;
  return (a.sa_flags & SA_SIGINFO) != 0 ? a.sa_sigaction == b.sa_sigaction
                                        : a.sa_handler == b.sa_handler;
}

}  // namespace

void install_crash_handlers() noexcept {
  if (g_installed.exchange(true, std::memory_order_acq_rel)) {
    // Callers hold the session control lock: no two re-install at once.
    for (std::size_t i = 0; i < kSignalCount; ++i) {
      if (!g_unhooked[i].load(std::memory_order_relaxed)) continue;
      struct sigaction current {};
      if (::sigaction(kFatalSignals[i], nullptr, &current) != 0) continue;
      // The host put its own in since: that is its choice, and it may chain to us.
      if (!same_disposition(current, g_previous[i])) continue;
      g_unhooked[i].store(false, std::memory_order_relaxed);
      const struct sigaction ours = our_action(g_previous[i]);
      ::sigaction(kFatalSignals[i], &ours, nullptr);
    }
    return;
  }
  for (std::size_t i = 0; i < kSignalCount; ++i) {
    // The previous disposition is saved before ours is in place, so that a
    // crash on another thread in between never finds it unset.
    if (::sigaction(kFatalSignals[i], nullptr, &g_previous[i]) != 0) continue;
    const struct sigaction ours = our_action(g_previous[i]);
    ::sigaction(kFatalSignals[i], &ours, nullptr);
  }
  g_previous_terminate.store(std::get_terminate(), std::memory_order_release);
  const std::terminate_handler replaced = std::set_terminate(on_terminate);
  if (replaced != on_terminate) g_previous_terminate.store(replaced, std::memory_order_release);
  install_alt_stack();
}

std::uint32_t flusher_wake_count() noexcept {
  // acquire: what the waker did before waking is seen after this read.
  return g_wake_count.load(std::memory_order_acquire);
}

void flusher_sleep(std::uint32_t seen, std::chrono::milliseconds timeout) noexcept {
  const auto ms = timeout.count() > 0 ? timeout.count() : 0;
  timespec relative{static_cast<time_t>(ms / 1000), static_cast<long>(ms % 1000) * 1'000'000};
  // Returns at once if a wake came after `seen` was read (EAGAIN); a spurious
  // or EINTR return only means an early flush cycle.
  futex_wait(g_wake_count, seen, &relative);
}

void wake_flusher() noexcept {
  // release: pairs with flusher_wake_count's acquire.
  g_wake_count.fetch_add(1, std::memory_order_release);
  futex_wake_all(g_wake_count);
}

void flusher_starting() noexcept {
  g_flusher_end.store(kFlusherRunning, std::memory_order_relaxed);
}

void flusher_returned() noexcept { set_flusher_end(kFlusherReturned); }

bool wait_for_flusher_end() noexcept {
  for (;;) {
    const std::uint32_t end = g_flusher_end.load(std::memory_order_acquire);
    if (end != kFlusherRunning) return end == kFlusherParked;
    futex_wait(g_flusher_end, kFlusherRunning, nullptr);
  }
}

void crash_set_flusher_tid(int tid) noexcept {
  g_flusher_tid.store(tid, std::memory_order_relaxed);
}

void crash_arm() noexcept {
  g_phase.store(kIdle, std::memory_order_relaxed);
  g_flusher_tid.store(0, std::memory_order_relaxed);
  g_armed_pid.store(::getpid(), std::memory_order_relaxed);
  // release: a crashing thread that sees armed sees the phase reset.
  g_armed.store(true, std::memory_order_release);
}

void crash_disarm() noexcept { g_armed.store(false, std::memory_order_release); }

void crash_forget_in_child() noexcept {
  g_armed.store(false, std::memory_order_relaxed);
  g_phase.store(kIdle, std::memory_order_relaxed);
}

const CrashInfo* crash_requested() noexcept {
  // acquire: pairs with the crashing thread's release after filling g_info.
  return g_phase.load(std::memory_order_acquire) == kRequested ? &g_info : nullptr;
}

void crash_flush_done() noexcept {
  int phase = kRequested;
  g_phase.compare_exchange_strong(phase, kDone, std::memory_order_acq_rel);
}

bool crash_has_address(const CrashInfo& crash) noexcept {
  return crash.signo != 0 && crash.signo != SIGABRT && crash.code > 0;
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
