// An NVTX tool that does nothing: what emission costs on jitscope's side
// when some tool listens. Run the bench with
//   NVTX_INJECTION64_PATH=<build>/bench/libjitscope_bench_nvtx_null.so
// (docs/performance.md). Nsight does real work per range on top of this.
#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExt.h>

#include <atomic>
#include <cstdint>

namespace {

std::atomic<std::uintptr_t> g_next{1};
int g_domain;

nvtxDomainHandle_t create(const char*) { return reinterpret_cast<nvtxDomainHandle_t>(&g_domain); }
nvtxStringHandle_t register_string(nvtxDomainHandle_t, const char*) {
  return reinterpret_cast<nvtxStringHandle_t>(g_next.fetch_add(1));
}
void name_category(nvtxDomainHandle_t, std::uint32_t, const char*) {}
int push(nvtxDomainHandle_t, const nvtxEventAttributes_t*) { return 0; }
int pop(nvtxDomainHandle_t) { return 0; }
void mark(nvtxDomainHandle_t, const nvtxEventAttributes_t*) {}
void name_thread(std::uint32_t, const char*) {}

template <class F>
void put(NvtxFunctionTable table, unsigned size, unsigned id, F f) {
  if (id < size && table[id] != nullptr) *table[id] = reinterpret_cast<NvtxFunctionPointer>(f);
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int InitializeInjectionNvtx2(
    NvtxGetExportTableFunc_t get) {
  const auto* cb = static_cast<const NvtxExportTableCallbacks*>(get(NVTX_ETID_CALLBACKS));
  if (cb == nullptr) return 0;
  NvtxFunctionTable core2 = nullptr, core = nullptr;
  unsigned core2_size = 0, core_size = 0;
  if (!cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &core2, &core2_size) ||
      !cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &core, &core_size)) {
    return 0;
  }
  put(core2, core2_size, NVTX_CBID_CORE2_DomainCreateA, &create);
  put(core2, core2_size, NVTX_CBID_CORE2_DomainRegisterStringA, &register_string);
  put(core2, core2_size, NVTX_CBID_CORE2_DomainNameCategoryA, &name_category);
  put(core2, core2_size, NVTX_CBID_CORE2_DomainRangePushEx, &push);
  put(core2, core2_size, NVTX_CBID_CORE2_DomainRangePop, &pop);
  put(core2, core2_size, NVTX_CBID_CORE2_DomainMarkEx, &mark);
  put(core, core_size, NVTX_CBID_CORE_NameOsThreadA, &name_thread);
  return 1;
}
