// A process-lifetime object that is never destroyed, for state that threads,
// atexit handlers and static destructors may still use while the process
// exits. Built on first use in static storage; `Tag` tells apart two objects
// of the same type.
#pragma once

#include <new>

namespace jitscope::detail {

template <class T, class Tag = T>
T& immortal() noexcept {
  alignas(T) static unsigned char storage[sizeof(T)];
  static T* object = new (storage) T();
  return *object;
}

}  // namespace jitscope::detail
