// The CUPTI collector's API callback: which CUDA calls it watches (the
// classify_api rules, turned into per-cbid tables), the kGpuCall record it
// writes into the calling thread's ring at a watched call's entry, and, at a
// load, derive or unload call's exit, the map from module, library, kernel
// and function handles to the compile unit that built them, which a launch
// reads through a per-thread cache. See collector_state.hpp.
//
// The callback runs on every watched CUDA call of every thread: a launch
// whose handle its thread has looked up since the map last changed does not
// take the map's mutex.
#include "cupti/collector_state.hpp"
#include "cupti/cupti_api.hpp"

#include "base/boundary.hpp"
#include "compile/state.hpp"
#include "ring/producer.hpp"

#include <cstring>
#include <string_view>
#include <utility>

namespace jitscope::detail {

using cupti_collector::Collector;
using cupti_collector::collector;
using cupti_collector::forget_all;
using cupti_collector::HandleEntry;
using cupti_collector::watch_for;

namespace {

// The handle positions the callback reads (cupti.hpp ApiWatch), checked
// against the generated parameter structs of the calls it watches.
static_assert(offsetof(cuLaunchKernel_params, f) == 0);
static_assert(offsetof(cuLaunchCooperativeKernel_params, f) == 0);
static_assert(offsetof(cudaLaunchKernel_v7000_params, func) == 0);
static_assert(offsetof(cudaLaunchCooperativeKernel_v9000_params, func) == 0);
static_assert(offsetof(cuLaunchKernelEx_params, f) == sizeof(void*));
static_assert(offsetof(cudaLaunchKernelExC_v11060_params, func) == sizeof(void*));
static_assert(offsetof(cuModuleLoadData_params, module) == 0);
static_assert(offsetof(cuModuleLoadDataEx_params, module) == 0);
static_assert(offsetof(cuModuleLoad_params, module) == 0);
static_assert(offsetof(cuModuleLoadFatBinary_params, module) == 0);
static_assert(offsetof(cuLibraryLoadData_params, library) == 0);
static_assert(offsetof(cuLibraryLoadFromFile_params, library) == 0);
static_assert(offsetof(cudaLibraryLoadData_v12060_params, library) == 0);
static_assert(offsetof(cudaLibraryLoadFromFile_v12060_params, library) == 0);
static_assert(offsetof(cuModuleGetFunction_params, hfunc) == 0 &&
              offsetof(cuModuleGetFunction_params, hmod) == sizeof(void*));
static_assert(offsetof(cuLibraryGetKernel_params, pKernel) == 0 &&
              offsetof(cuLibraryGetKernel_params, library) == sizeof(void*));
static_assert(offsetof(cuLibraryGetModule_params, pMod) == 0 &&
              offsetof(cuLibraryGetModule_params, library) == sizeof(void*));
static_assert(offsetof(cuKernelGetFunction_params, pFunc) == 0 &&
              offsetof(cuKernelGetFunction_params, kernel) == sizeof(void*));
static_assert(offsetof(cudaLibraryGetKernel_v12060_params, pKernel) == 0 &&
              offsetof(cudaLibraryGetKernel_v12060_params, library) == sizeof(void*));
static_assert(offsetof(cuModuleUnload_params, hmod) == 0);
static_assert(offsetof(cuLibraryUnload_params, library) == 0);

// ---- the watch tables ----

// "cudaLaunchKernel_v7000" -> "cudaLaunchKernel"; "cuMemcpyHtoD_v2" -> "cuMemcpyHtoD".
std::string_view without_version(std::string_view name) {
  const std::size_t v = name.rfind("_v");
  if (v == std::string_view::npos || v + 2 >= name.size()) return name;
  for (char c : name.substr(v + 2)) {
    if (c < '0' || c > '9') return name;
  }
  return name.substr(0, v);
}

void build_watch_tables(Collector& c) {
  const std::pair<CUpti_CallbackDomain, std::size_t> domains[] = {
      {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_SIZE},
      {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_SIZE}};
  for (std::size_t d = 0; d < 2; ++d) {
    auto& table = c.watch[d];
    table.assign(domains[d].second, ApiWatch::kNone);
    c.names[d].assign(domains[d].second, std::string());
    for (std::size_t cbid = 1; cbid < table.size(); ++cbid) {
      const char* name = nullptr;
      if (cupti_api().cuptiGetCallbackName(domains[d].first, static_cast<CUpti_CallbackId>(cbid),
                                           &name) == CUPTI_SUCCESS &&
          name != nullptr) {
        table[cbid] = classify_api(name);
        c.names[d][cbid] = without_version(name);
      }
    }
  }
}

// The tables' row for a domain: 0 runtime, 1 driver, 2 neither. Built on first use.
std::size_t table_row(std::uint32_t domain) {
  Collector& c = collector();
  std::call_once(c.watch_once, [&c] { build_watch_tables(c); });
  return domain == CUPTI_CB_DOMAIN_RUNTIME_API ? 0 : domain == CUPTI_CB_DOMAIN_DRIVER_API ? 1 : 2;
}

// ---- the handle map ----

const GpuUnitTag* tag_of(const void* handle) {
  if (handle == nullptr) return nullptr;
  Collector& c = collector();
  std::lock_guard<std::mutex> lock(c.handles_mutex);
  auto it = c.handles.find(handle);
  return it == c.handles.end() ? nullptr : it->second.tag;
}

// Each change to the handle map; `handles_mutex` held.
void handles_changed(Collector& c) {
  // release: a thread that reads this generation (acquire) sees the change.
  c.handles_generation.fetch_add(1, std::memory_order_release);
}

// What a launch's record carries: the unit that built the function, and the
// kernel's name as this launch gave it.
struct LaunchTags {
  const GpuUnitTag* unit = nullptr;
  const std::string* kernel = nullptr;
};

// tag_of and the interned kernel name for the launch path: a few handles per
// thread, cached until the map changes, so threads launching at once do not
// all take one mutex; a cached name is compared with the launch's on a hit.
struct LaunchCache {
  static constexpr std::size_t kWays = 8;
  std::uint64_t generation = 0;  // 0: empty (the map's generation starts at 1)
  const void* handle[kWays] = {};
  LaunchTags tags[kWays] = {};
};
constinit thread_local LaunchCache t_launch_cache;

// `symbol`: CUPTI's symbolName, valid only during this callback (CUPTI
// rewrites it for the next launch).
LaunchTags tags_of_launch(const void* handle, const char* symbol) {
  if (handle == nullptr) return {};
  LaunchCache& cache = t_launch_cache;
  // acquire: pairs with handles_changed(); an unchanged generation means
  // every cached answer is still the map's.
  const std::uint64_t generation = collector().handles_generation.load(std::memory_order_acquire);
  if (cache.generation != generation) {
    cache = LaunchCache{};
    cache.generation = generation;
  }
  const std::size_t way = (reinterpret_cast<std::uintptr_t>(handle) >> 4) % LaunchCache::kWays;
  LaunchTags& cached = cache.tags[way];
  if (cache.handle[way] != handle) {
    // A change after the generation was read gives a newer answer under an
    // older generation: the next call sees the new generation and asks again.
    cache.handle[way] = handle;
    cached = LaunchTags{tag_of(handle), nullptr};
  }
  // The driver reuses a handle for another kernel (after an unload), so a
  // cached name is compared with the launch's, not trusted.
  if (symbol != nullptr && (cached.kernel == nullptr || *cached.kernel != symbol)) {
    cached.kernel = intern_kernel_name(symbol);
  }
  return cached;
}

void remember(const void* handle, const GpuUnitTag* tag, const void* parent) {
  if (handle == nullptr || tag == nullptr) return;
  Collector& c = collector();
  std::lock_guard<std::mutex> lock(c.handles_mutex);
  c.handles[handle] = HandleEntry{tag, parent};
  handles_changed(c);
}

// A module or library went away: forget it and what was got from it, so a
// handle the driver reuses is not credited to the old unit.
void forget(const void* handle) {
  if (handle == nullptr) return;
  Collector& c = collector();
  std::lock_guard<std::mutex> lock(c.handles_mutex);
  std::vector<const void*> gone{handle};
  while (!gone.empty()) {
    const void* h = gone.back();
    gone.pop_back();
    if (c.handles.erase(h) != 0) handles_changed(c);
    for (const auto& [child, entry] : c.handles) {
      if (entry.parent == h) gone.push_back(child);
    }
  }
}

// ---- reading a call's parameters ----

const void* param(const CUpti_CallbackData* cb, std::size_t index) {
  if (cb->functionParams == nullptr) return nullptr;
  const void* value = nullptr;
  std::memcpy(&value, static_cast<const char*>(cb->functionParams) + index * sizeof(void*),
              sizeof value);
  return value;
}

// The handle a load or derive call wrote through its out pointer (parameter 0).
const void* out_handle(const CUpti_CallbackData* cb) {
  const void* out = param(cb, 0);
  if (out == nullptr) return nullptr;
  const void* handle = nullptr;
  std::memcpy(&handle, out, sizeof handle);
  return handle;
}

bool call_succeeded(const CUpti_CallbackData* cb) {
  if (cb->functionReturnValue == nullptr) return false;
  int result = 0;  // CUresult and cudaError_t: an int enum, 0 on success
  std::memcpy(&result, cb->functionReturnValue, sizeof result);
  return result == 0;
}

}  // namespace

namespace cupti_collector {

ApiWatch watch_for(std::uint32_t domain, std::uint32_t cbid) {
  const std::size_t d = table_row(domain);
  const auto& table = collector().watch;
  if (d > 1 || cbid >= table[d].size()) return ApiWatch::kNone;
  return table[d][cbid];
}

std::string api_name(CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
  const std::size_t d = table_row(domain);
  const auto& names = collector().names;
  if (d <= 1 && cbid < names[d].size() && !names[d][cbid].empty()) return names[d][cbid];
  return (domain == CUPTI_CB_DOMAIN_RUNTIME_API ? "cuda API " : "cu API ") + std::to_string(cbid);
}

// Every handle (a context destroyed, a new session): `handles_mutex` not held.
void forget_all(Collector& c) {
  std::lock_guard<std::mutex> lock(c.handles_mutex);
  c.handles.clear();
  handles_changed(c);
}

void CUPTIAPI on_api_callback(void* /*userdata*/, CUpti_CallbackDomain domain,
                              CUpti_CallbackId cbid, const void* data) {
  cupti_on_api_callback(static_cast<std::uint32_t>(domain), cbid, data);
}

}  // namespace cupti_collector

ApiWatch classify_api(std::string_view function_name) noexcept {
  // The name up to its first '_' ("cudaLaunchKernel_ptsz_v7000" -> "cudaLaunchKernel").
  const std::string_view base = function_name.substr(0, function_name.find('_'));
  struct Rule {
    std::string_view name;
    ApiWatch watch;
  };
  static constexpr Rule kExact[] = {
      {"cuLaunchKernel", ApiWatch::kLaunch},
      {"cuLaunchCooperativeKernel", ApiWatch::kLaunch},
      {"cudaLaunchKernel", ApiWatch::kLaunch},
      {"cudaLaunchCooperativeKernel", ApiWatch::kLaunch},
      {"cuLaunchKernelEx", ApiWatch::kLaunchSecond},
      {"cudaLaunchKernelExC", ApiWatch::kLaunchSecond},
      {"cuModuleLoad", ApiWatch::kLoad},
      {"cuModuleLoadData", ApiWatch::kLoad},
      {"cuModuleLoadDataEx", ApiWatch::kLoad},
      {"cuModuleLoadFatBinary", ApiWatch::kLoad},
      {"cuLibraryLoadData", ApiWatch::kLoad},
      {"cuLibraryLoadFromFile", ApiWatch::kLoad},
      {"cudaLibraryLoadData", ApiWatch::kLoad},
      {"cudaLibraryLoadFromFile", ApiWatch::kLoad},
      {"cuModuleGetFunction", ApiWatch::kDerive},
      {"cuLibraryGetKernel", ApiWatch::kDerive},
      {"cuLibraryGetModule", ApiWatch::kDerive},
      {"cuKernelGetFunction", ApiWatch::kDerive},
      {"cudaLibraryGetKernel", ApiWatch::kDerive},
      {"cuModuleUnload", ApiWatch::kUnload},
      {"cuLibraryUnload", ApiWatch::kUnload},
      {"cudaLibraryUnload", ApiWatch::kUnload},
      {"cuCtxDestroy", ApiWatch::kForgetAll},
      {"cuDevicePrimaryCtxReset", ApiWatch::kForgetAll},
      {"cudaDeviceReset", ApiWatch::kForgetAll},
      {"cuGraphLaunch", ApiWatch::kGraphLaunch},
      {"cudaGraphLaunch", ApiWatch::kGraphLaunch},
  };
  // Whole families: every copy and set variant (HtoD, Async, 2D, Peer...).
  static constexpr std::string_view kCopyOrSetPrefixes[] = {"cuMemcpy", "cuMemset", "cudaMemcpy",
                                                            "cudaMemset"};
  for (const Rule& r : kExact) {
    if (base == r.name) return r.watch;
  }
  for (std::string_view prefix : kCopyOrSetPrefixes) {
    if (base.starts_with(prefix)) return ApiWatch::kCopyOrSet;
  }
  return ApiWatch::kNone;
}

void cupti_on_api_callback(std::uint32_t domain, std::uint32_t cbid, const void* data) noexcept {
  Collector& c = collector();
  if (!c.active.load(std::memory_order_relaxed) || data == nullptr) return;  // relaxed: a hint
  // Only while a session runs (also keeps a forked child, which has none,
  // out of locks its parent's threads may have held).
  const std::uint32_t s = session_word();
  if (s == 0) return;
  // Only allocation throws here (the first call's tables, the handle map
  // growing, a unit's first tag): then this one call is not correlated.
  (void)guarded("correlating a CUDA call", [&] {
    const auto* cb = static_cast<const CUpti_CallbackData*>(data);
    const ApiWatch watch = watch_for(domain, cbid);
    if (watch == ApiWatch::kNone) return;
    if (cb->callbackSite == CUPTI_API_ENTER) {
      GpuCallRole role = GpuCallRole::kOther;
      LaunchTags tags;
      switch (watch) {
        case ApiWatch::kLaunch:
        case ApiWatch::kLaunchSecond:
          role = GpuCallRole::kLaunch;
          tags = tags_of_launch(param(cb, watch == ApiWatch::kLaunch ? 0 : 1), cb->symbolName);
          break;
        case ApiWatch::kLoad: role = GpuCallRole::kLoad; break;
        case ApiWatch::kGraphLaunch: role = GpuCallRole::kGraph; break;
        case ApiWatch::kCopyOrSet: break;
        default: return;  // derive, unload and context teardown act at exit only
      }
      // Counted by the flusher, not here: a shared counter would cost every
      // launching thread a contended atomic.
      (void)emit_gpu_call(s, cb->correlationId, tags.unit, tags.kernel,
                          static_cast<std::uint8_t>(role));
      return;
    }
    if (!call_succeeded(cb)) return;
    switch (watch) {
      case ApiWatch::kLoad: {
        // A module loaded inside a compile unit, or under a LoadScope: that
        // unit built it. The driver may reuse a freed module's handle: what
        // it meant before goes.
        const void* handle = out_handle(cb);
        forget(handle);
        if (UnitState* u = loading_unit_state(); u != nullptr) {
          remember(handle, intern_unit_tag(u->packed_id, u->display.view()), nullptr);
        }
        break;
      }
      case ApiWatch::kDerive: {
        const void* source = param(cb, 1);
        const void* handle = out_handle(cb);
        if (const GpuUnitTag* tag = tag_of(source)) {
          remember(handle, tag, source);
        } else {
          forget(handle);
        }
        break;
      }
      case ApiWatch::kUnload: forget(param(cb, 0)); break;
      case ApiWatch::kForgetAll: forget_all(c); break;
      default: break;
    }
  });
}

}  // namespace jitscope::detail
