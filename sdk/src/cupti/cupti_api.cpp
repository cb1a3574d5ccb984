#include "cupti/cupti_api.hpp"

#include "base/boundary.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>

namespace jitscope::detail {
namespace {

CuptiApi g_api;  // written once, under load_mutex(), before `loaded` is set

struct LoadOutcome {
  bool tried = false;
  bool loaded = false;
  std::string why;
};

// Loads `path`; the handle, or nullptr and the loader's words appended to `why`.
void* open_library(const char* path, std::string& why) {
  void* handle = ::dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* e = ::dlerror();
    if (!why.empty()) why += "; ";
    why += e != nullptr ? e : path;
  }
  return handle;
}

void* open_cupti(std::string& why) {
  if (const char* explicit_path = std::getenv("JITSCOPE_CUPTI_LIBRARY");
      explicit_path != nullptr && *explicit_path != '\0') {
    void* h = open_library(explicit_path, why);
    if (h == nullptr) why = "cannot load JITSCOPE_CUPTI_LIBRARY: " + why;
    return h;
  }
  if (void* h = open_library(JITSCOPE_CUPTI_SONAME, why)) return h;
#ifdef JITSCOPE_CUPTI_BUILD_PATH
  if (void* h = open_library(JITSCOPE_CUPTI_BUILD_PATH, why)) return h;
#endif
  why = "cannot load CUPTI (" + why + "); set JITSCOPE_CUPTI_LIBRARY to its path";
  return nullptr;
}

bool resolve(void* handle, CuptiApi& api, std::string& why) {
#define JITSCOPE_CUPTI_RESOLVE(f)                                 \
  if (void* p = ::dlsym(handle, #f); p != nullptr) {              \
    api.f = reinterpret_cast<decltype(&::f)>(p);                  \
  } else {                                                        \
    why = "the loaded CUPTI has no " #f " (older than CUDA 13?)"; \
    return false;                                                 \
  }
  JITSCOPE_CUPTI_ENTRY_POINTS(JITSCOPE_CUPTI_RESOLVE)
#undef JITSCOPE_CUPTI_RESOLVE
  return true;
}

}  // namespace

bool load_cupti(std::string& why) noexcept {
  static std::mutex load_mutex;
  static LoadOutcome outcome;
  bool ok = false;
  const bool ran = guarded_quiet([&] {
    std::lock_guard<std::mutex> lock(load_mutex);
    if (!outcome.tried) {
      outcome.tried = true;
      std::string reason;
      if (void* handle = open_cupti(reason)) {
        CuptiApi api;
        if (resolve(handle, api, reason)) {
          g_api = api;  // kept loaded for the life of the process: CUPTI calls back into us
          outcome.loaded = true;
        } else {
          ::dlclose(handle);
        }
      }
      outcome.why = std::move(reason);
    }
    ok = outcome.loaded;
    if (!ok) why = outcome.why;
  });
  // Quiet: the only failure here is out of memory, which the caller says.
  if (!ran) why = "out of memory loading CUPTI";
  return ran && ok;
}

const CuptiApi& cupti_api() noexcept { return g_api; }

}  // namespace jitscope::detail
