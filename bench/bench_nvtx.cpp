// The NVTX cases: a jitscope span with NVTX emission asked for, and other
// libraries' NVTX ranges captured by jitscope. Built with NVTX only
// (bench/CMakeLists.txt adds this file, and the do-nothing NVTX tool that a
// second run uses to measure emission).
#include "bench_cases.hpp"
#include "bench_support.hpp"

#include <jitscope/nvtx.hpp>

#include <benchmark/benchmark.h>
#include <nvtx3/nvToolsExt.h>

#include <cstdint>

namespace jitscope::bench {

// A span with NVTX emission asked for. In a plain run the bench's only NVTX
// tool is jitscope's own capture, so emission stays off (counter
// nvtx_emitting = 0): the cost of asking with no tool listening. With
// NVTX_INJECTION64_PATH=libjitscope_bench_nvtx_null.so it emits (1): the
// cost on jitscope's side of a range pushed and popped in a listening tool.
void BM_SpanNvtx(benchmark::State& state) {
  Measure(state, Mode::kTrace, 2, [](std::uint64_t) {
    JITSCOPE_SPAN("bench.span");
    benchmark::ClobberMemory();
  });
  state.counters["nvtx_emitting"] =
      benchmark::Counter(jitscope::nvtx_status().emitting ? 1 : 0, benchmark::Counter::kAvgThreads);
}

// Another library's NVTX range, captured (static form: the bench's own NVTX
// calls). x_span pairs it with a plain jitscope span.
bool CaptureAttached(benchmark::State& state) {
  nvtxMarkA("bench.init");  // initializes this binary's NVTX copy
  if (jitscope::nvtx_status().captured_instances != 0) return true;
  state.SkipWithError("NVTX capture is not attached (NVTX_INJECTION64_PATH names another tool)");
  for (auto _ : state) {
  }
  return false;
}
// Kept in the ring: the record, its extra slot, the copied name.
void BM_NvtxCapturedRange(benchmark::State& state) {
  if (!CaptureAttached(state)) return;
  const SpanOp span;
  Measure(
      state, Mode::kTrace, kCapturedAsciiRecords,
      [](std::uint64_t) {
        nvtxRangePushA("bench.nvtx");
        nvtxRangePop();
        benchmark::ClobberMemory();
      },
      NoAfter{}, &span, "span");
}
// A registered string in a named domain: the name is not copied.
void BM_NvtxCapturedRegistered(benchmark::State& state) {
  if (!CaptureAttached(state)) return;
  static nvtxDomainHandle_t domain = nvtxDomainCreateA("bench");
  static nvtxStringHandle_t name = nvtxDomainRegisterStringA(domain, "bench.registered");
  nvtxEventAttributes_t a{};
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
  a.message.registered = name;
  const SpanOp span;
  Measure(
      state, Mode::kTrace, 2,
      [&a](std::uint64_t) {
        nvtxDomainRangePushEx(domain, &a);
        nvtxDomainRangePop(domain);
        benchmark::ClobberMemory();
      },
      NoAfter{}, &span, "span");
}
// No session: the capture only keeps push/pop balance.
void BM_NvtxCapturedRangeOff(benchmark::State& state) {
  if (!CaptureAttached(state)) return;
  Measure(state, Mode::kOff, 0, [](std::uint64_t) {
    nvtxRangePushA("bench.nvtx");
    nvtxRangePop();
    benchmark::ClobberMemory();
  });
}

}  // namespace jitscope::bench
