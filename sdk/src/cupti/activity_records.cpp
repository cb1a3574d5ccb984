// The CUPTI collector's record conversion: one CUpti_Activity record (the
// kinds the collector enables, as CUDA 13 lays them out) into a GpuActivity,
// with the names the trace shows for copies, syncs, driver JIT and CUPTI's
// own overhead; and the size CUPTI steps by for each kind, which tells the
// buffer walk (activity_buffers.cpp) whether a buffer's end was cut.
#include "cupti/collector_state.hpp"

#include <string_view>
#include <utility>

namespace jitscope::detail::cupti_collector {

namespace {

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

}  // namespace

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
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: return sizeof(CUpti_ActivityExternalCorrelation);
    case CUPTI_ACTIVITY_KIND_JIT: return sizeof(CUpti_ActivityJit2);
    case CUPTI_ACTIVITY_KIND_OVERHEAD: return sizeof(CUpti_ActivityOverhead3);
    default: return 0;
  }
}

// One record into `out`; false for a kind we do not write.
bool convert_record(const CUpti_Activity* rec, std::vector<GpuActivity>& out) {
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
      a.name =
          api_name(runtime ? CUPTI_CB_DOMAIN_RUNTIME_API : CUPTI_CB_DOMAIN_DRIVER_API, api->cbid);
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
    default: return false;
  }
  out.push_back(std::move(a));
  return true;
}

}  // namespace jitscope::detail::cupti_collector
