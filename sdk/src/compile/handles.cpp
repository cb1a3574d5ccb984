// Phases and attachments begun in one callback and ended in another
// (compile.hpp, "begun in one callback"): the RAII objects on the heap,
// owned by move-only handles.
#include "base/boundary.hpp"
#include "base/immortal.hpp"
#include "base/log.hpp"
#include "compile/state.hpp"

#include <mutex>
#include <new>
#include <vector>

namespace jitscope::detail {

void keep_refused(const void* object) noexcept {
  struct Kept {
    std::mutex mutex;
    std::vector<const void*> objects;
  };
  Kept& kept = immortal<Kept>();
  // Failing (out of memory), it is kept all the same, unlisted.
  guarded("keeping an object ended on the wrong thread", [&] {
    std::lock_guard<std::mutex> lock(kept.mutex);
    kept.objects.push_back(object);
  });
}

}  // namespace jitscope::detail

namespace jitscope {

using namespace detail;

void PhaseHandle::adopt(Phase* phase) noexcept {
  if (phase == nullptr) {
    log_unique("beginning a phase by handle: out of memory (the phase is not timed)");
    return;
  }
  if (!phase->frame_.open) {  // an unusable key: said when it was registered
    delete phase;
    return;
  }
  phase_ = phase;
}

PhaseHandle begin_phase(const PhaseKey& key, std::initializer_list<Arg> args) noexcept {
  PhaseHandle handle;
  if constexpr (kCompiledIn) handle.adopt(new (std::nothrow) Phase(key, args));
  return handle;
}

PhaseHandle begin_phase(std::string_view key, const PhaseOptions& options) noexcept {
  PhaseHandle handle;
  if constexpr (kCompiledIn) handle.adopt(new (std::nothrow) Phase(key, options));
  return handle;
}

void PhaseHandle::end() noexcept {
  if (phase_ == nullptr) return;
  // The owner first, never `open`: the owning thread may be ending this
  // phase right now (its unit closing ends it), and only that thread may
  // read or free it. A held phase was opened, so its owner is set.
  if (!on_owning_thread(phase_->frame_, "ending a phase")) return;
  phase_->end();
  // Refused on another thread: still open, and this handle still ends it.
  if (phase_->frame_.open) return;
  delete phase_;
  phase_ = nullptr;
}

void PhaseHandle::end_or_keep() noexcept {
  end();
  if (phase_ == nullptr) return;
  // The frame stays linked on the thread that began it: its memory is
  // kept, never freed under that thread.
  keep_refused(phase_);
  phase_ = nullptr;
}

EventRef PhaseHandle::event() noexcept {
  if (phase_ != nullptr) return phase_->event();
  EventRef ref;
  guarded(kExplainingLookup, [&] { ref.error_ = "the phase handle holds no open phase"; });
  return ref;
}

void ThreadAttachment::adopt(UnitScope* scope) noexcept {
  if (scope == nullptr) {
    log_unique("attaching a thread to a compile unit: out of memory (not attached)");
  } else if (!scope->frame_.open) {
    delete scope;  // refused (said by UnitScope)
  } else {
    scope_ = scope;
  }
}

ThreadAttachment attach_thread(const CompileUnitRef& unit) noexcept {
  ThreadAttachment attachment;
  if constexpr (kCompiledIn) {
    if (unit.valid()) attachment.adopt(new (std::nothrow) UnitScope(unit));
  }
  return attachment;
}

void ThreadAttachment::detach() noexcept {
  if (scope_ == nullptr) return;
  if (!on_owning_thread(scope_->frame_, "leaving a compile unit")) return;  // as PhaseHandle::end
  leave_unit(scope_->frame_);
  if (scope_->frame_.open) return;  // refused on another thread: see PhaseHandle::end
  delete scope_;
  scope_ = nullptr;
}

void ThreadAttachment::detach_or_keep() noexcept {
  detach();
  if (scope_ == nullptr) return;
  keep_refused(scope_);  // see PhaseHandle::end_or_keep
  scope_ = nullptr;
}

}  // namespace jitscope
