#include "ring/thread_registry.hpp"
#include "base/immortal.hpp"

#include "ring/session_params.hpp"
#include "ring/span_mirror.hpp"

#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <new>

namespace jitscope::detail {

constinit thread_local ThreadState* t_state [[gnu::tls_model("initial-exec")]] = nullptr;

namespace {
// What t_hot points at while the thread has no state: its session 0 never
// matches a session word, so the inline path always calls the library.
constinit HotThread g_idle_hot{};
}  // namespace

constinit thread_local HotThread* t_hot [[gnu::tls_model("initial-exec")]] = &g_idle_hot;

void set_current_thread_state(ThreadState* t) noexcept {
  t_state = t;
  t_hot = t != nullptr ? &t->hot : &g_idle_hot;
}

namespace {

thread_local bool t_exiting = false;
thread_local bool t_is_flusher = false;

// The name set with set_thread_name; survives sessions. A plain array, not a
// std::string: glibc destroys the main thread's thread_locals before atexit
// handlers and static destructors, which may still record.
constexpr std::size_t kMaxRememberedName = 255;
thread_local char t_name[kMaxRememberedName + 1];
thread_local std::size_t t_name_len = 0;
thread_local bool t_name_set = false;

// Retires the thread's state when the thread exits; constructed on the first
// registration of each thread.
struct ThreadExitGuard {
  ~ThreadExitGuard() {
    // The main thread's thread_locals die at exit() before static
    // destructors and atexit handlers, which may still record: its state
    // stays live, and the exit-time stop() drains it.
    if (::getpid() == static_cast<pid_t>(::syscall(SYS_gettid))) return;
    t_exiting = true;
    if (t_state != nullptr) {
      // release: every record this thread pushed is visible to the flusher
      // once it sees retired == true.
      t_state->retired.store(true, std::memory_order_release);
      set_current_thread_state(nullptr);
    }
  }
};

constinit std::atomic<std::uint64_t> g_rings_made{0};

std::size_t max_payload_for(std::size_t capacity) noexcept {
  // Half the ring, so a long string still leaves room for the spans around it.
  return (capacity / 2) * kRecordBytes;
}

}  // namespace

ThreadState::ThreadState(std::uint32_t session_word, std::size_t capacity, OverflowPolicy p,
                         int os_tid, std::string name)
    : ring(capacity, &hot.producer,
           // relaxed: only that each state gets a number of its own matters.
           ring_start(g_rings_made.fetch_add(1, std::memory_order_relaxed))),
      session(session_word),
      policy(p),
      max_payload_bytes(max_payload_for(capacity)),
      tid(os_tid),
      initial_name(std::move(name)) {
  update_gate();
}

ThreadState::~ThreadState() = default;

ThreadRegistry& ThreadRegistry::instance() noexcept {
  // Immortal: threads may still exit (and touch it) during static destruction.
  return immortal<ThreadRegistry>();
}

void mark_flusher_thread() noexcept { t_is_flusher = true; }
bool on_flusher_thread() noexcept { return t_is_flusher; }

std::atomic<std::uint64_t> g_events_lost{0};

void ThreadRegistry::reap_retired() noexcept {
  std::vector<ThreadState*> dead;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto keep = std::partition(states_.begin(), states_.end(), [](ThreadState* s) {
      // acquire: pairs with the retiring thread's release; nothing it
      // pushed can still be in flight.
      return !s->retired.load(std::memory_order_acquire);
    });
    dead.assign(keep, states_.end());
    states_.erase(keep, states_.end());
  }
  for (ThreadState* s : dead) delete s;
}

void ThreadRegistry::add(ThreadState* state) {
  std::lock_guard<std::mutex> lock(mutex_);
  states_.push_back(state);
}

void ThreadRegistry::snapshot(std::vector<ThreadState*>& out) {
  std::lock_guard<std::mutex> lock(mutex_);
  out.assign(states_.begin(), states_.end());
}

bool ThreadRegistry::try_snapshot(std::vector<ThreadState*>& out) {
  std::unique_lock<std::mutex> lock(mutex_, std::try_to_lock);
  if (!lock.owns_lock()) return false;
  out.assign(states_.begin(), states_.end());
  return true;
}

void ThreadRegistry::remove(ThreadState* state) noexcept {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = std::find(states_.begin(), states_.end(), state);
    if (it == states_.end()) return;
    *it = states_.back();
    states_.pop_back();
  }
  delete state;
}

void ThreadRegistry::forget_all_in_child() noexcept {
  // The parent's flusher may have been halfway through changing any of
  // them: abandon, never free. The memory is copy-on-write; it costs nothing.
  states_.clear();
  set_current_thread_state(nullptr);
}

std::string current_thread_name() {
  if (t_name_set) return std::string(t_name, t_name_len);
  char buf[64] = {0};
  if (pthread_getname_np(pthread_self(), buf, sizeof buf) != 0 || buf[0] == '\0') {
    return "thread-" + std::to_string(static_cast<long>(::syscall(SYS_gettid)));
  }
  return buf;
}

void remember_thread_name(std::string_view name) noexcept {
  t_name_len = std::min(name.size(), kMaxRememberedName);
  std::memcpy(t_name, name.data(), t_name_len);
  t_name_set = true;
}

ThreadState* register_thread(std::uint32_t session) noexcept {
  ThreadState* t = t_state;
  if (t_exiting || t_is_flusher) {
    // Only the flusher itself (if the host instruments what it calls) and
    // teardown-time events get here; count what teardown loses.
    if (t_exiting) g_events_lost.fetch_add(1, std::memory_order_relaxed);
    return nullptr;
  }
  // acquire: pairs with start()'s release store, so the params are current.
  if (g_session.load(std::memory_order_acquire) != session) return nullptr;
  const SessionParams& params = session_params();
  try {
    static thread_local ThreadExitGuard guard;
    (void)guard;
    auto owned = std::make_unique<ThreadState>(
        session, params.ring_capacity.load(std::memory_order_relaxed),
        params.overflow.load(std::memory_order_relaxed), static_cast<int>(::syscall(SYS_gettid)),
        current_thread_name());
    ThreadRegistry::instance().add(owned.get());
    ThreadState* fresh = owned.release();
    if (t != nullptr) {
      // The old state belongs to an earlier session: hand it to the flusher.
      t->retired.store(true, std::memory_order_release);  // see ThreadExitGuard
    }
    set_current_thread_state(fresh);
    // A name given before this session goes to NVTX tools too.
    if ((session & kSessionNvtxBit) != 0 && t_name_set) {
      if (const SpanMirror* m = span_mirror()) m->thread_name(std::string_view(t_name, t_name_len));
    }
    return fresh;
  } catch (...) {
    // Out of memory: this event is lost and counted; the host goes on.
    g_events_lost.fetch_add(1, std::memory_order_relaxed);  // relaxed: a tally
    return nullptr;
  }
}

}  // namespace jitscope::detail
