// A stand-in for a GPU library that emits NVTX the way vendor libraries do,
// built as its own shared library (so it has its own copy of NVTX, like
// cuBLAS or NCCL). The capture tests call these and check the trace.
#pragma once

#include <cstdint>

extern "C" {
// nvtxRangePushA("vendor.outer") { nvtxRangePushA("vendor.inner") {} }, `times` times.
void vendor_push_pop(int times);
// In domain "vendorlib": a range with a registered string "vendor.gemm",
// category 7 named "kernels", payload int64 -42; inside it a mark
// "vendor.mark" (registered) and a range with a double payload 2.5.
void vendor_domain_ranges();
// nvtx3::scoped_range("vendor.scoped") around
// nvtx3::scoped_range_in<vendor_domain>("vendor.scoped_in_domain").
void vendor_scoped_ranges();
// nvtxRangeStartA(name): the id, to end with vendor_range_end (any thread).
std::uint64_t vendor_range_start(const char* name);
void vendor_range_end(std::uint64_t id);
// nvtxMarkA(name).
void vendor_mark(const char* name);
// nvtxRangePushW(text) + pop.
void vendor_push_pop_wide(const wchar_t* text);
// nvtxRangePop() with nothing open; returns what NVTX returned.
int vendor_unbalanced_pop();
// nvtxDomainRangePop on "vendorlib" with nothing open there.
int vendor_unbalanced_domain_pop();
// nvtxRangePushA / nvtxRangePop alone (for ranges that cross a session edge).
void vendor_push(const char* name);
void vendor_pop();
// nvtxNameOsThreadA(tid, name).
void vendor_name_thread(std::uint32_t tid, const char* name);
// Domain "vendorlib": push A, push in the default domain B, pop A, pop B
// (NVTX nests per domain, so this is legal).
void vendor_cross_domain();
}
