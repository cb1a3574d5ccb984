// The C API of compile units, phases and attachments (jitscope/compile.h):
// heap objects wrapping the C++ ones, behind checked tokens (c_handles.hpp):
// NULL, stale and twice-ended handles are refused, never dereferenced.
#include <jitscope/compile.h>
#include <jitscope/compile.hpp>

#include "api/c_handles.hpp"
#include "api/c_last_error.hpp"
#include "base/boundary.hpp"
#include "base/immortal.hpp"
#include "base/log.hpp"
#include "compile/state.hpp"

#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <vector>

// The objects behind the C handles (api/c_handles.hpp: the handles are
// tokens, never these addresses). Each C call on one object holds its mutex:
// C code may call from any thread, and the C++ objects are not made for
// concurrent calls.
struct jitscope_unit {
  explicit jitscope_unit(const jitscope::CompileUnitOptions& options) noexcept : unit(options) {}
  std::mutex mutex;
  jitscope::CompileUnit unit;
};
struct jitscope_phase {
  std::mutex mutex;
  jitscope::PhaseHandle handle;
};
struct jitscope_attachment {
  std::mutex mutex;
  jitscope::ThreadAttachment attachment;
};
struct jitscope_unit_ref {
  jitscope::CompileUnitRef ref;
};
struct jitscope_load_scope {
  explicit jitscope_load_scope(const jitscope::CompileUnitRef& ref) noexcept : scope(ref) {}
  jitscope::LoadScope scope;
};
// A registered jitscope::PhaseKey (the C type is only ever a pointer to one).
struct jitscope_phase_key : jitscope::PhaseKey {
  using jitscope::PhaseKey::PhaseKey;
};

namespace {

using jitscope::detail::HandleTable;
using jitscope::detail::immortal;

std::string_view text(const char* s) noexcept { return s != nullptr ? s : std::string_view(); }

// One C key per registered phase: repeated gets return the same pointer.
struct CKeys {
  std::mutex mutex;
  std::map<const void*, std::unique_ptr<jitscope_phase_key>> by_stats;
};

// Immortal: handles may be ended from atexit handlers and static destructors.
HandleTable<jitscope_unit>& units() noexcept { return immortal<HandleTable<jitscope_unit>>(); }
HandleTable<jitscope_phase>& phases() noexcept { return immortal<HandleTable<jitscope_phase>>(); }
HandleTable<jitscope_attachment>& attachments() noexcept {
  return immortal<HandleTable<jitscope_attachment>>();
}
HandleTable<jitscope_unit_ref>& unit_refs() noexcept {
  return immortal<HandleTable<jitscope_unit_ref>>();
}
HandleTable<jitscope_load_scope>& load_scopes() noexcept {
  return immortal<HandleTable<jitscope_load_scope>>();
}

}  // namespace

namespace jitscope::detail {
// Called by the fork handlers (api/session.cpp) right after start/stop's
// lock, before every other: a C call holds its object's lock while it calls
// into all of them.
void c_handles_lock_for_fork() noexcept {
  units().lock_for_fork();
  phases().lock_for_fork();
  attachments().lock_for_fork();
  unit_refs().lock_for_fork();
  load_scopes().lock_for_fork();
  c_autotune_handles_lock_for_fork();
}
void c_handles_unlock_after_fork() noexcept {
  c_autotune_handles_unlock_after_fork();
  load_scopes().unlock_after_fork();
  unit_refs().unlock_after_fork();
  attachments().unlock_after_fork();
  phases().unlock_after_fork();
  units().unlock_after_fork();
}
}  // namespace jitscope::detail

namespace {

int result(const jitscope::Status& st) noexcept {
  jitscope_set_c_last_error(st);
  return st ? 0 : -1;
}

// Runs `op` on the unit under its mutex; false for a stale handle (said).
template <class F>
bool on_unit(const jitscope_unit* unit, const char* call, F&& op) noexcept {
  const std::shared_ptr<jitscope_unit> u = units().find(unit, call);
  if (!u) return false;
  std::lock_guard<std::mutex> lock(u->mutex);
  op(u->unit);
  return true;
}

template <class F>
int with_unit(jitscope_unit* unit, const char* key, const char* call, F&& op) noexcept {
  if (unit == nullptr || key == nullptr) {
    return result(jitscope::Status::error("the unit and the key must not be NULL"));
  }
  jitscope::Status st =
      jitscope::Status::error("the unit handle is not open (closed already, or never returned)");
  on_unit(unit, call, [&](jitscope::CompileUnit& u) { st = op(u); });
  return result(st);
}

}  // namespace

extern "C" {

void jitscope_unit_options_init(jitscope_unit_options* options) {
  if (options == nullptr) return;
  options->frame = nullptr;
  options->graph = nullptr;
  options->is_forward = 1;
  options->recompile_reason = nullptr;
  options->key = nullptr;
}

jitscope_unit* jitscope_unit_open(const jitscope_unit_options* options) {
  jitscope::CompileUnitOptions o;
  if (options != nullptr) {
    o.frame = text(options->frame);
    if (options->graph != nullptr) o.graph = options->graph;
    o.is_forward = options->is_forward != 0;
    o.recompile_reason = text(options->recompile_reason);
    o.key = text(options->key);
  }
  return units().add("opening a compile unit", [&] { return std::make_shared<jitscope_unit>(o); });
}

void jitscope_unit_close(jitscope_unit* unit) {
  bool closed = false;
  on_unit(unit, "jitscope_unit_close", [&](jitscope::CompileUnit& u) {
    u.close();
    // Refused on another thread: the handle stays open for its own thread.
    closed = !u.is_open();
  });
  if (closed) units().remove(unit);
}

void jitscope_unit_compile_id(const jitscope_unit* unit, unsigned* frame, unsigned* attempt) {
  jitscope::CompileId id;
  on_unit(unit, "jitscope_unit_compile_id", [&](jitscope::CompileUnit& u) { id = u.id(); });
  if (frame != nullptr) *frame = id.frame;
  if (attempt != nullptr) *attempt = id.attempt;
}

void jitscope_unit_fail(jitscope_unit* unit, const char* type, const char* reason) {
  on_unit(unit, "jitscope_unit_fail",
          [&](jitscope::CompileUnit& u) { u.fail(text(type), text(reason)); });
}

void jitscope_unit_cache_hit(jitscope_unit* unit, const char* key, const char* cache) {
  on_unit(unit, "jitscope_unit_cache_hit", [&](jitscope::CompileUnit& u) {
    u.cache_hit(text(key), cache != nullptr ? cache : "cache");
  });
}

void jitscope_unit_cache_miss(jitscope_unit* unit, const char* key, const char* cache) {
  on_unit(unit, "jitscope_unit_cache_miss", [&](jitscope::CompileUnit& u) {
    u.cache_miss(text(key), cache != nullptr ? cache : "cache");
  });
}

void jitscope_unit_cache_lookup(jitscope_unit* unit, const char* layer,
                                const jitscope_cache_key_part* parts, size_t count, int hit) {
  on_unit(unit, "jitscope_unit_cache_lookup", [&](jitscope::CompileUnit& u) {
    jitscope::detail::guarded("recording a cache lookup", [&] {
      std::vector<jitscope::CacheKeyPart> key;
      if (parts != nullptr) {
        key.reserve(count);
        for (size_t i = 0; i < count; ++i)
          key.push_back({text(parts[i].name), text(parts[i].value)});
      }
      u.cache_lookup(layer != nullptr ? layer : "cache", key.data(), key.size(),
                     hit != 0 ? jitscope::CacheOutcome::kHit : jitscope::CacheOutcome::kMiss);
    });
  });
}

int jitscope_unit_waits_for(jitscope_unit* unit, unsigned frame, unsigned attempt, long long pid) {
  if (unit == nullptr) return result(jitscope::Status::error("the unit must not be NULL"));
  return with_unit(unit, "", "jitscope_unit_waits_for", [&](jitscope::CompileUnit& u) {
    return u.waits_for({.frame = frame, .attempt = attempt}, pid);
  });
}

int jitscope_unit_set_int(jitscope_unit* unit, const char* key, long long value) {
  return with_unit(unit, key, "jitscope_unit_set_int", [&](jitscope::CompileUnit& u) {
    return u.set(key, jitscope::FieldValue(static_cast<std::int64_t>(value)));
  });
}

int jitscope_unit_set_double(jitscope_unit* unit, const char* key, double value) {
  return with_unit(unit, key, "jitscope_unit_set_double", [&](jitscope::CompileUnit& u) {
    return u.set(key, jitscope::FieldValue(value));
  });
}

int jitscope_unit_set_bool(jitscope_unit* unit, const char* key, int value) {
  return with_unit(unit, key, "jitscope_unit_set_bool", [&](jitscope::CompileUnit& u) {
    return u.set(key, jitscope::FieldValue(value != 0));
  });
}

int jitscope_unit_set_string(jitscope_unit* unit, const char* key, const char* value) {
  if (value == nullptr) return result(jitscope::Status::error("the value must not be NULL"));
  // FieldValue copies the text: building it may allocate.
  return with_unit(unit, key, "jitscope_unit_set_string", [&](jitscope::CompileUnit& u) {
    return jitscope::detail::guarded_status("setting a string metric", [&] {
      return u.set(key, jitscope::FieldValue(std::string_view(value)));
    });
  });
}

int jitscope_unit_increment(jitscope_unit* unit, const char* key, long long by) {
  return with_unit(unit, key, "jitscope_unit_increment",
                   [&](jitscope::CompileUnit& u) { return u.increment(key, by); });
}

int jitscope_unit_artifact(jitscope_unit* unit, const char* kind, const void* data, size_t len,
                           const char* extension) {
  if (data == nullptr && len != 0) return result(jitscope::Status::error("data is NULL"));
  return with_unit(unit, kind, "jitscope_unit_artifact", [&](jitscope::CompileUnit& u) {
    return u.artifact(kind, std::string_view(static_cast<const char*>(data), len),
                      extension != nullptr ? extension : "txt");
  });
}

jitscope_attachment* jitscope_unit_attach(jitscope_unit* unit) {
  jitscope::CompileUnitRef ref;
  if (!on_unit(unit, "jitscope_unit_attach", [&](jitscope::CompileUnit& u) { ref = u.ref(); })) {
    return nullptr;
  }
  return attachments().add("attaching a thread to a compile unit", [&] {
    auto a = std::make_shared<jitscope_attachment>();
    a->attachment = jitscope::attach_thread(ref);
    return a;
  });
}

void jitscope_attachment_detach(jitscope_attachment* attachment) {
  const std::shared_ptr<jitscope_attachment> a =
      attachments().find(attachment, "jitscope_attachment_detach");
  if (!a) return;
  bool detached = false;
  {
    std::lock_guard<std::mutex> lock(a->mutex);
    a->attachment.detach();  // refused elsewhere: stays attached, for its own thread
    detached = !a->attachment.attached();
  }
  if (detached) attachments().remove(attachment);
}

jitscope_unit_ref* jitscope_unit_ref_get(const jitscope_unit* unit) {
  jitscope::CompileUnitRef ref;
  if (!on_unit(unit, "jitscope_unit_ref_get", [&](jitscope::CompileUnit& u) { ref = u.ref(); })) {
    return nullptr;
  }
  return unit_refs().add("keeping a compile unit", [&] {
    return std::make_shared<jitscope_unit_ref>(jitscope_unit_ref{ref});
  });
}

void jitscope_unit_ref_free(jitscope_unit_ref* ref) {
  if (unit_refs().find(ref, "jitscope_unit_ref_free")) unit_refs().remove(ref);
}

jitscope_load_scope* jitscope_load_begin(const jitscope_unit_ref* ref) {
  const std::shared_ptr<jitscope_unit_ref> r = unit_refs().find(ref, "jitscope_load_begin");
  if (!r) return nullptr;
  return load_scopes().add("crediting CUDA loads to a unit",
                           [&] { return std::make_shared<jitscope_load_scope>(r->ref); });
}

// On another thread the LoadScope marks its frame ended: its own thread frees it.
void jitscope_load_end(jitscope_load_scope* scope) {
  if (load_scopes().find(scope, "jitscope_load_end")) load_scopes().remove(scope);
}

const jitscope_phase_key* jitscope_phase_key_get(const char* key, const char* column,
                                                 unsigned flags) {
  if (key == nullptr || *key == '\0') return nullptr;
  const jitscope::PhaseOptions options{.column = text(column),
                                       .compile_event = (flags & JITSCOPE_PHASE_COMPILE_EVENT) != 0,
                                       .exclusive = (flags & JITSCOPE_PHASE_EXCLUSIVE) != 0};
  const jitscope_phase_key* out = nullptr;
  jitscope::detail::guarded("registering a phase key", [&] {
    auto made = std::make_unique<jitscope_phase_key>(key, options);  // says a conflict once
    if (made->stats() == nullptr) return;
    CKeys& keys = jitscope::detail::immortal<CKeys>();
    std::lock_guard<std::mutex> lock(keys.mutex);
    auto [it, added] = keys.by_stats.try_emplace(made->stats(), nullptr);
    if (added) it->second = std::move(made);
    out = it->second.get();
  });
  return out;
}

jitscope_phase* jitscope_phase_begin(const jitscope_phase_key* key) {
  if (key == nullptr) return nullptr;
  return phases().add("beginning a phase (the phase is not timed)", [&] {
    auto phase = std::make_shared<jitscope_phase>();
    phase->handle = jitscope::begin_phase(*key);
    return phase;
  });
}

void jitscope_phase_end(jitscope_phase* phase) {
  const std::shared_ptr<jitscope_phase> p = phases().find(phase, "jitscope_phase_end");
  if (!p) return;
  bool ended = false;
  {
    std::lock_guard<std::mutex> lock(p->mutex);
    p->handle.end();  // refused on another thread: stays open, for its own thread to end
    ended = !p->handle.open();
  }
  if (ended) phases().remove(phase);
}

}  // extern "C"
