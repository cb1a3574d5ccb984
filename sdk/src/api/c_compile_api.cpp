// The C API of compile units, phases and attachments (jitscope/compile.h):
// heap objects wrapping the C++ ones, null-safe.
#include <jitscope/compile.h>
#include <jitscope/compile.hpp>

#include "api/c_last_error.hpp"
#include "base/boundary.hpp"
#include "base/immortal.hpp"
#include "base/log.hpp"
#include "compile/state.hpp"

#include <map>
#include <memory>
#include <mutex>
#include <new>

struct jitscope_unit {
  explicit jitscope_unit(const jitscope::CompileUnitOptions& options) noexcept : unit(options) {}
  jitscope::CompileUnit unit;
};
struct jitscope_phase {
  jitscope::PhaseHandle handle;
};
struct jitscope_attachment {
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

std::string_view text(const char* s) noexcept { return s != nullptr ? s : std::string_view(); }

// One C key per registered phase: repeated gets return the same pointer.
struct CKeys {
  std::mutex mutex;
  std::map<const void*, std::unique_ptr<jitscope_phase_key>> by_stats;
};

int result(const jitscope::Status& st) noexcept {
  jitscope_set_c_last_error(st);
  return st ? 0 : -1;
}

template <class F>
int with_unit(jitscope_unit* unit, const char* key, F&& op) noexcept {
  if (unit == nullptr || key == nullptr) {
    return result(jitscope::Status::error("the unit and the key must not be NULL"));
  }
  return result(op(unit->unit));
}

}  // namespace

extern "C" {

void jitscope_unit_options_init(jitscope_unit_options* options) {
  if (options == nullptr) return;
  options->frame = nullptr;
  options->graph = nullptr;
  options->is_forward = 1;
  options->recompile_reason = nullptr;
}

jitscope_unit* jitscope_unit_open(const jitscope_unit_options* options) {
  jitscope::CompileUnitOptions o;
  if (options != nullptr) {
    o.frame = text(options->frame);
    if (options->graph != nullptr) o.graph = options->graph;
    o.is_forward = options->is_forward != 0;
    o.recompile_reason = text(options->recompile_reason);
  }
  auto* unit = new (std::nothrow) jitscope_unit(o);
  if (unit == nullptr) jitscope::detail::log_unique("opening a compile unit: out of memory");
  return unit;
}

void jitscope_unit_close(jitscope_unit* unit) {
  if (unit == nullptr) return;
  unit->unit.close();
  // Refused on another thread: the unit's frame stays linked on the thread
  // that opened it, so its memory is kept.
  if (!unit->unit.is_open()) {
    delete unit;
  } else {
    jitscope::detail::keep_refused(unit);
  }
}

void jitscope_unit_compile_id(const jitscope_unit* unit, unsigned* frame, unsigned* attempt) {
  const jitscope::CompileId id = unit != nullptr ? unit->unit.id() : jitscope::CompileId{};
  if (frame != nullptr) *frame = id.frame;
  if (attempt != nullptr) *attempt = id.attempt;
}

void jitscope_unit_fail(jitscope_unit* unit, const char* type, const char* reason) {
  if (unit != nullptr) unit->unit.fail(text(type), text(reason));
}

void jitscope_unit_cache_hit(jitscope_unit* unit, const char* key, const char* cache) {
  if (unit != nullptr) unit->unit.cache_hit(text(key), cache != nullptr ? cache : "cache");
}

void jitscope_unit_cache_miss(jitscope_unit* unit, const char* key, const char* cache) {
  if (unit != nullptr) unit->unit.cache_miss(text(key), cache != nullptr ? cache : "cache");
}

int jitscope_unit_set_int(jitscope_unit* unit, const char* key, long long value) {
  return with_unit(unit, key, [&](jitscope::CompileUnit& u) {
    return u.set(key, jitscope::FieldValue(static_cast<std::int64_t>(value)));
  });
}

int jitscope_unit_set_double(jitscope_unit* unit, const char* key, double value) {
  return with_unit(
      unit, key, [&](jitscope::CompileUnit& u) { return u.set(key, jitscope::FieldValue(value)); });
}

int jitscope_unit_set_string(jitscope_unit* unit, const char* key, const char* value) {
  if (value == nullptr) return result(jitscope::Status::error("the value must not be NULL"));
  // FieldValue copies the text: building it may allocate.
  return with_unit(unit, key, [&](jitscope::CompileUnit& u) {
    return jitscope::detail::guarded_status("setting a string metric", [&] {
      return u.set(key, jitscope::FieldValue(std::string_view(value)));
    });
  });
}

int jitscope_unit_increment(jitscope_unit* unit, const char* key, long long by) {
  return with_unit(unit, key, [&](jitscope::CompileUnit& u) { return u.increment(key, by); });
}

int jitscope_unit_artifact(jitscope_unit* unit, const char* kind, const void* data, size_t len,
                           const char* extension) {
  if (data == nullptr && len != 0) return result(jitscope::Status::error("data is NULL"));
  return with_unit(unit, kind, [&](jitscope::CompileUnit& u) {
    return u.artifact(kind, std::string_view(static_cast<const char*>(data), len),
                      extension != nullptr ? extension : "txt");
  });
}

jitscope_attachment* jitscope_unit_attach(jitscope_unit* unit) {
  if (unit == nullptr) return nullptr;
  auto* a = new (std::nothrow) jitscope_attachment;
  if (a == nullptr) {
    jitscope::detail::log_unique("attaching a thread to a compile unit: out of memory");
    return nullptr;
  }
  a->attachment = jitscope::attach_thread(unit->unit.ref());
  return a;
}

void jitscope_attachment_detach(jitscope_attachment* attachment) {
  if (attachment == nullptr) return;
  attachment->attachment.detach();  // refused elsewhere: ThreadAttachment keeps what it must
  delete attachment;
}

jitscope_unit_ref* jitscope_unit_ref_get(const jitscope_unit* unit) {
  if (unit == nullptr) return nullptr;
  auto* r = new (std::nothrow) jitscope_unit_ref{unit->unit.ref()};
  if (r == nullptr) jitscope::detail::log_unique("keeping a compile unit: out of memory");
  return r;
}

void jitscope_unit_ref_free(jitscope_unit_ref* ref) { delete ref; }

jitscope_load_scope* jitscope_load_begin(const jitscope_unit_ref* ref) {
  if (ref == nullptr) return nullptr;
  auto* l = new (std::nothrow) jitscope_load_scope(ref->ref);
  if (l == nullptr) jitscope::detail::log_unique("crediting CUDA loads to a unit: out of memory");
  return l;
}

// On another thread the LoadScope marks its frame ended: its own thread frees it.
void jitscope_load_end(jitscope_load_scope* scope) { delete scope; }

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
  auto* phase = new (std::nothrow) jitscope_phase;
  if (phase == nullptr) {
    jitscope::detail::log_unique("beginning a phase: out of memory (the phase is not timed)");
    return nullptr;
  }
  phase->handle = jitscope::begin_phase(*key);
  return phase;
}

void jitscope_phase_end(jitscope_phase* phase) {
  if (phase == nullptr) return;
  phase->handle.end();  // refused elsewhere: PhaseHandle keeps what it must
  delete phase;
}

}  // extern "C"
