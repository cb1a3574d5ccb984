// NVTX without the CUDA toolkit: emission and capture are off; the trace
// writer and the public status still work.
#include "nvtx.hpp"

#include <jitscope/nvtx.hpp>

namespace jitscope::detail {

constinit thread_local bool t_nvtx_emitting = false;

bool nvtx_emit_begin_session(const Config&) noexcept { return false; }
void nvtx_emit_push(const char*, std::string_view, std::uint8_t, std::uint64_t) noexcept {}
void nvtx_emit_pop() noexcept {}
void nvtx_emit_mark(const char*, std::string_view) noexcept {}
void nvtx_emit_thread_name(std::string_view) noexcept {}
void nvtx_capture_begin_session(const Config&) noexcept {}
CaptureTotals nvtx_capture_totals() noexcept { return {}; }
bool nvtx_capture_attached_to(const void*) noexcept { return false; }
std::size_t nvtx_capture_instances() noexcept { return 0; }

}  // namespace jitscope::detail

namespace jitscope {
NvtxStatus nvtx_status() noexcept { return {}; }
}  // namespace jitscope

extern "C" int jitscope_nvtx_attach(const void* (*)(std::uint32_t)) noexcept { return 0; }
