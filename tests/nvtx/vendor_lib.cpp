#include "vendor_lib.h"

#include <nvtx3/nvtx3.hpp>

#include <cstring>

namespace {

struct vendor_domain {
  static constexpr const char* name{"vendorlib"};
};

nvtxDomainHandle_t domain() {
  static nvtxDomainHandle_t d = nvtxDomainCreateA("vendorlib");
  return d;
}

nvtxEventAttributes_t attributes() {
  nvtxEventAttributes_t a;
  std::memset(&a, 0, sizeof a);
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  return a;
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) void vendor_push_pop(int times) {
  for (int i = 0; i < times; ++i) {
    nvtxRangePushA("vendor.outer");
    nvtxRangePushA("vendor.inner");
    nvtxRangePop();
    nvtxRangePop();
  }
}

__attribute__((visibility("default"))) void vendor_domain_ranges() {
  static nvtxStringHandle_t gemm = nvtxDomainRegisterStringA(domain(), "vendor.gemm");
  static nvtxStringHandle_t mark = nvtxDomainRegisterStringA(domain(), "vendor.mark");
  nvtxDomainNameCategoryA(domain(), 7, "kernels");
  nvtxEventAttributes_t a = attributes();
  a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
  a.message.registered = gemm;
  a.category = 7;
  a.payloadType = NVTX_PAYLOAD_TYPE_INT64;
  a.payload.llValue = -42;
  nvtxDomainRangePushEx(domain(), &a);
  nvtxEventAttributes_t m = attributes();
  m.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
  m.message.registered = mark;
  nvtxDomainMarkEx(domain(), &m);
  nvtxEventAttributes_t inner = attributes();
  inner.messageType = NVTX_MESSAGE_TYPE_ASCII;
  inner.message.ascii = "vendor.epilogue";
  inner.payloadType = NVTX_PAYLOAD_TYPE_DOUBLE;
  inner.payload.dValue = 2.5;
  nvtxDomainRangePushEx(domain(), &inner);
  nvtxDomainRangePop(domain());
  nvtxDomainRangePop(domain());
}

__attribute__((visibility("default"))) void vendor_scoped_ranges() {
  nvtx3::scoped_range outer{"vendor.scoped"};
  nvtx3::scoped_range_in<vendor_domain> inner{"vendor.scoped_in_domain"};
}

__attribute__((visibility("default"))) std::uint64_t vendor_range_start(const char* name) {
  return nvtxRangeStartA(name);
}

__attribute__((visibility("default"))) void vendor_range_end(std::uint64_t id) { nvtxRangeEnd(id); }

__attribute__((visibility("default"))) void vendor_mark(const char* name) { nvtxMarkA(name); }

__attribute__((visibility("default"))) void vendor_push_pop_wide(const wchar_t* text) {
  nvtxRangePushW(text);
  nvtxRangePop();
}

__attribute__((visibility("default"))) int vendor_unbalanced_pop() { return nvtxRangePop(); }

__attribute__((visibility("default"))) int vendor_unbalanced_domain_pop() {
  return nvtxDomainRangePop(domain());
}

__attribute__((visibility("default"))) void vendor_push(const char* name) { nvtxRangePushA(name); }
__attribute__((visibility("default"))) void vendor_pop() { nvtxRangePop(); }

__attribute__((visibility("default"))) void vendor_name_thread(std::uint32_t tid,
                                                               const char* name) {
  nvtxNameOsThreadA(tid, name);
}

__attribute__((visibility("default"))) void vendor_cross_domain() {
  nvtxEventAttributes_t a = attributes();
  a.messageType = NVTX_MESSAGE_TYPE_ASCII;
  a.message.ascii = "vendor.cross_a";
  nvtxDomainRangePushEx(domain(), &a);
  nvtxRangePushA("vendor.cross_b");
  nvtxDomainRangePop(domain());
  nvtxRangePop();
}

}  // extern "C"
