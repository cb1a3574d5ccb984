// NVTX without the CUDA toolkit: emission and capture are off; the trace
// writer and the public status still work.
#include "nvtx/captured_names.hpp"
#include "nvtx/nvtx.hpp"

#include <jitscope/nvtx.hpp>

namespace jitscope::detail {

constinit thread_local bool t_nvtx_emitting = false;

void nvtx_emit_prepare() noexcept {}
void nvtx_emit_lock_for_fork() noexcept {}
void nvtx_emit_unlock_after_fork() noexcept {}
bool nvtx_emit_begin_session(const Config&) noexcept { return false; }
void nvtx_emit_forget_static_names() noexcept {}
void nvtx_lock_for_fork() noexcept { lock_captured_names_for_fork(); }
void nvtx_unlock_after_fork() noexcept { unlock_captured_names_after_fork(); }
void nvtx_capture_begin_session(const Config&) noexcept {}
CaptureTotals nvtx_capture_totals() noexcept { return {}; }
bool nvtx_capture_attached_to(const void*) noexcept { return false; }
std::size_t nvtx_capture_instances() noexcept { return 0; }

}  // namespace jitscope::detail

namespace jitscope {
NvtxStatus nvtx_status() noexcept { return {}; }
}  // namespace jitscope

extern "C" int jitscope_nvtx_attach(const void* (*)(std::uint32_t)) noexcept { return 0; }
