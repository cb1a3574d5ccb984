// The NVTX capture's attachment: jitscope becomes the tool of an NVTX
// instance when it initializes with jitscope as its injection
// (NVTX_INJECTION64_PATH=libjitscope_nvtx.so, or the static form at the
// end), by pointing every CORE and CORE2 slot of the instance's export table
// at the capture's handlers. Also the capture's session switch, totals,
// attached instances and fork locks. See capture_state.hpp.
#include "nvtx/capture_state.hpp"

#include "base/boundary.hpp"
#include "base/log.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace jitscope::detail {

namespace {

using nvtx_capture::add_async_slots;
using nvtx_capture::add_naming_slots;
using nvtx_capture::add_range_slots;
using nvtx_capture::SlotTables;

// The NVTX instances attached (their export table functions), for status
// and for emission to recognise its own instance. Few: one per library.
struct Attached {
  std::mutex mutex;
  std::vector<const void*> instances;
};
struct AttachedTag;
Attached& attached() noexcept { return immortal<Attached, AttachedTag>(); }

// Writes `fns[i]` into slot i of the module's table (slot 0 is unused).
// Patches only the slots this NVTX version has.
bool patch(const NvtxExportTableCallbacks* cb, NvtxCallbackModule module,
           const NvtxFunctionPointer* fns, unsigned count) noexcept {
  NvtxFunctionTable table = nullptr;
  unsigned size = 0;
  if (cb->GetModuleFunctionTable(module, &table, &size) == 0 || table == nullptr) return false;
  for (unsigned i = 1; i < count && i < size; ++i) {
    if (table[i] != nullptr && fns[i] != nullptr) *table[i] = fns[i];
  }
  return true;
}

int attach(NvtxGetExportTableFunc_t get_export_table) noexcept {
  if (get_export_table == nullptr) return 0;
  const auto* cb =
      static_cast<const NvtxExportTableCallbacks*>(get_export_table(NVTX_ETID_CALLBACKS));
  if (cb == nullptr || cb->struct_size < sizeof(NvtxExportTableCallbacks) ||
      cb->GetModuleFunctionTable == nullptr) {
    log_unique(
        "NVTX capture: an NVTX instance offers no callback table; its ranges are not captured");
    return 0;
  }
  SlotTables slots;
  add_range_slots(slots);
  add_async_slots(slots);
  add_naming_slots(slots);
  if (!patch(cb, NVTX_CB_MODULE_CORE, slots.core, NVTX_CBID_CORE_SIZE) ||
      !patch(cb, NVTX_CB_MODULE_CORE2, slots.core2, NVTX_CBID_CORE2_SIZE)) {
    log_unique("NVTX capture: an NVTX instance refused its core callback tables");
    return 0;
  }
  if (const auto* version =
          static_cast<const NvtxExportTableVersionInfo*>(get_export_table(NVTX_ETID_VERSIONINFO));
      version != nullptr && version->struct_size >= sizeof(NvtxExportTableVersionInfo) &&
      version->SetInjectionNvtxVersion != nullptr) {
    version->SetInjectionNvtxVersion(NVTX_VERSION);
  }
  // Called once per NVTX instance (each library has its own); calling it
  // again for the same instance only writes the same pointers again.
  // Out of memory here: the instance is captured but not listed (the status
  // undercounts, and emission may not recognise its own instance).
  (void)guarded("NVTX capture: listing an attached NVTX instance", [&] {
    Attached& a = attached();
    std::lock_guard<std::mutex> lock(a.mutex);
    const void* key = reinterpret_cast<const void*>(get_export_table);
    if (std::find(a.instances.begin(), a.instances.end(), key) == a.instances.end()) {
      a.instances.push_back(key);
    }
  });
  return 1;
}

// The path in NVTX_INJECTION64_PATH, if it is not jitscope's own library.
std::string foreign_injection_path() {
  const char* path = std::getenv("NVTX_INJECTION64_PATH");
  if (path == nullptr || *path == '\0') return {};
  std::string_view p(path);
  const std::size_t slash = p.rfind('/');
  const std::string_view base = slash == std::string_view::npos ? p : p.substr(slash + 1);
  if (base.starts_with("libjitscope_nvtx.so")) return {};
  return std::string(p);
}

}  // namespace

void nvtx_capture_begin_session(const Config& config) noexcept {
  nvtx_capture::g_capture_on.store(config.nvtx_capture, std::memory_order_relaxed);
  // Ranges started in an earlier session can never be written now.
  nvtx_capture::forget_open_async_ranges();
  if (!config.nvtx_capture) return;
  (void)guarded("NVTX capture: checking NVTX_INJECTION64_PATH", [] {
    const std::string other = foreign_injection_path();
    if (!other.empty()) {
      static std::atomic<bool> said{false};
      log_once(said, "NVTX capture off: NVTX_INJECTION64_PATH=" + other +
                         " belongs to another tool (e.g. Nsight Systems); jitscope's own "
                         "ranges still go to it");
    }
  });
}

CaptureTotals nvtx_capture_totals() noexcept {
  nvtx_capture::Counters& c = nvtx_capture::counters();
  CaptureTotals t;
  t.thread_names = c.thread_names.load(std::memory_order_relaxed);
  t.unbalanced_pops = c.unbalanced_pops.load(std::memory_order_relaxed);
  t.unknown_ends = c.unknown_ends.load(std::memory_order_relaxed);
  t.dropped = c.dropped.load(std::memory_order_relaxed);
  return t;
}

bool nvtx_capture_attached_to(const void* get_export_table) noexcept {
  Attached& a = attached();
  std::lock_guard<std::mutex> lock(a.mutex);
  return std::find(a.instances.begin(), a.instances.end(), get_export_table) != a.instances.end();
}

// Lock order: emitter, attached copies, open async ranges, names (the
// emitter's NVTX calls may attach and register; no path takes them the other way).
void nvtx_lock_for_fork() noexcept {
  nvtx_emit_lock_for_fork();
  attached().mutex.lock();
  nvtx_capture::lock_async_ranges_for_fork();
  lock_captured_names_for_fork();
}
void nvtx_unlock_after_fork() noexcept {
  nvtx_capture::t_capture_tid = 0;  // the child's thread has a tid of its own
  unlock_captured_names_after_fork();
  nvtx_capture::unlock_async_ranges_after_fork();
  attached().mutex.unlock();
  nvtx_emit_unlock_after_fork();
}

std::size_t nvtx_capture_instances() noexcept {
  Attached& a = attached();
  std::lock_guard<std::mutex> lock(a.mutex);
  return a.instances.size();
}

}  // namespace jitscope::detail

// The entry points. jitscope_nvtx_attach is what the injection library
// (libjitscope_nvtx.so) forwards to; InitializeInjectionNvtx2_fnptr is NVTX's
// static injection: NVTX instances in the binary jitscope is linked into
// find it when NVTX_INJECTION64_PATH is unset.
extern "C" {

int jitscope_nvtx_attach(const void* (*get_export_table)(std::uint32_t)) noexcept {
  return jitscope::detail::attach(get_export_table);
}

static int jitscope_static_injection_init(NvtxGetExportTableFunc_t get_export_table) noexcept {
  return jitscope::detail::attach(get_export_table);
}

// A strong definition: it overrides the weak null one that every NVTX
// instance in this binary carries.
NvtxInitializeInjectionNvtxFunc_t InitializeInjectionNvtx2_fnptr = jitscope_static_injection_init;

}  // extern "C"
