// Test support for the CUPTI collector without a GPU: activity buffers built
// from the real CUDA 13 record structs (CUPTI walks them with
// cuptiActivityGetNextRecord, which needs no driver), and API callbacks
// called the way CUPTI calls them, with the generated *_params structs.
#pragma once

#include "cupti/cupti.hpp"

#include <cupti.h>

#include <cstdint>
#include <cstring>
#include <memory>

namespace jitscope::testing {

// A buffer of activity records, as CUPTI fills one. References returned by
// add() stay valid for the buffer's life.
class ActivityBuffer {
 public:
  explicit ActivityBuffer(std::size_t capacity = 1 << 16)
      : storage_(new std::uint64_t[capacity / 8]()), capacity_(capacity) {}

  template <class T>
  T& add(CUpti_ActivityKind kind) {
    static_assert(sizeof(T) % 8 == 0, "CUPTI records are 8-byte multiples");
    if (used_ + sizeof(T) > capacity_) std::abort();  // a test sized its buffer wrong
    auto* r = reinterpret_cast<T*>(data() + used_);
    std::memset(static_cast<void*>(r), 0, sizeof(T));
    r->kind = kind;
    used_ += sizeof(T);
    return *r;
  }

  CUpti_ActivityKernel10& kernel(std::uint32_t correlation, std::uint64_t start, std::uint64_t end,
                                 std::uint32_t stream, const char* name) {
    auto& k = add<CUpti_ActivityKernel10>(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    k.correlationId = correlation;
    k.start = start;
    k.end = end;
    k.streamId = stream;
    k.deviceId = 0;
    k.contextId = 1;
    k.name = name;
    k.gridX = 4, k.gridY = 1, k.gridZ = 1;
    k.blockX = 128, k.blockY = 1, k.blockZ = 1;
    k.registersPerThread = 32;
    k.staticSharedMemory = 1024;
    k.dynamicSharedMemory = 512;
    return k;
  }
  CUpti_ActivityAPI& api(bool runtime, CUpti_CallbackId cbid, std::uint32_t correlation,
                         std::uint64_t start, std::uint64_t end, std::uint32_t thread) {
    auto& a =
        add<CUpti_ActivityAPI>(runtime ? CUPTI_ACTIVITY_KIND_RUNTIME : CUPTI_ACTIVITY_KIND_DRIVER);
    a.cbid = cbid;
    a.correlationId = correlation;
    a.start = start;
    a.end = end;
    a.threadId = thread;
    a.processId = 1;
    return a;
  }
  CUpti_ActivityMemcpy6& memcpy(std::uint32_t correlation, std::uint64_t start, std::uint64_t end,
                                std::uint32_t stream, std::uint64_t bytes) {
    auto& m = add<CUpti_ActivityMemcpy6>(CUPTI_ACTIVITY_KIND_MEMCPY);
    m.correlationId = correlation;
    m.start = start;
    m.end = end;
    m.streamId = stream;
    m.bytes = bytes;
    m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
    return m;
  }
  CUpti_ActivityMemset4& memset(std::uint32_t correlation, std::uint64_t start, std::uint64_t end,
                                std::uint32_t stream, std::uint64_t bytes) {
    auto& m = add<CUpti_ActivityMemset4>(CUPTI_ACTIVITY_KIND_MEMSET);
    m.correlationId = correlation;
    m.start = start;
    m.end = end;
    m.streamId = stream;
    m.bytes = bytes;
    return m;
  }
  CUpti_ActivityExternalCorrelation& external(std::uint32_t correlation, std::uint64_t id) {
    auto& x = add<CUpti_ActivityExternalCorrelation>(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION);
    x.externalKind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0;
    x.correlationId = correlation;
    x.externalId = id;
    return x;
  }
  CUpti_ActivityJit2& jit(std::uint32_t correlation, std::uint64_t start, std::uint64_t end,
                          CUpti_ActivityJitOperationType op, std::uint32_t thread) {
    auto& j = add<CUpti_ActivityJit2>(CUPTI_ACTIVITY_KIND_JIT);
    j.correlationId = correlation;
    j.start = start;
    j.end = end;
    j.jitOperationType = op;
    j.jitEntryType = CUPTI_ACTIVITY_JIT_ENTRY_PTX_TO_CUBIN;
    j.threadId = thread;
    j.cachePath = "/tmp/ComputeCache";
    j.cacheSize = 4096;
    return j;
  }
  CUpti_ActivitySynchronization2& sync(std::uint32_t correlation, std::uint64_t start,
                                       std::uint64_t end, std::uint32_t stream) {
    auto& y = add<CUpti_ActivitySynchronization2>(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION);
    y.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE;
    y.correlationId = correlation;
    y.start = start;
    y.end = end;
    y.streamId = stream;
    return y;
  }
  CUpti_ActivityOverhead3& overhead(std::uint64_t start, std::uint64_t end) {
    auto& o = add<CUpti_ActivityOverhead3>(CUPTI_ACTIVITY_KIND_OVERHEAD);
    o.overheadKind = CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH;
    o.objectKind = CUPTI_ACTIVITY_OBJECT_DEVICE;
    o.objectId.dcs.deviceId = 0;
    o.start = start;
    o.end = end;
    return o;
  }

  std::uint8_t* data() noexcept { return reinterpret_cast<std::uint8_t*>(storage_.get()); }
  std::size_t size() const noexcept { return used_; }
  // Through the same function CUPTI's buffer-completed callback calls.
  void consume() { detail::cupti_consume_buffer(data(), used_); }
  void consume_first(std::size_t bytes) { detail::cupti_consume_buffer(data(), bytes); }

 private:
  std::unique_ptr<std::uint64_t[]> storage_;  // 8-byte aligned, as CUPTI requires
  std::size_t capacity_;
  std::size_t used_ = 0;
};

// One API call through the collector's callback, enter then exit, as CUPTI
// makes it on the calling thread. `params` is the call's *_params struct.
inline void call_api(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, std::uint32_t correlation,
                     const void* params, int result = 0, const char* symbol = nullptr) {
  CUpti_CallbackData cb{};
  cb.functionParams = params;
  cb.correlationId = correlation;
  cb.symbolName = symbol;
  int ret = result;
  cb.functionReturnValue = &ret;
  cb.callbackSite = CUPTI_API_ENTER;
  detail::cupti_on_api_callback(domain, cbid, &cb);
  cb.callbackSite = CUPTI_API_EXIT;
  detail::cupti_on_api_callback(domain, cbid, &cb);
}

// Fake driver handles: only their values matter to the collector.
inline CUmodule fake_module(std::uintptr_t v) { return reinterpret_cast<CUmodule>(v); }
inline CUfunction fake_function(std::uintptr_t v) { return reinterpret_cast<CUfunction>(v); }

inline void load_module(std::uint32_t correlation, CUmodule handle, int result = 0) {
  CUmodule out = handle;  // what the driver writes through params.module
  cuModuleLoadData_params p{&out, nullptr};
  call_api(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuModuleLoadData, correlation, &p,
           result);
}
inline void unload_module(std::uint32_t correlation, CUmodule handle) {
  cuModuleUnload_params p{handle};
  call_api(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuModuleUnload, correlation, &p);
}
inline void get_function(std::uint32_t correlation, CUfunction function, CUmodule module) {
  CUfunction out = function;
  cuModuleGetFunction_params p{&out, module, "kernel"};
  call_api(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuModuleGetFunction, correlation,
           &p);
}
// `symbol`: the kernel's name as CUPTI gives it to the launch callback
// (CUpti_CallbackData::symbolName).
inline void launch_kernel(std::uint32_t correlation, CUfunction function,
                          const char* symbol = nullptr) {
  cuLaunchKernel_params p{};
  p.f = function;
  call_api(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, correlation, &p, 0,
           symbol);
}
inline void launch_graph(std::uint32_t correlation) {
  cuGraphLaunch_params p{};
  call_api(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch, correlation, &p);
}
inline void destroy_context(std::uint32_t correlation) {
  cuCtxDestroy_v2_params p{};
  call_api(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuCtxDestroy_v2, correlation, &p);
}
inline void copy_to_device(std::uint32_t correlation) {
  cuMemcpyHtoD_v2_params p{};
  call_api(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoD_v2, correlation, &p);
}

}  // namespace jitscope::testing
