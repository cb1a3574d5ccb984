#include "thread_registry.hpp"

#include "session_params.hpp"
#include "trace_writer.hpp"

#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <new>

namespace jitscope::detail {

constinit thread_local ThreadState* t_state [[gnu::tls_model("initial-exec")]] = nullptr;

namespace {

thread_local bool t_exiting = false;

// The name set with set_thread_name; survives sessions.
thread_local std::string t_name;
thread_local bool t_name_set = false;

// Retires the thread's state when the thread exits; constructed on the first
// registration of each thread.
struct ThreadExitGuard {
  ~ThreadExitGuard() {
    t_exiting = true;
    if (t_state != nullptr) {
      // release: every record this thread pushed is visible to the flusher
      // once it sees retired == true.
      t_state->retired.store(true, std::memory_order_release);
      t_state = nullptr;
    }
  }
};

std::size_t max_payload_for(std::size_t capacity) noexcept {
  // Half the ring, so a long string still leaves room for the spans around it.
  return (capacity / 2) * kRecordBytes;
}

}  // namespace

ThreadState::ThreadState(std::uint32_t session_word, std::size_t capacity, OverflowPolicy p,
                         int os_tid, std::string name)
    : ring(capacity),
      session(session_word),
      policy(p),
      max_payload_bytes(max_payload_for(capacity)),
      tid(os_tid),
      initial_name(std::move(name)),
      decode(std::make_unique<ThreadDecodeState>()) {}

ThreadState::~ThreadState() = default;

ThreadRegistry& ThreadRegistry::instance() noexcept {
  // Leaked on purpose: threads may still exit (and touch it) during static
  // destruction at process exit.
  static ThreadRegistry* registry = new ThreadRegistry();
  return *registry;
}

void ThreadRegistry::add(ThreadState* state) {
  std::lock_guard<std::mutex> lock(mutex_);
  states_.push_back(state);
}

void ThreadRegistry::snapshot(std::vector<ThreadState*>& out) {
  std::lock_guard<std::mutex> lock(mutex_);
  out.assign(states_.begin(), states_.end());
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

void ThreadRegistry::retire_all_in_child() noexcept {
  for (ThreadState* s : states_) s->retired.store(true, std::memory_order_relaxed);
  t_state = nullptr;
}

std::string current_thread_name() {
  if (t_name_set) return t_name;
  char buf[64] = {0};
  if (pthread_getname_np(pthread_self(), buf, sizeof buf) != 0 || buf[0] == '\0') {
    return "thread-" + std::to_string(static_cast<long>(::syscall(SYS_gettid)));
  }
  return buf;
}

void remember_thread_name(std::string_view name) {
  t_name.assign(name.data(), name.size());
  t_name_set = true;
}

ThreadState* register_thread(std::uint32_t session) noexcept {
  ThreadState* t = t_state;
  if (t_exiting) return nullptr;
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
    t_state = fresh;
    return fresh;
  } catch (...) {
    return nullptr;  // out of memory: this event is lost, the host goes on
  }
}


}  // namespace jitscope::detail
