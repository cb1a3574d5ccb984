// Writes a jitscope trace with synthetic GPU tracks and launch flows through
// the real SDK path (the CUPTI collector's callback and buffer-consume
// functions, fed by tests/cupti/fake_cupti.hpp), for the viewer test
// viewer_gpu_flows (gpu_expect.json). Needs no GPU.
//
// usage: gpu_trace_writer <trace.json> [--launch-without-work]
//
// What it records:
//   main thread "main":
//     [0/0] unit slice: cuModuleLoadData (corr 1), cuModuleGetFunction
//                       (corr 2, 3): functions fused_gemm_relu and softmax
//     run_model: cuLaunchKernel x3 (corr 101..103, fused_gemm_relu) and
//                cuMemcpyHtoD (corr 104), all on stream 7
//   thread "worker":
//     worker_step: cuLaunchKernel x2 (corr 201, 202, softmax) on stream 9
//     (--launch-without-work: and corr 203, whose kernel never comes: a
//     call slice with no flow, tests/perfetto/both_forms.cmake)
// Each CUDA call's API slice is [t, t + 5 us], t taken inside the span, so
// the span encloses it; its GPU slice starts later, one at a time per stream.
// Exit 0 on success, 1 when the session could not start or stop or wrote no
// GPU activity.
#include "cupti/fake_cupti.hpp"

#include <jitscope/compile.hpp>
#include <jitscope/detail/hot.hpp>
#include <jitscope/jitscope.hpp>

#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string_view>
#include <thread>
#include <vector>

namespace {

using jitscope::detail::monotonic_ns;
namespace fake = jitscope::testing;

constexpr std::uint64_t kUs = 1000;
constexpr std::uint64_t kApiNs = 5 * kUs;  // each API slice lasts 5 us

enum class Op { kLoad, kGetFunction, kLaunch, kCopy };

// One CUDA call as it happened on a host thread.
struct Call {
  Op op;
  CUpti_CallbackId cbid;
  std::uint32_t correlation;
  std::uint64_t api_start;  // CLOCK_MONOTONIC ns
  std::uint32_t thread;     // gettid() of the caller
  std::uint32_t stream;     // GPU-side ops only
  const char* kernel;       // launches only
};

std::uint32_t os_tid() { return static_cast<std::uint32_t>(::syscall(SYS_gettid)); }

// Waits until CLOCK_MONOTONIC reaches `ns` (spins: the gaps are microseconds).
void wait_until(std::uint64_t ns) {
  while (monotonic_ns() < ns) {
  }
}

// Makes one call through the collector's API callback, as CUPTI would on
// this thread, and notes its API slice [t, t + 5 us]. The caller's span
// stays open until the slice has ended, with a margin on both sides.
void call(std::vector<Call>& out, Op op, std::uint32_t correlation, std::uintptr_t handle,
          std::uint32_t stream = 0, const char* kernel = nullptr) {
  wait_until(monotonic_ns() + 10 * kUs);  // clear of the span's begin
  const std::uint64_t t = monotonic_ns();
  CUpti_CallbackId cbid = 0;
  switch (op) {
    case Op::kLoad:
      fake::load_module(correlation, fake::fake_module(handle));
      cbid = CUPTI_DRIVER_TRACE_CBID_cuModuleLoadData;
      break;
    case Op::kGetFunction:
      fake::get_function(correlation, fake::fake_function(handle), fake::fake_module(0x1000));
      cbid = CUPTI_DRIVER_TRACE_CBID_cuModuleGetFunction;
      break;
    case Op::kLaunch:
      fake::launch_kernel(correlation, fake::fake_function(handle));
      cbid = CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel;
      break;
    case Op::kCopy:
      fake::copy_to_device(correlation);
      cbid = CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoD_v2;
      break;
  }
  out.push_back(Call{op, cbid, correlation, t, os_tid(), stream, kernel});
  wait_until(t + kApiNs + 10 * kUs);  // the API slice ends well inside the span
}

}  // namespace

int main(int argc, char** argv) {
  const bool without_work = argc == 3 && std::string_view(argv[2]) == "--launch-without-work";
  if (argc != 2 && !without_work) {
    std::fprintf(stderr, "usage: %s <trace.json> [--launch-without-work]\n", argv[0]);
    return 2;
  }
  jitscope::detail::cupti_simulate_for_testing(true);
  jitscope::Config cfg;
  cfg.output_path = argv[1];
  // The JITSCOPE_* knobs (docs/configuration.md: JITSCOPE_COMPRESSION, ...)
  // apply (JITSCOPE_TRACE names the file instead of the path above); the
  // fields set below are this program's own.
  if (const jitscope::Status st = jitscope::Config::from_env(&cfg, /*require_trace=*/false); !st) {
    std::fprintf(stderr, "gpu_trace_writer: %s; the defaults apply\n", st.message().c_str());
  }
  cfg.cupti = jitscope::CuptiMode::kOn;
  cfg.nvtx_emit = false;
  cfg.nvtx_capture = false;
  if (auto st = jitscope::start(cfg); !st) {
    std::fprintf(stderr, "gpu_trace_writer: start failed: %s\n", st.message().c_str());
    return 1;
  }
  jitscope::set_thread_name("main");
  jitscope::set_model_name("gpunet");

  constexpr std::uintptr_t kGemm = 0x2001, kSoftmax = 0x2002;
  std::vector<Call> calls;
  {
    // The compile unit that builds the module: the launches are credited to it.
    jitscope::CompileUnitOptions options;
    options.frame = "gpunet_fwd";
    options.graph = "fwd";
    jitscope::CompileUnit unit(options);
    call(calls, Op::kLoad, 1, 0x1000);
    call(calls, Op::kGetFunction, 2, kGemm);
    call(calls, Op::kGetFunction, 3, kSoftmax);
  }

  std::vector<Call> worker_calls;
  constexpr std::uint32_t kNoWork = 203;
  std::thread worker([&worker_calls, without_work] {
    jitscope::set_thread_name("worker");
    JITSCOPE_SPAN("worker_step");
    call(worker_calls, Op::kLaunch, 201, kSoftmax, 9, "softmax");
    call(worker_calls, Op::kLaunch, 202, kSoftmax, 9, "softmax");
    if (without_work) call(worker_calls, Op::kLaunch, kNoWork, kSoftmax, 9, "softmax");
  });
  {
    JITSCOPE_SPAN("run_model");
    for (std::uint32_t i = 0; i < 3; ++i) {
      call(calls, Op::kLaunch, 101 + i, kGemm, 7, "fused_gemm_relu");
    }
    call(calls, Op::kCopy, 104, 0, 7);
  }
  worker.join();
  calls.insert(calls.end(), worker_calls.begin(), worker_calls.end());

  // What CUPTI would hand back in one buffer: every call's driver API record
  // first, then the GPU work. Each GPU op starts 20 us after its call began
  // and waits for the one before it on its stream (no overlap per stream).
  fake::ActivityBuffer buffer;
  for (const Call& c : calls) {
    buffer.api(/*runtime=*/false, c.cbid, c.correlation, c.api_start, c.api_start + kApiNs,
               c.thread);
  }
  std::uint64_t stream_free[2] = {0, 0};  // streams 7 and 9
  for (const Call& c : calls) {
    if ((c.op != Op::kLaunch && c.op != Op::kCopy) || c.correlation == kNoWork) continue;
    std::uint64_t& free_at = stream_free[c.stream == 7 ? 0 : 1];
    const std::uint64_t start = std::max(c.api_start + 20 * kUs, free_at + 2 * kUs);
    const std::uint64_t dur = c.op == Op::kLaunch ? 30 * kUs : 12 * kUs;
    if (c.op == Op::kLaunch) {
      buffer.kernel(c.correlation, start, start + dur, c.stream, c.kernel);
    } else {
      buffer.memcpy(c.correlation, start, start + dur, c.stream, 1 << 20);
    }
    free_at = start + dur;
  }
  buffer.consume();

  jitscope::SessionStats stats;
  if (auto st = jitscope::stop(&stats); !st) {
    std::fprintf(stderr, "gpu_trace_writer: stop failed: %s\n", st.message().c_str());
    return 1;
  }
  jitscope::detail::cupti_simulate_for_testing(false);
  std::printf("gpu_trace_writer: %s: cupti %s, %llu GPU events, %llu flows, %llu unattributed\n",
              stats.output_path.c_str(), stats.cupti_on ? "on" : "off",
              static_cast<unsigned long long>(stats.gpu_events),
              static_cast<unsigned long long>(stats.gpu_flows),
              static_cast<unsigned long long>(stats.gpu_unattributed));
  if (!stats.cupti_on || stats.gpu_events == 0 || stats.write_failed) {
    std::fprintf(stderr, "gpu_trace_writer: no GPU activity was written\n");
    return 1;
  }
  return 0;
}
