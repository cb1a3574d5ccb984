// NVTX capture in its static form: no NVTX_INJECTION64_PATH (ctest unsets
// it), so only NVTX calls compiled into this executable reach jitscope, via
// the InitializeInjectionNvtx2_fnptr hook that linking jitscope defines. The
// vendor library keeps its own NVTX copy, which finds no tool: its ranges are
// not captured (the documented limit of the static form).
//
// Not covered here: the injection library (nvtx_capture_test), emission
// (nvtx_emit_test).
#include "nvtx/vendor_lib.h"
#include "trace_support.hpp"

#include <jitscope/nvtx.hpp>

#include <nvtx3/nvtx3.hpp>

#include <cstdlib>

namespace {

using jitscope::testing::load_trace;
using jitscope::testing::ScopedSession;
using jitscope::testing::test_config;
using nlohmann::json;

std::size_t count(const json& trace, const std::string& ph, const std::string& name) {
  std::size_t n = 0;
  for (const auto& e : trace) n += e.value("ph", "") == ph && e.value("name", "") == name;
  return n;
}

TEST(NvtxStaticCapture, ThisBinarysRangesAreCapturedOthersAreNot) {
  ASSERT_EQ(std::getenv("NVTX_INJECTION64_PATH"), nullptr) << "run without the variable";
  ScopedSession s(test_config("nvtx_static"));
  ASSERT_TRUE(s.status().ok());
  {
    nvtx3::scoped_range outer{"static.outer"};
    nvtxRangePushA("static.inner");
    nvtxMarkA("static.mark");
    nvtxRangePop();
  }
  vendor_push_pop(2);  // another shared library: out of the static form's reach
  const auto stats = s.finish();
  const json trace = load_trace(s.path());
  EXPECT_EQ(count(trace, "X", "static.outer"), 1u);
  EXPECT_EQ(count(trace, "X", "static.inner"), 1u);
  EXPECT_EQ(count(trace, "I", "static.mark"), 1u);
  EXPECT_EQ(count(trace, "X", "vendor.outer"), 0u);
  EXPECT_EQ(stats.nvtx_captured, 3u);
  EXPECT_EQ(jitscope::nvtx_status().captured_instances, 1u);
}

TEST(NvtxStaticCapture, EmissionSeesItsOwnCaptureAndStaysOff) {
  // jitscope's NVTX copy is this executable's, and its only tool is
  // jitscope's capture: emitting would only feed spans back to ourselves.
  ScopedSession s(test_config("nvtx_static_emit"));
  ASSERT_TRUE(s.status().ok());
  EXPECT_FALSE(jitscope::nvtx_status().emitting);
  { JITSCOPE_SPAN("static.span"); }
  const auto stats = s.finish();
  EXPECT_FALSE(stats.nvtx_emitted);
  const json trace = load_trace(s.path());
  EXPECT_EQ(count(trace, "X", "static.span"), 1u);  // once, as a jitscope span
}

}  // namespace
