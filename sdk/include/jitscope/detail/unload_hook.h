/* Keeps names valid when a shared object that records events is unloaded.
 * Internal: included by <jitscope/jitscope.hpp> and <jitscope/jitscope.h>.
 *
 * A static name (a string literal) is stored by pointer and read by the
 * flusher later. When a plugin is dlclose()d its literals are unmapped, so
 * every image that includes a jitscope header gets, per translation unit, a
 * destructor that runs while the image is still mapped: it has the flusher
 * write every pending event and copy the names of spans still open, and
 * returns when that is done. Priority 101 runs it after the image's C++
 * static destructors (which may record events too). Without a session it is
 * one load; at process exit the session has already ended. */
#ifndef JITSCOPE_DETAIL_UNLOAD_HOOK_H
#define JITSCOPE_DETAIL_UNLOAD_HOOK_H

#include <jitscope/detail/export.hpp>

/* Compiled out (JITSCOPE_DISABLE): no hook, nothing to declare. */
#if !defined(JITSCOPE_DISABLE)
#ifdef __cplusplus
extern "C" {
#endif

/* `address` is any address inside the image being unloaded (for messages). */
JITSCOPE_API void jitscope_image_unloading(const void* address);

#ifdef __cplusplus
}
#endif
#endif

/* Not in the library itself: libjitscope.so is never unmapped (-z nodelete). */
#if !defined(JITSCOPE_DISABLE) && !defined(JITSCOPE_BUILDING_LIBRARY) && defined(__GNUC__) && \
    defined(__ELF__)
__attribute__((used)) static const char jitscope_image_marker_ = 0;
__attribute__((destructor(101), used)) static void jitscope_image_unload_hook_(void) {
  jitscope_image_unloading(&jitscope_image_marker_);
}
#endif

#endif /* JITSCOPE_DETAIL_UNLOAD_HOOK_H */
