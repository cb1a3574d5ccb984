// Crash safety: on a fatal signal (SIGSEGV, SIGABRT, SIGBUS, SIGFPE,
// SIGILL) or std::terminate, the crashing thread hands the flush to the
// flusher and waits for it, then the signal goes on to whatever handled it
// before jitscope (the default: the process dies of it, exit status unchanged).
//
// Why the flusher writes, not the crashing thread: the crashing thread may
// hold any lock (malloc's included) and runs in a signal handler, where only
// async-signal-safe calls are allowed. The handler itself only does atomics,
// futex(2), getpid, gettid, clock_gettime, nanosleep, sigaction and raise
// (and, called by a host handler that chains to it, the host's earlier
// handler, directly). The flusher is a healthy thread; in its crash cycle it
// try-locks every lock a host thread can hold (the thread registry, the
// metadata list, the metrics queue) and skips what it cannot take, so a
// crash inside jitscope's own cold paths costs only that part. It never
// waits for CUPTI. The handler waits at most kCrashFlushTimeout, so a
// flusher that is stuck (a full disk on NFS, a malloc lock shared with the
// crashed thread) delays the crash, never hangs it.
#pragma once

#include <chrono>
#include <cstdint>

namespace jitscope::detail {

inline constexpr std::chrono::milliseconds kCrashFlushTimeout{5000};

// What crashed, for the trace. Filled by the crashing thread before it wakes
// the flusher; read by the flusher after it sees the request (acquire).
struct CrashInfo {
  int signo = 0;               // 0: std::terminate
  int code = 0;                // siginfo's si_code
  std::uintptr_t address = 0;  // si_addr, for faults
  int tid = 0;                 // the crashing thread
  std::uint64_t monotonic_ns = 0;
  char exception[256] = {};  // std::terminate: the active exception, if any
};

// Installs the signal handlers and the terminate handler once per process
// (idempotent; later sessions reuse them). Handlers installed before are
// remembered and run after the flush; handlers installed later that chain
// to the previous one reach ours. A signal whose handler was handed back to
// the previous one (a crash the host survived, e.g. by siglongjmp) gets ours
// again here, unless the host has installed another since.
void install_crash_handlers() noexcept;

// Whether the crash has a fault address to report: a fault's si_addr means
// something even when it is 0 (a NULL dereference); a sent signal (si_code
// <= 0), an abort and std::terminate have none.
bool crash_has_address(const CrashInfo& crash) noexcept;

// The flusher's sleep: a futex word, not a file descriptor, so that a host
// closing descriptors it did not open cannot make the flusher spin or a wake
// land in the host's file. wake_flusher() is async-signal-safe.
std::uint32_t flusher_wake_count() noexcept;
// Sleeps until wake_flusher() is called after `seen` was read, or `timeout`.
void flusher_sleep(std::uint32_t seen, std::chrono::milliseconds timeout) noexcept;
void wake_flusher() noexcept;

// The flusher's end, which stop() waits for before joining: starting()
// before the thread is made, returned() as run() ends. wait_for_flusher_end()
// is true if the flusher faulted while writing a crash and parked itself in
// the handler for good (the host survived that crash): do not join it.
void flusher_starting() noexcept;
void flusher_returned() noexcept;
bool wait_for_flusher_end() noexcept;

// A session with crash_handler on arms the handoff as its flusher starts;
// the flusher then says its thread id (a crash on it must not wait for itself).
void crash_arm() noexcept;
void crash_set_flusher_tid(int tid) noexcept;
// Once the flusher has finished: a crash then only chains.
void crash_disarm() noexcept;
// In a forked child: no flusher to hand a crash to.
void crash_forget_in_child() noexcept;

// The flusher's side: the crash to write now, or nullptr.
const CrashInfo* crash_requested() noexcept;
// The flusher has written everything it could; the crashing thread goes on.
void crash_flush_done() noexcept;

// The signal's name ("SIGSEGV"), or "std::terminate" for 0.
const char* crash_signal_name(int signo) noexcept;

}  // namespace jitscope::detail
