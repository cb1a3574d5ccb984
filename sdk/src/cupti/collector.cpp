// The CUPTI collector: activity buffers from a bounded pool, the buffer
// walk, the API callback that correlates calls with jitscope's spans and
// remembers which compile unit loaded which module. See cupti.hpp.
//
// Locks: the pool, the inbox and the handle map each have a mutex held for a
// few operations and never across a CUPTI call. The session's control lock
// (session.cpp) is held while starting and stopping CUPTI; no CUPTI callback
// takes it, so CUPTI calling back into us from there cannot deadlock.
#include "cupti/cupti.hpp"

#include "compile/state.hpp"
#include "ring/producer.hpp"
#include "base/immortal.hpp"
#include "base/log.hpp"
#include "ring/thread_registry.hpp"

#include <cupti.h>  // with the generated *_params structs of every CUDA call

#include <dlfcn.h>
#include <pthread.h>

#include <array>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <unordered_map>

namespace jitscope::detail {

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

struct Counters {
  // relaxed: independent totals, read as a snapshot at session edges.
  std::atomic<std::uint64_t> buffers_completed{0}, records{0}, skipped{0}, unreadable{0},
      truncated{0}, dropped{0}, pool_exhausted{0}, stale{0};
};

struct HandleEntry {
  const GpuUnitTag* tag = nullptr;
  const void* parent = nullptr;  // the module/library/kernel it came from
};

struct Collector {
  Counters counts;
  // Set while a session collects: the API callback writes calls only then.
  std::atomic<bool> active{false};
  std::atomic<bool> simulate{false};

  std::mutex control;  // begin/end; never taken by a CUPTI callback
  // CUPTI is collecting (not simulated); read by the flusher's cupti_flush.
  std::atomic<bool> started{false};
  bool ever_started = false;  // CUPTI ran in this process (a forked child must not use it)
  bool forked_child = false;  // this process is a fork of one where it ran
  bool timestamps_registered = false;
  bool timestamps_failed = false;
  bool buffer_callbacks_registered = false;
  CUpti_SubscriberHandle subscriber = nullptr;
  std::vector<CUpti_ActivityKind> enabled;

  std::mutex pool_mutex;
  std::vector<std::uint8_t*> free_buffers;  // capacity reserved: no allocation when returned
  std::size_t buffer_bytes = 0;
  std::size_t buffer_count = 0;

  std::mutex inbox_mutex;
  std::vector<GpuActivity> inbox;

  std::mutex handles_mutex;
  std::unordered_map<const void*, HandleEntry> handles;  // guarded by handles_mutex
  // Bumped (under handles_mutex) on every change to `handles`, so that a
  // launching thread can trust its own cache without taking the mutex.
  std::atomic<std::uint64_t> handles_generation{1};

  std::once_flag watch_once;
  std::array<std::vector<ApiWatch>, 2> watch;  // [0] runtime, [1] driver, by cbid
  std::array<std::vector<std::string>, 2> names;  // the same, without version suffixes
};

Collector& collector() noexcept { return immortal<Collector>(); }

std::string cupti_error(CUptiResult r) {
  const char* s = nullptr;
  if (cuptiGetResultString(r, &s) != CUPTI_SUCCESS || s == nullptr) {
    return "CUPTI error " + std::to_string(static_cast<int>(r));
  }
  return s;
}

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
      if (cuptiGetCallbackName(domains[d].first, static_cast<CUpti_CallbackId>(cbid), &name) ==
              CUPTI_SUCCESS &&
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

ApiWatch watch_for(std::uint32_t domain, std::uint32_t cbid) {
  const std::size_t d = table_row(domain);
  const auto& table = collector().watch;
  if (d > 1 || cbid >= table[d].size()) return ApiWatch::kNone;
  return table[d][cbid];
}

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

// tag_of for the launch path: a few handles per thread, cached until the map
// changes, so threads launching at once do not all take one mutex.
struct LaunchCache {
  static constexpr std::size_t kWays = 8;
  std::uint64_t generation = 0;  // 0: empty (the map's generation starts at 1)
  const void* handle[kWays] = {};
  const GpuUnitTag* tag[kWays] = {};
};
constinit thread_local LaunchCache t_launch_cache;

const GpuUnitTag* tag_of_launch(const void* handle) {
  if (handle == nullptr) return nullptr;
  LaunchCache& cache = t_launch_cache;
  // acquire: pairs with handles_changed(); an unchanged generation means
  // every cached answer is still the map's.
  const std::uint64_t generation =
      collector().handles_generation.load(std::memory_order_acquire);
  if (cache.generation != generation) {
    cache = LaunchCache{};
    cache.generation = generation;
  }
  const std::size_t way = (reinterpret_cast<std::uintptr_t>(handle) >> 4) % LaunchCache::kWays;
  if (cache.handle[way] == handle) return cache.tag[way];
  // A change after the generation was read gives a newer answer under an
  // older generation: the next call sees the new generation and asks again.
  const GpuUnitTag* tag = tag_of(handle);
  cache.handle[way] = handle;
  cache.tag[way] = tag;
  return tag;
}

void remember(const void* handle, const GpuUnitTag* tag, const void* parent) {
  if (handle == nullptr || tag == nullptr) return;
  Collector& c = collector();
  std::lock_guard<std::mutex> lock(c.handles_mutex);
  c.handles[handle] = HandleEntry{tag, parent};
  handles_changed(c);
}

// Every handle (a context destroyed, a new session): `handles_mutex` not held.
void forget_all(Collector& c) {
  std::lock_guard<std::mutex> lock(c.handles_mutex);
  c.handles.clear();
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

// ---- buffers ----

void CUPTIAPI on_buffer_requested(std::uint8_t** buffer, std::size_t* size,
                                  std::size_t* max_records) {
  cupti_buffer_requested(buffer, size, max_records);
}

void CUPTIAPI on_buffer_completed(CUcontext context, std::uint32_t stream, std::uint8_t* buffer,
                                  std::size_t size, std::size_t valid) {
  cupti_buffer_completed(context, stream, buffer, size, valid);
}

// Allocates the pool once per process; a later session's other sizes are not applied.
bool ensure_pool(const Config& config, std::string& why) {
  Collector& c = collector();
  std::lock_guard<std::mutex> lock(c.pool_mutex);
  if (c.buffer_count != 0) {
    if (c.buffer_bytes != config.cupti_buffer_bytes || c.buffer_count != config.cupti_buffers) {
      log_unique("the CUPTI buffer pool is sized once per process; keeping " +
               std::to_string(c.buffer_count) + " x " + std::to_string(c.buffer_bytes) + " bytes");
    }
    return true;
  }
  c.free_buffers.reserve(config.cupti_buffers);
  for (std::size_t i = 0; i < config.cupti_buffers; ++i) {
    // 8-byte alignment is CUPTI's requirement; pages are touched only when used.
    void* p = std::aligned_alloc(8, config.cupti_buffer_bytes);
    if (p == nullptr) {
      for (std::uint8_t* b : c.free_buffers) std::free(b);
      c.free_buffers.clear();
      why = "cannot allocate the CUPTI buffer pool (" + std::to_string(config.cupti_buffers) +
            " x " + std::to_string(config.cupti_buffer_bytes) + " bytes)";
      return false;
    }
    c.free_buffers.push_back(static_cast<std::uint8_t*>(p));
  }
  c.buffer_bytes = config.cupti_buffer_bytes;
  c.buffer_count = config.cupti_buffers;
  return true;
}

// ---- the record walk ----

std::string_view memcpy_kind(std::uint8_t k) {
  switch (k) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD: return "HtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH: return "DtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOA: return "HtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOH: return "AtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOA: return "AtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOD: return "AtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOA: return "DtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD: return "DtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH: return "HtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP: return "PtoP";
    default: return "unknown";
  }
}

std::string_view sync_name(CUpti_ActivitySynchronizationType t) {
  switch (t) {
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE: return "sync: event";
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT: return "sync: stream wait event";
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE: return "sync: stream";
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE: return "sync: context";
    default: return "sync";
  }
}

std::string_view jit_name(CUpti_ActivityJitOperationType op) {
  switch (op) {
    case CUPTI_ACTIVITY_JIT_OPERATION_CACHE_LOAD: return "driver JIT: cache load";
    case CUPTI_ACTIVITY_JIT_OPERATION_CACHE_STORE: return "driver JIT: cache store";
    case CUPTI_ACTIVITY_JIT_OPERATION_COMPILE: return "driver JIT: compile";
    default: return "driver JIT";
  }
}

std::string_view overhead_name(CUpti_ActivityOverheadKind k) {
  switch (k) {
    case CUPTI_ACTIVITY_OVERHEAD_DRIVER_COMPILER: return "CUPTI overhead: driver compiler";
    case CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH: return "CUPTI overhead: buffer flush";
    case CUPTI_ACTIVITY_OVERHEAD_CUPTI_INSTRUMENTATION: return "CUPTI overhead: instrumentation";
    case CUPTI_ACTIVITY_OVERHEAD_CUPTI_RESOURCE: return "CUPTI overhead: resource";
    case CUPTI_ACTIVITY_OVERHEAD_RUNTIME_TRIGGERED_MODULE_LOADING:
      return "CUPTI overhead: module loading";
    case CUPTI_ACTIVITY_OVERHEAD_LAZY_FUNCTION_LOADING: return "CUPTI overhead: lazy loading";
    case CUPTI_ACTIVITY_OVERHEAD_COMMAND_BUFFER_FULL: return "CUPTI overhead: command buffer full";
    case CUPTI_ACTIVITY_OVERHEAD_ACTIVITY_BUFFER_REQUEST: return "CUPTI overhead: buffer request";
    default: return "CUPTI overhead";
  }
}

std::string api_name(CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
  const std::size_t d = table_row(domain);
  const auto& names = collector().names;
  if (d <= 1 && cbid < names[d].size() && !names[d][cbid].empty()) return names[d][cbid];
  return (domain == CUPTI_CB_DOMAIN_RUNTIME_API ? "cuda API " : "cu API ") + std::to_string(cbid);
}

// The size CUPTI steps by for the kinds this walk reads (CUDA 13 structs);
// 0 for others.
std::size_t record_size(CUpti_ActivityKind kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: return sizeof(CUpti_ActivityKernel10);
    case CUPTI_ACTIVITY_KIND_MEMCPY: return sizeof(CUpti_ActivityMemcpy6);
    case CUPTI_ACTIVITY_KIND_MEMSET: return sizeof(CUpti_ActivityMemset4);
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER: return sizeof(CUpti_ActivityAPI);
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: return sizeof(CUpti_ActivitySynchronization2);
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION:
      return sizeof(CUpti_ActivityExternalCorrelation);
    case CUPTI_ACTIVITY_KIND_JIT: return sizeof(CUpti_ActivityJit2);
    case CUPTI_ACTIVITY_KIND_OVERHEAD: return sizeof(CUpti_ActivityOverhead3);
    default: return 0;
  }
}

// Where and when GPU work ran: the fields kernel, memcpy and memset records share.
template <class Record>
void place(GpuActivity& a, const Record* r) {
  a.start = r->start;
  a.end = r->end;
  a.device = r->deviceId;
  a.context = r->contextId;
  a.stream = r->streamId;
  a.correlation = r->correlationId;
}

// One record into `out`; false for a kind we do not write.
bool convert(const CUpti_Activity* rec, std::vector<GpuActivity>& out) {
  GpuActivity a;
  switch (rec->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
      const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(rec);
      a.kind = GpuKind::kKernel;
      place(a, k);
      a.grid[0] = k->gridX, a.grid[1] = k->gridY, a.grid[2] = k->gridZ;
      a.block[0] = k->blockX, a.block[1] = k->blockY, a.block[2] = k->blockZ;
      a.registers = k->registersPerThread;
      a.shared_memory = static_cast<std::uint32_t>(k->staticSharedMemory + k->dynamicSharedMemory);
      a.name = k->name != nullptr ? k->name : "kernel";
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
      const auto* m = reinterpret_cast<const CUpti_ActivityMemcpy6*>(rec);
      a.kind = GpuKind::kMemcpy;
      place(a, m);
      a.bytes = m->bytes;
      a.detail = m->copyKind;
      a.name = "Memcpy " + std::string(memcpy_kind(m->copyKind));
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
      const auto* m = reinterpret_cast<const CUpti_ActivityMemset4*>(rec);
      a.kind = GpuKind::kMemset;
      place(a, m);
      a.bytes = m->bytes;
      a.name = "Memset";
      break;
    }
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER: {
      const auto* api = reinterpret_cast<const CUpti_ActivityAPI*>(rec);
      const bool runtime = rec->kind == CUPTI_ACTIVITY_KIND_RUNTIME;
      a.kind = runtime ? GpuKind::kRuntimeApi : GpuKind::kDriverApi;
      a.start = api->start;
      a.end = api->end;
      a.thread = api->threadId;
      a.correlation = api->correlationId;
      a.detail = api->cbid;
      a.name = api_name(runtime ? CUPTI_CB_DOMAIN_RUNTIME_API : CUPTI_CB_DOMAIN_DRIVER_API,
                        api->cbid);
      break;
    }
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: {
      const auto* s = reinterpret_cast<const CUpti_ActivitySynchronization2*>(rec);
      a.kind = GpuKind::kSync;
      a.start = s->start;
      a.end = s->end;
      a.context = s->contextId;
      a.stream = s->streamId;
      a.correlation = s->correlationId;
      a.detail = static_cast<std::uint32_t>(s->type);
      a.name = sync_name(s->type);
      break;
    }
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
      const auto* x = reinterpret_cast<const CUpti_ActivityExternalCorrelation*>(rec);
      a.kind = GpuKind::kExternalCorrelation;
      a.correlation = x->correlationId;
      a.external_id = x->externalId;
      a.detail = static_cast<std::uint32_t>(x->externalKind);
      break;
    }
    case CUPTI_ACTIVITY_KIND_JIT: {
      const auto* j = reinterpret_cast<const CUpti_ActivityJit2*>(rec);
      a.kind = GpuKind::kJit;
      a.start = j->start;
      a.end = j->end;
      a.device = j->deviceId;
      a.correlation = j->correlationId;
      a.thread = j->threadId;
      a.detail = static_cast<std::uint32_t>(j->jitOperationType);
      a.detail2 = static_cast<std::uint32_t>(j->jitEntryType);
      a.bytes = j->cacheSize;
      a.name = jit_name(j->jitOperationType);
      if (j->cachePath != nullptr) a.text = j->cachePath;
      break;
    }
    case CUPTI_ACTIVITY_KIND_OVERHEAD: {
      const auto* o = reinterpret_cast<const CUpti_ActivityOverhead3*>(rec);
      a.kind = GpuKind::kOverhead;
      a.start = o->start;
      a.end = o->end;
      a.correlation = o->correlationId;
      a.detail = static_cast<std::uint32_t>(o->overheadKind);
      a.detail2 = static_cast<std::uint32_t>(o->objectKind);
      if (o->objectKind == CUPTI_ACTIVITY_OBJECT_THREAD ||
          o->objectKind == CUPTI_ACTIVITY_OBJECT_PROCESS) {
        a.thread = o->objectId.pt.threadId;
      } else {
        a.device = o->objectId.dcs.deviceId;
      }
      a.name = overhead_name(o->overheadKind);
      break;
    }
    default:
      return false;
  }
  out.push_back(std::move(a));
  return true;
}

// ---- the API callback ----

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

void CUPTIAPI on_api_callback(void* /*userdata*/, CUpti_CallbackDomain domain,
                              CUpti_CallbackId cbid, const void* data) {
  cupti_on_api_callback(static_cast<std::uint32_t>(domain), cbid, data);
}

std::uint64_t monotonic_now() noexcept { return monotonic_ns(); }

uint64_t CUPTIAPI timestamp_callback() { return monotonic_now(); }

// Paired reads of CUPTI's clock between two CLOCK_MONOTONIC reads; the
// tightest pair fixes the offset (both clocks count ns: slope 1). False if
// CUPTI's clock could not be read at all.
bool fit_linear_clock(GpuClock& clock) {
  clock.kind = GpuClock::Kind::kLinear;
  std::uint64_t best = ~std::uint64_t{0};
  for (int i = 0; i < 64; ++i) {
    const std::uint64_t before = monotonic_now();
    std::uint64_t cupti = 0;
    if (cuptiGetTimestamp(&cupti) != CUPTI_SUCCESS) continue;
    const std::uint64_t after = monotonic_now();
    if (after - before < best) {
      best = after - before;
      clock.cupti_ref = cupti;
      clock.mono_ref = before + (after - before) / 2;
    }
  }
  clock.slope = 1.0;
  clock.uncertainty_ns = (best + 1) / 2;
  return best != ~std::uint64_t{0};
}

// CUPTI_ACTIVITY_KIND_<name> for the kinds the collector enables.
std::string_view kind_name(CUpti_ActivityKind k) {
  switch (k) {
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: return "CONCURRENT_KERNEL";
    case CUPTI_ACTIVITY_KIND_MEMCPY: return "MEMCPY";
    case CUPTI_ACTIVITY_KIND_MEMSET: return "MEMSET";
    case CUPTI_ACTIVITY_KIND_RUNTIME: return "RUNTIME";
    case CUPTI_ACTIVITY_KIND_DRIVER: return "DRIVER";
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: return "SYNCHRONIZATION";
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: return "EXTERNAL_CORRELATION";
    case CUPTI_ACTIVITY_KIND_JIT: return "JIT";
    case CUPTI_ACTIVITY_KIND_OVERHEAD: return "OVERHEAD";
    default: return "OTHER";
  }
}

constexpr CUpti_ActivityKind kRequiredKind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
constexpr CUpti_ActivityKind kOptionalKinds[] = {
    CUPTI_ACTIVITY_KIND_MEMCPY,          CUPTI_ACTIVITY_KIND_MEMSET,
    CUPTI_ACTIVITY_KIND_RUNTIME,         CUPTI_ACTIVITY_KIND_DRIVER,
    CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION,
    CUPTI_ACTIVITY_KIND_JIT,             CUPTI_ACTIVITY_KIND_OVERHEAD,
};

// Undoes a partial start; `c.control` held.
void stop_cupti(Collector& c) {
  for (CUpti_ActivityKind k : c.enabled) (void)cuptiActivityDisable(k);
  c.enabled.clear();
  if (c.subscriber != nullptr) {
    (void)cuptiUnsubscribe(c.subscriber);
    c.subscriber = nullptr;
  }
  c.started.store(false, std::memory_order_relaxed);
}

CuptiSessionState off(std::string reason) noexcept {
  CuptiSessionState s;
  try {
    s.reason = std::move(reason);
    log_unique("CUPTI off: " + s.reason);  // once per process per reason
  } catch (...) {
    log_line("CUPTI off: out of memory");
  }
  return s;
}

}  // namespace

void cupti_buffer_requested(std::uint8_t** buffer, std::size_t* size,
                            std::size_t* max_records) noexcept {
  Collector& c = collector();
  *max_records = 0;  // as many as fit
  std::lock_guard<std::mutex> lock(c.pool_mutex);
  if (c.free_buffers.empty()) {
    // CUPTI drops records until a buffer comes back; it counts them, we count this.
    *buffer = nullptr;
    *size = 0;
    c.counts.pool_exhausted.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  *buffer = c.free_buffers.back();
  c.free_buffers.pop_back();
  *size = c.buffer_bytes;
}

void cupti_buffer_completed(void* context, std::uint32_t stream, std::uint8_t* buffer,
                            std::size_t /*size*/, std::size_t valid) noexcept {
  if (buffer == nullptr) return;
  cupti_consume_buffer(buffer, valid);
  std::size_t dropped = 0;
  if (cuptiActivityGetNumDroppedRecords(static_cast<CUcontext>(context), stream, &dropped) ==
      CUPTI_SUCCESS) {
    cupti_count_dropped(dropped);
  }
  Collector& c = collector();
  std::lock_guard<std::mutex> lock(c.pool_mutex);
  c.free_buffers.push_back(buffer);  // capacity reserved for every pool buffer: no allocation
}

void cupti_count_dropped(std::size_t records) noexcept {
  if (records != 0) collector().counts.dropped.fetch_add(records, std::memory_order_relaxed);
}

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
  try {
    const auto* cb = static_cast<const CUpti_CallbackData*>(data);
    const ApiWatch watch = watch_for(domain, cbid);
    if (watch == ApiWatch::kNone) return;
    if (cb->callbackSite == CUPTI_API_ENTER) {
      GpuCallRole role = GpuCallRole::kOther;
      const GpuUnitTag* tag = nullptr;
      switch (watch) {
        case ApiWatch::kLaunch:
        case ApiWatch::kLaunchSecond:
          role = GpuCallRole::kLaunch;
          tag = tag_of_launch(param(cb, watch == ApiWatch::kLaunch ? 0 : 1));
          break;
        case ApiWatch::kLoad: role = GpuCallRole::kLoad; break;
        case ApiWatch::kGraphLaunch: role = GpuCallRole::kGraph; break;
        case ApiWatch::kCopyOrSet: break;
        default: return;  // derive, unload and context teardown act at exit only
      }
      // Counted by the flusher, not here: a shared counter would cost every
      // launching thread a contended atomic.
      (void)emit_gpu_call(s, cb->correlationId, tag, static_cast<std::uint8_t>(role));
      return;
    }
    if (!call_succeeded(cb)) return;
    switch (watch) {
      case ApiWatch::kLoad: {
        // A module loaded inside a compile unit: that unit built it. The
        // driver may reuse a freed module's handle: what it meant before goes.
        const void* handle = out_handle(cb);
        forget(handle);
        if (UnitState* u = current_unit_state(); u != nullptr) {
          remember(handle, intern_unit_tag(u->packed_id, u->display), nullptr);
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
  } catch (...) {
    log_unique("out of memory in the CUPTI callback; a call is not correlated");
  }
}

void cupti_consume_buffer(std::uint8_t* buffer, std::size_t valid) noexcept {
  Collector& c = collector();
  try {
    std::vector<GpuActivity> out;
    std::uint64_t skipped = 0;
    std::size_t known_end = 0;  // where the last record of a known size ended
    bool end_known = true;
    CUpti_Activity* rec = nullptr;
    for (;;) {
      const CUptiResult r = cuptiActivityGetNextRecord(buffer, valid, &rec);
      if (r == CUPTI_SUCCESS) {
        const std::size_t size = record_size(rec->kind);
        end_known = size != 0;
        known_end = static_cast<std::size_t>(reinterpret_cast<std::uint8_t*>(rec) - buffer) + size;
        if (!convert(rec, out)) ++skipped;
        continue;
      }
      if (r == CUPTI_ERROR_MAX_LIMIT_REACHED) {
        // The end; bytes left after the last whole record are a cut one.
        if (end_known && known_end < valid) c.counts.truncated.fetch_add(1, std::memory_order_relaxed);
      } else {
        // CUPTI cannot size this record (a kind it does not know): the rest
        // of the buffer cannot be walked.
        c.counts.unreadable.fetch_add(1, std::memory_order_relaxed);
      }
      break;
    }
    c.counts.records.fetch_add(out.size(), std::memory_order_relaxed);
    c.counts.skipped.fetch_add(skipped, std::memory_order_relaxed);
    c.counts.buffers_completed.fetch_add(1, std::memory_order_relaxed);
    if (out.empty()) return;
    std::lock_guard<std::mutex> lock(c.inbox_mutex);
    if (c.inbox.empty()) {
      c.inbox.swap(out);
    } else {
      c.inbox.insert(c.inbox.end(), std::make_move_iterator(out.begin()),
                     std::make_move_iterator(out.end()));
    }
  } catch (...) {
    log_unique("out of memory reading a CUPTI buffer; its records are lost");
  }
}

void take_gpu_activities(std::vector<GpuActivity>& out) {
  Collector& c = collector();
  std::lock_guard<std::mutex> lock(c.inbox_mutex);
  out.swap(c.inbox);
  c.inbox.clear();
}

GpuCollectorCounts cupti_counts() noexcept {
  const Counters& k = collector().counts;
  GpuCollectorCounts out;
  out.buffers_completed = k.buffers_completed.load(std::memory_order_relaxed);
  out.records = k.records.load(std::memory_order_relaxed);
  out.records_skipped = k.skipped.load(std::memory_order_relaxed);
  out.records_unreadable = k.unreadable.load(std::memory_order_relaxed);
  out.buffers_truncated = k.truncated.load(std::memory_order_relaxed);
  out.cupti_dropped = k.dropped.load(std::memory_order_relaxed);
  out.pool_exhausted = k.pool_exhausted.load(std::memory_order_relaxed);
  out.records_stale = k.stale.load(std::memory_order_relaxed);
  return out;
}

void cupti_lock_for_fork() noexcept {
  Collector& c = collector();
  c.pool_mutex.lock();
  c.inbox_mutex.lock();
  c.handles_mutex.lock();
  lock_unit_tags_for_fork();
}

void cupti_unlock_after_fork(bool child) noexcept {
  Collector& c = collector();
  if (child) {
    // CUPTI's state is the parent's: the child neither stops nor uses it.
    c.active.store(false, std::memory_order_relaxed);
    c.started.store(false, std::memory_order_relaxed);
    c.subscriber = nullptr;
    c.enabled.clear();
    c.forked_child = c.forked_child || c.ever_started;
    c.inbox.clear();
  }
  unlock_unit_tags_after_fork();
  c.handles_mutex.unlock();
  c.inbox_mutex.unlock();
  c.pool_mutex.unlock();
}

void cupti_simulate_for_testing(bool on) noexcept {
  collector().simulate.store(on, std::memory_order_relaxed);
}

CuptiSessionState cupti_begin_session(const Config& config) noexcept {
  Collector& c = collector();
  if (config.cupti == CuptiMode::kOff) {
    CuptiSessionState s;
    try {
      s.reason = std::string(kCuptiOffByConfig);
    } catch (...) {
    }
    return s;
  }
  std::lock_guard<std::mutex> lock(c.control);
  try {
    {
      std::lock_guard<std::mutex> inbox(c.inbox_mutex);
      c.inbox.clear();  // records a stopped session left behind
    }
    forget_all(c);  // unloads between sessions were not seen: handles may have been reused
    if (c.simulate.load(std::memory_order_relaxed)) {
      std::string why;
      if (!ensure_pool(config, why)) return off(why);
      CuptiSessionState s;
      s.on = true;
      s.kinds.emplace_back(kind_name(kRequiredKind));
      for (CUpti_ActivityKind k : kOptionalKinds) s.kinds.emplace_back(kind_name(k));
      c.active.store(true, std::memory_order_relaxed);
      return s;
    }
    if (c.forked_child) {
      return off("this process is a fork of one that ran CUPTI; a forked child does not collect");
    }
    if (config.cupti == CuptiMode::kAuto) {
      // CUPTI would load the driver itself; asking first keeps the reason clear.
      void* driver = ::dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
      if (driver == nullptr) {
        const char* e = ::dlerror();
        return off(std::string("no CUDA driver (") + (e != nullptr ? e : "libcuda.so.1 not found") +
                   ")");
      }
      // Kept loaded: CUPTI uses it.
    }
    std::string why;
    if (!ensure_pool(config, why)) return off(why);
    if (!c.timestamps_registered && !c.timestamps_failed) {
      // Before any kind is enabled, as CUPTI requires.
      if (cuptiActivityRegisterTimestampCallback(timestamp_callback) == CUPTI_SUCCESS) {
        c.timestamps_registered = true;
      } else {
        c.timestamps_failed = true;
      }
    }
    if (!c.buffer_callbacks_registered) {
      const CUptiResult r = cuptiActivityRegisterCallbacks(on_buffer_requested, on_buffer_completed);
      if (r != CUPTI_SUCCESS) return off("cuptiActivityRegisterCallbacks: " + cupti_error(r));
      c.buffer_callbacks_registered = true;
    }
    CUptiResult r = cuptiSubscribe(&c.subscriber, on_api_callback, nullptr);
    if (r != CUPTI_SUCCESS) {
      c.subscriber = nullptr;
      std::string reason = "cuptiSubscribe: " + cupti_error(r);
      if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
        reason += " (another CUPTI client, such as Nsight Systems or a profiler, holds it)";
      } else if (r == CUPTI_ERROR_UNKNOWN) {
        reason += " (no usable CUDA driver: CUPTI could not load libcuda.so.1)";
      }
      return off(reason);
    }
    // Subscribed, so CUPTI works here. System thread ids in API and JIT records: the ids
    // jitscope's threads have.
    if (const CUptiResult t = cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
        t != CUPTI_SUCCESS) {
      log_unique("CUPTI: cuptiSetThreadIdType(SYSTEM): " + cupti_error(t) +
                 "; CUDA calls may land on tracks of their own");
    }
    for (CUpti_CallbackDomain domain : {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_CB_DOMAIN_DRIVER_API}) {
      const std::size_t n = domain == CUPTI_CB_DOMAIN_RUNTIME_API
                                ? static_cast<std::size_t>(CUPTI_RUNTIME_TRACE_CBID_SIZE)
                                : static_cast<std::size_t>(CUPTI_DRIVER_TRACE_CBID_SIZE);
      for (std::size_t cbid = 1; cbid < n; ++cbid) {
        if (watch_for(domain, static_cast<std::uint32_t>(cbid)) == ApiWatch::kNone) continue;
        (void)cuptiEnableCallback(1, c.subscriber, domain, static_cast<CUpti_CallbackId>(cbid));
      }
    }
    r = cuptiActivityEnable(kRequiredKind);
    if (r != CUPTI_SUCCESS) {
      stop_cupti(c);
      std::string reason = "cuptiActivityEnable(CONCURRENT_KERNEL): " + cupti_error(r);
      if (r == CUPTI_ERROR_UNKNOWN) reason += " (no usable CUDA driver?)";
      return off(reason);
    }
    c.enabled.push_back(kRequiredKind);
    for (CUpti_ActivityKind k : kOptionalKinds) {
      const CUptiResult kr = cuptiActivityEnable(k);
      if (kr == CUPTI_SUCCESS) {
        c.enabled.push_back(k);
      } else {
        log_unique("CUPTI activity kind " + std::string(kind_name(k)) + " unavailable: " +
                   cupti_error(kr) + "; the others are collected (see jitscope_session.cupti.kinds)");
      }
    }
    CuptiSessionState s;
    if (!c.timestamps_registered && !fit_linear_clock(s.clock)) {
      // Neither our clock in CUPTI's records nor a way to map CUPTI's onto ours.
      stop_cupti(c);
      return off("CUPTI refused the timestamp callback and cuptiGetTimestamp failed: "
                 "GPU times could not be put on the trace's clock");
    }
    c.started.store(true, std::memory_order_relaxed);  // relaxed: same session, set before the flusher starts
    c.ever_started = true;
    s.on = true;
    for (CUpti_ActivityKind k : c.enabled) s.kinds.emplace_back(kind_name(k));
    c.active.store(true, std::memory_order_relaxed);
    return s;
  } catch (...) {
    if (c.subscriber != nullptr) stop_cupti(c);  // a partial start: undone (control is held)
    return off("out of memory starting the collector");
  }
}

void cupti_flush(bool forced) noexcept {
  Collector& c = collector();
  // relaxed: begin set it before this session's flusher thread started.
  if (!c.started.load(std::memory_order_relaxed)) return;
  (void)cuptiActivityFlushAll(forced ? CUPTI_ACTIVITY_FLAG_FLUSH_FORCED : 0);
}

void cupti_end_session() noexcept {
  Collector& c = collector();
  std::lock_guard<std::mutex> lock(c.control);
  c.active.store(false, std::memory_order_relaxed);
  if (!c.started.load(std::memory_order_relaxed)) return;
  stop_cupti(c);
  // The flusher's final cycle took everything up to its forced flush; what
  // CUPTI still holds is not this session's. Flushed now and discarded, so
  // the next session does not get it. buffer_completed takes no lock held here.
  (void)cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  std::lock_guard<std::mutex> inbox(c.inbox_mutex);
  c.counts.stale.fetch_add(c.inbox.size(), std::memory_order_relaxed);
  c.inbox.clear();
}

}  // namespace jitscope::detail
