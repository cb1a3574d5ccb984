// Thread registration and retirement. A thread registers on its first event
// of a session (the only time the hot path allocates) and is retired when it
// exits or when a new session replaces its state; the flusher drains a
// retired thread's ring before freeing it, so an exiting thread loses nothing.
#pragma once

#include "ring/ring.hpp"

#include <jitscope/jitscope.hpp>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace jitscope::detail {

// What the consumer of the rings (the flusher's trace writer) keeps per
// thread. The ring layer only owns it, so that it goes with the thread's
// state; the consumer makes it on first use and is the only one to touch it.
struct ConsumerState {
  virtual ~ConsumerState() = default;
};

// Where the ring of the n-th thread state the process makes starts, in
// bytes of position: (n mod 2^20) * 2^40, so 2^35 records (1 TiB) apart and
// all below 2^60. A span's serial is a position, and the inline end trusts
// a serial's match alone: a token kept from an earlier session or state
// must not match a span open now, which holds unless the token's state is
// 2^20 states back, or its ring wrote past 2^35 records into the next
// state's range, and a span begins at its exact position. Below 2^61,
// positions never reach SpanToken's flag bits (61-63) nor wrap.
inline constexpr unsigned kRingStartStates = 20;
constexpr std::uint64_t ring_start(std::uint64_t n) noexcept {
  return (n & ((std::uint64_t{1} << kRingStartStates) - 1)) << 40;
}

struct ThreadState {
  ThreadState(std::uint32_t session, std::size_t capacity, OverflowPolicy policy, int tid,
              std::string name);
  ~ThreadState();

  // Depth, serials and the ring's producer cursor, shared with the inline
  // hot path (t_hot points here while this is the thread's state). Before
  // `ring`, which is made on it.
  HotThread hot;
  // Producer-only fields.
  Ring ring;
  const std::uint32_t session;  // session word it was registered under
  const OverflowPolicy policy;
  const std::size_t max_payload_bytes;  // longest dynamic string before truncation
  // Spans open at depth < 256 whose Begin was dropped, and their depths as
  // bits: the common end path checks only the count.
  std::uint32_t unrecorded = 0;
  std::uint64_t unrecorded_bits[4] = {0, 0, 0, 0};

  // Spans open past depth 256 (never tracked); read only while
  // hot.depth_x8 is parked at kParkedDepth.
  std::uint64_t untracked = 0;
  // The innermost open untracked spans' ids and depths, innermost last (ids
  // ascend: each began after those below it), so that a stale end of one
  // (an outer end closed it) ends nothing. A fixed list, as nothing on a
  // span's path allocates: a span past its end (64 untracked spans open) has
  // id 0, and its end ends the innermost untracked span.
  struct UntrackedSpan {
    std::uint64_t id;
    std::uint64_t depth;
  };
  static constexpr std::size_t kUntrackedListed = 64;
  UntrackedSpan untracked_open[kUntrackedListed] = {};
  std::size_t untracked_listed = 0;
  std::uint64_t untracked_begins = 0;

  // Open spans, recorded or not.
  std::uint64_t depth() const noexcept {
    const std::uint64_t d = hot.depth_x8 / 8;
    return d == kParkedDepth ? 256 + untracked : d;
  }
  void set_depth(std::uint64_t d) noexcept {
    if (d > 256) [[unlikely]] {
      untracked = d - 256;
      d = kParkedDepth;
    }
    hot.depth_x8 = d * 8;
  }
  // Recorded open spans: the End records the ring must keep room for. Every
  // span below depth 256 is recorded or marked unrecorded; none above is.
  std::uint32_t owed() const noexcept { return owed_at(depth()); }
  // owed() when depth() is `d`, for a caller that has it.
  std::uint32_t owed_at(std::uint64_t d) const noexcept {
    return static_cast<std::uint32_t>(d < 256 ? d : 256) - unrecorded;
  }
  // Opens or closes the inline path (HotThread::session, or
  // other_clock_session for a session on the other clock) after a change to
  // what it assumes: no NVTX emission and no unrecorded span open.
  void update_gate() noexcept {
    const std::uint32_t open = (session & kSessionNvtxBit) == 0 && unrecorded == 0 ? session : 0;
    hot.open_gate(runs_on_inline_clock(session) ? open : 0);
    hot.other_clock_session = runs_on_inline_clock(session) ? 0 : open;
  }

  // Written by the producer only (relaxed load + store, no RMW), read by the flusher.
  std::atomic<std::uint64_t> dropped{0};            // events lost (ring full / too deep)
  std::atomic<std::uint64_t> args_dropped{0};       // args and thread names lost
  std::atomic<std::uint64_t> unbalanced_ends{0};    // end with nothing open
  std::atomic<std::uint64_t> out_of_order_ends{0};  // ends of a span with inner ones open
  std::atomic<std::uint64_t> truncated{0};          // dynamic strings cut to fit
  std::atomic<bool> retired{false};  // no more pushes; release pairs with the flusher's acquire

  const int tid;
  const std::string initial_name;
  std::unique_ptr<ConsumerState> consumer;  // consumer-only
};

// Bumps a producer-owned counter without a locked instruction.
inline void bump(std::atomic<std::uint64_t>& counter, std::uint64_t by = 1) noexcept {
  // relaxed: single writer; the flusher's reads need no ordering beyond eventual
  // visibility, and the retire release/acquire orders the final value.
  counter.store(counter.load(std::memory_order_relaxed) + by, std::memory_order_relaxed);
}

class ThreadRegistry {
 public:
  static ThreadRegistry& instance() noexcept;

  // Adds a state; cold path (takes the lock).
  void add(ThreadState* state);
  // A copy of the live list, for the flusher to walk without the lock.
  void snapshot(std::vector<ThreadState*>& out);
  // The same without waiting: false if the lock is held (a crash cycle).
  bool try_snapshot(std::vector<ThreadState*>& out);
  // Unlinks and deletes `state`. Only the consumer (flusher, or start/stop
  // with no flusher running) calls this, after draining it.
  void remove(ThreadState* state) noexcept;

  // fork() support: hold the lock across fork so the child's copy is sane.
  void lock_for_fork() noexcept { mutex_.lock(); }
  void unlock_after_fork() noexcept { mutex_.unlock(); }
  // Deletes every retired state. Only with no flusher running (start, stop).
  void reap_retired() noexcept;
  // In a forked child: every inherited state belongs to a thread that does
  // not exist here; drop them all.
  void forget_all_in_child() noexcept;

 private:
  std::mutex mutex_;
  std::vector<ThreadState*> states_;
};

// Events lost before reaching any ring (out of memory at registration, or
// recorded by a thread after its thread_locals were destroyed); counted
// into the session's dropped total.
extern std::atomic<std::uint64_t> g_events_lost;

// The flusher never records: whatever it calls that is instrumented is skipped.
void mark_flusher_thread() noexcept;
bool on_flusher_thread() noexcept;

// Makes `t` (or none) the calling thread's state, for the library and the
// inline hot path (t_hot) alike.
void set_current_thread_state(ThreadState* t) noexcept;

// The calling thread's state. Initial-exec: the library is linked at
// start-up, and this keeps the access one fs-relative load, also in the
// shared library.
// constinit: no dynamic initializer, so no TLS wrapper call on each access.
extern constinit thread_local ThreadState* t_state [[gnu::tls_model("initial-exec")]];

// Registers the calling thread for `session`; nullptr while it is exiting,
// if the session is gone, or if allocation fails.
ThreadState* register_thread(std::uint32_t session) noexcept;

// The calling thread's state for `session`, registering it if needed.
inline ThreadState* current_thread_state(std::uint32_t session) noexcept {
  ThreadState* t = t_state;
  if (t != nullptr && t->session == session) [[likely]]
    return t;
  return register_thread(session);
}

// The calling thread's state if it has one (any session); no registration.
inline ThreadState* current_thread_state_if_registered() noexcept { return t_state; }

// The calling thread's trace name (set_thread_name), or its OS name.
std::string current_thread_name();
void remember_thread_name(std::string_view name) noexcept;

}  // namespace jitscope::detail
