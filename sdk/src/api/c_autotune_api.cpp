// The C API of autotuning sessions (jitscope/autotune.h): heap objects
// wrapping the C++ ones, behind checked tokens (c_handles.hpp), as the
// compile units' C API.
#include <jitscope/autotune.h>
#include <jitscope/autotune.hpp>

#include "api/c_handles.hpp"
#include "base/boundary.hpp"
#include "base/immortal.hpp"
#include "base/log.hpp"

#include <memory>
#include <mutex>
#include <vector>

struct jitscope_autotune {
  explicit jitscope_autotune(std::string_view kernel) noexcept : tune(kernel) {}
  std::mutex mutex;  // C may call from any thread
  jitscope::Autotune tune;
  std::vector<jitscope::AutotuneTrial> trials;  // by index
};
struct jitscope_autotune_step {
  explicit jitscope_autotune_step(jitscope::AutotuneStep&& s) noexcept : step(std::move(s)) {}
  jitscope::AutotuneStep step;
};

namespace {

using jitscope::detail::HandleTable;
using jitscope::detail::immortal;

// Immortal: handles may be ended from atexit handlers and static destructors.
HandleTable<jitscope_autotune>& tunes() noexcept {
  return immortal<HandleTable<jitscope_autotune>>();
}
HandleTable<jitscope_autotune_step>& steps() noexcept {
  return immortal<HandleTable<jitscope_autotune_step>>();
}

// The parameter as an Arg, its name kept for the process; false when it has
// none or the names' table is full.
bool to_arg(const jitscope_tune_param& p, jitscope::Arg* out) noexcept {
  if (p.name == nullptr || p.name[0] == '\0') return false;
  const char* key = jitscope::detail::stable_name(p.name);
  if (key == nullptr) {
    jitscope::detail::log_unique(
        "jitscope_autotune_trial: a parameter was left out: the table of kept names is full");
    return false;
  }
  switch (p.type) {
    case JITSCOPE_TUNE_DOUBLE: *out = jitscope::Arg("k", p.d); break;
    case JITSCOPE_TUNE_BOOL: *out = jitscope::Arg("k", p.i != 0); break;
    case JITSCOPE_TUNE_STRING:
      *out = jitscope::Arg("k", std::string_view(p.s != nullptr ? p.s : ""));
      break;
    default: *out = jitscope::Arg("k", static_cast<std::int64_t>(p.i)); break;
  }
  out->key = key;
  return true;
}

// Runs `fn` on trial `trial` of `tune` (refused: a NULL or stale handle, an
// unknown trial).
template <class Fn>
void on_trial(jitscope_autotune* tune, long trial, const char* call, Fn&& fn) noexcept {
  const std::shared_ptr<jitscope_autotune> t = tunes().find(tune, call);
  if (!t) return;
  std::lock_guard<std::mutex> lock(t->mutex);
  if (trial < 0 || static_cast<unsigned long>(trial) >= t->trials.size()) return;
  fn(t->trials[static_cast<std::size_t>(trial)]);
}

jitscope_autotune_step* begin_step(jitscope_autotune* tune, long trial, bool benchmark,
                                   const char* call) noexcept {
  jitscope_autotune_step* handle = nullptr;
  on_trial(tune, trial, call, [&](const jitscope::AutotuneTrial& t) {
    handle = steps().add("beginning an autotuning step", [&] {
      return std::make_shared<jitscope_autotune_step>(benchmark ? t.benchmark() : t.compile());
    });
  });
  return handle;
}

}  // namespace

namespace jitscope::detail {
// Within c_handles_lock_for_fork (api/c_compile_api.cpp).
void c_autotune_handles_lock_for_fork() noexcept {
  tunes().lock_for_fork();
  steps().lock_for_fork();
}
void c_autotune_handles_unlock_after_fork() noexcept {
  steps().unlock_after_fork();
  tunes().unlock_after_fork();
}
}  // namespace jitscope::detail

jitscope_autotune* jitscope_autotune_begin(const char* kernel) {
  return tunes().add("beginning an autotuning session", [&] {
    return std::make_shared<jitscope_autotune>(kernel != nullptr ? kernel : "");
  });
}

void jitscope_autotune_end(jitscope_autotune* tune) {
  if (tunes().find(tune, "jitscope_autotune_end")) tunes().remove(tune);
}

long jitscope_autotune_trial(jitscope_autotune* tune, const jitscope_tune_param* config,
                             size_t count) {
  const std::shared_ptr<jitscope_autotune> t = tunes().find(tune, "jitscope_autotune_trial");
  if (!t) return -1;
  long index = -1;
  jitscope::detail::guarded("recording an autotuning trial", [&] {
    std::vector<jitscope::Arg> args;
    if (config != nullptr) {
      args.reserve(count);
      for (size_t i = 0; i < count; ++i) {
        jitscope::Arg a("k", false);
        if (to_arg(config[i], &a)) args.push_back(a);
      }
    }
    std::lock_guard<std::mutex> lock(t->mutex);
    // Room before the trial, so that nothing throws after it is made.
    if (t->trials.size() == t->trials.capacity()) {
      t->trials.reserve(t->trials.capacity() < 16 ? 16 : 2 * t->trials.capacity());
    }
    t->trials.push_back(t->tune.trial(std::span<const jitscope::Arg>(args)));
    index = static_cast<long>(t->trials.back().index());
  });
  return index;
}

jitscope_autotune_step* jitscope_autotune_compile(jitscope_autotune* tune, long trial) {
  return begin_step(tune, trial, false, "jitscope_autotune_compile");
}

jitscope_autotune_step* jitscope_autotune_benchmark(jitscope_autotune* tune, long trial) {
  return begin_step(tune, trial, true, "jitscope_autotune_benchmark");
}

void jitscope_autotune_step_end(jitscope_autotune_step* step) {
  // Removing the last reference destroys the step, which ends it.
  if (steps().find(step, "jitscope_autotune_step_end")) steps().remove(step);
}

void jitscope_autotune_compiled_by(jitscope_autotune* tune, long trial, unsigned frame,
                                   unsigned attempt) {
  on_trial(tune, trial, "jitscope_autotune_compiled_by", [&](const jitscope::AutotuneTrial& t) {
    t.compiled_by({frame, attempt});
  });
}

void jitscope_autotune_result(jitscope_autotune* tune, long trial, double value) {
  on_trial(tune, trial, "jitscope_autotune_result",
           [&](const jitscope::AutotuneTrial& t) { t.result(value); });
}

void jitscope_autotune_failed(jitscope_autotune* tune, long trial, const char* reason) {
  on_trial(tune, trial, "jitscope_autotune_failed",
           [&](const jitscope::AutotuneTrial& t) { t.failed(reason != nullptr ? reason : ""); });
}

void jitscope_autotune_winner(jitscope_autotune* tune, long trial) {
  const std::shared_ptr<jitscope_autotune> t = tunes().find(tune, "jitscope_autotune_winner");
  if (!t) return;
  std::lock_guard<std::mutex> lock(t->mutex);
  if (trial < 0 || static_cast<unsigned long>(trial) >= t->trials.size()) return;
  t->tune.winner(t->trials[static_cast<std::size_t>(trial)]);
}
