// The C API's handles to units, phases, attachments, unit refs and load
// scopes are tokens, not pointers: a slot's index and the slot's generation.
// C callback code ends things twice (an error path and the normal path) and
// keeps copies of handles; a token that was ended, or never made, matches no
// slot and is refused with one `jitscope:` line, never dereferenced, and a
// slot reused later has a new generation, so an old copy cannot end the new
// object. Cost: a mutex and a shared_ptr copy per call (tens of ns), on
// calls that already allocate.
#pragma once

#include "base/boundary.hpp"
#include "base/log.hpp"

#include <cstdint>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <vector>

namespace jitscope::detail {

template <class T>
class HandleTable {
 public:
  // The handle for a new object (built by `make`), or nullptr when out of
  // memory (said once, as `what` failed).
  template <class Make>
  T* add(const char* what, Make&& make) noexcept {
    T* handle = nullptr;
    guarded(what, [&] {  // out of memory: one "<what> failed" line, and no handle
      std::shared_ptr<T> object = make();
      std::lock_guard<std::mutex> lock(mutex_);
      std::uint32_t index = free_;
      if (index != kNone) {
        free_ = slots_[index].next_free;
      } else {
        if (slots_.size() >= kNone - 1) throw std::bad_alloc();
        slots_.emplace_back();
        index = static_cast<std::uint32_t>(slots_.size() - 1);
      }
      Slot& slot = slots_[index];
      slot.object = std::move(object);
      handle = to_handle(index, slot.generation);
    });
    return handle;
  }

  // The object, kept alive while the caller uses it; empty (and `call` is
  // said once) for a stale or unknown handle. NULL is empty, silently.
  std::shared_ptr<T> find(const T* handle, const char* call) const noexcept {
    if (handle == nullptr) return {};
    std::shared_ptr<T> object;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (const Slot* slot = slot_of(handle)) object = slot->object;
    }
    if (!object) refuse(call);
    return object;
  }

  // fork(): the table's lock, then each live object's (an object's is
  // never held while the table's is taken, so this order cannot deadlock),
  // so that a child never inherits one held by a thread it does not have.
  void lock_for_fork() noexcept {
    mutex_.lock();
    if constexpr (requires(T & t) { t.mutex; }) {
      for (Slot& s : slots_) {
        if (s.object) s.object->mutex.lock();
      }
    }
  }
  void unlock_after_fork() noexcept {
    if constexpr (requires(T & t) { t.mutex; }) {
      for (Slot& s : slots_) {
        if (s.object) s.object->mutex.unlock();
      }
    }
    mutex_.unlock();
  }

  // Ends the handle: from now on it is stale. The object goes when its
  // last user lets it go.
  void remove(const T* handle) noexcept {
    std::shared_ptr<T> object;  // released after the lock
    std::lock_guard<std::mutex> lock(mutex_);
    const std::uint32_t index = index_of(handle);
    Slot* slot = const_cast<Slot*>(slot_of(handle));
    if (slot == nullptr) return;
    object = std::move(slot->object);
    if (++slot->generation == 0) slot->generation = 1;
    slot->next_free = free_;
    free_ = index;
  }

 private:
  static constexpr std::uint32_t kNone = 0xffffffffu;
  static_assert(sizeof(void*) == 8, "handles pack a 32-bit index and generation");
  struct Slot {
    std::shared_ptr<T> object;
    std::uint32_t generation = 1;
    std::uint32_t next_free = kNone;
  };

  static T* to_handle(std::uint32_t index, std::uint32_t generation) noexcept {
    // index + 1: never NULL.
    return reinterpret_cast<T*>(std::uintptr_t{generation} << 32 | (std::uintptr_t{index} + 1));
  }
  static std::uint32_t index_of(const T* handle) noexcept {
    return static_cast<std::uint32_t>(reinterpret_cast<std::uintptr_t>(handle)) - 1;
  }
  // Under mutex_.
  const Slot* slot_of(const T* handle) const noexcept {
    const std::uintptr_t bits = reinterpret_cast<std::uintptr_t>(handle);
    const std::uint32_t index = index_of(handle);
    if (index >= slots_.size()) return nullptr;
    const Slot& slot = slots_[index];
    if (!slot.object || slot.generation != static_cast<std::uint32_t>(bits >> 32)) return nullptr;
    return &slot;
  }
  // Out of line: inlined with a literal `call`, GCC 12 warns of a
  // memcpy out of bounds in the concatenation (a false -Warray-bounds).
  [[gnu::noinline, gnu::cold]] static void refuse(const char* call) noexcept {
    guarded(call, [&] {
      log_unique(std::string(call) +
                 ": the handle is not open (ended already, or never returned by jitscope); "
                 "ignored");
    });
  }

  mutable std::mutex mutex_;
  std::vector<Slot> slots_;
  std::uint32_t free_ = kNone;
};

// The fork handlers' calls (c_compile_api.cpp): every table, then every
// live object, in one order.
void c_handles_lock_for_fork() noexcept;
void c_handles_unlock_after_fork() noexcept;
// The autotuning sessions' and steps' tables (api/c_autotune_api.cpp),
// taken inside the two above.
void c_autotune_handles_lock_for_fork() noexcept;
void c_autotune_handles_unlock_after_fork() noexcept;

}  // namespace jitscope::detail
