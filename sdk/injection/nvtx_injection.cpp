// libjitscope_nvtx.so: the library NVTX_INJECTION64_PATH names. Every NVTX
// copy in the process (one per library that uses NVTX) loads it and calls
// InitializeInjectionNvtx2 once; it hands the call to the jitscope runtime
// already in the process (jitscope_nvtx_attach, exported by the static and
// the shared library). A program without jitscope gets libjitscope.so from
// this library's own folder; that copy starts a session from JITSCOPE_TRACE.
//
// Deliberately tiny and free of jitscope's runtime: a second runtime in a
// process that already has one would start a second session.
#include <dlfcn.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <string>

namespace {

using GetExportTable = const void* (*)(std::uint32_t);
using Attach = int (*)(GetExportTable) noexcept;

std::atomic<Attach> g_attach{nullptr};
std::mutex g_resolve_mutex;
thread_local bool t_resolving = false;
std::atomic<bool> g_said{false};

void say_once(const std::string& line) noexcept {
  if (g_said.exchange(true)) return;
  const std::string text = "jitscope: " + line + "\n";
  ssize_t ignored = ::write(2, text.data(), text.size());
  (void)ignored;
}

// libjitscope.so beside this library, for programs without jitscope.
Attach load_runtime_beside_us() {
  Dl_info info{};
  if (::dladdr(reinterpret_cast<void*>(&load_runtime_beside_us), &info) == 0 ||
      info.dli_fname == nullptr) {
    return nullptr;
  }
  std::string path = info.dli_fname;
  const std::size_t slash = path.rfind('/');
  path =
      (slash == std::string::npos ? std::string() : path.substr(0, slash + 1)) + "libjitscope.so";
  void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = ::dlerror();
    say_once("NVTX capture off: no jitscope in this process and " + path + " did not load (" +
             (why != nullptr ? why : "unknown error") + ")");
    return nullptr;
  }
  return reinterpret_cast<Attach>(::dlsym(handle, "jitscope_nvtx_attach"));
}

Attach resolve() {
  // acquire: pairs with the release below; the runtime it names is loaded.
  if (Attach a = g_attach.load(std::memory_order_acquire)) return a;
  // Loading libjitscope.so runs its session autostart, which initializes its
  // own NVTX copy, which calls back here on this thread: that inner call is
  // declined (the runtime's own spans are already in its trace).
  if (t_resolving) return nullptr;
  std::lock_guard<std::mutex> lock(g_resolve_mutex);  // other threads wait for the answer
  if (Attach a = g_attach.load(std::memory_order_acquire)) return a;
  t_resolving = true;
  auto a = reinterpret_cast<Attach>(::dlsym(RTLD_DEFAULT, "jitscope_nvtx_attach"));
  if (a == nullptr) a = load_runtime_beside_us();
  t_resolving = false;
  if (a != nullptr) g_attach.store(a, std::memory_order_release);
  return a;
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int InitializeInjectionNvtx2(
    GetExportTable get_export_table) {
  try {
    Attach attach = resolve();
    return attach != nullptr ? attach(get_export_table) : 0;
  } catch (...) {
    return 0;  // never throw into the NVTX loader
  }
}
