// The compile-unit C API (jitscope/compile.h) driven from C: records,
// phases ended by handle and out of order, a worker attached to the unit,
// span handles, NULL safety.
#include "trace_support.hpp"

#include <jitscope/compile.hpp>

#include <algorithm>
#include <fstream>

extern "C" int jitscope_c_compile_scenario(void);

namespace jitscope::testing {
namespace {

using nlohmann::json;

TEST(CCompileApi, AJitsHooksInCRecordUnitsPhasesAndWorkers) {
  reset_compile_state();
  Config cfg = test_config("c_compile_api");
  cfg.metrics_path = temp_path("c_compile_api.metrics");
  cfg.overflow = OverflowPolicy::kBlock;
  ScopedSession session(cfg);
  ASSERT_TRUE(session.status().ok()) << session.status().message();
  ASSERT_EQ(jitscope_c_compile_scenario(), 0);
  (void)session.finish();

  const std::vector<json> records = jitscope::testing::read_json_lines(cfg.metrics_path);
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0]["compile_id"], "0/0");
  EXPECT_EQ(records[1]["compile_id"], "0/1");
  for (const json& r : records) {
    EXPECT_EQ(r["kernels"], 3);
    EXPECT_EQ(r["occupancy"], 0.5);
    EXPECT_EQ(r["arch"], "sm_90");
    EXPECT_EQ(r["fast_math"], true);  // a JSON bool, as CompileUnit::set(key, true)
    EXPECT_EQ(r["caches"]["cache"]["misses"], 1) << r.dump();
    EXPECT_EQ(r["caches"]["cache"]["hits"], 1) << r.dump();
    EXPECT_EQ(r["caches"]["ptx"]["misses"], 1) << r.dump();
    EXPECT_EQ(r["caches"]["ptx"]["miss_keys"], json::array({"source=s1;options="})) << r.dump();
    ASSERT_EQ(r["artifacts"].size(), 1u) << r.dump();
    EXPECT_EQ(read_file(r["artifacts"][0]["path"]), ".version 7.8");
    EXPECT_GE(r["c_codegen_us"].get<long>(), 2000);
  }
  // The 2 ms between the hooks, charged once: exclusive phases of one column,
  // ended out of order, sum to the time they cover, which is the outer one's
  // (duration_us) and the few µs the inner one ran on after it; counted
  // twice it would be 2 ms more. The first unit also has its attached
  // worker's 1 ms phase, which ran beside it (not in duration_us).
  const long codegen[2] = {records[0]["c_codegen_us"], records[1]["c_codegen_us"]};
  const long duration[2] = {records[0]["duration_us"], records[1]["duration_us"]};
  EXPECT_GE(codegen[1] + 2, duration[1]) << records[1].dump();
  EXPECT_GE(codegen[0], duration[0] + 1000) << records[0].dump();
  EXPECT_FALSE(records[0].contains("fail_type"));
  EXPECT_EQ(records[1]["fail_type"], "PtxasError");

  const json trace = load_trace(session.path());
  std::map<std::string, std::vector<json>> by_name;
  for (const json& e : events_with_ph(trace, "X")) by_name[e["name"]].push_back(e);
  ASSERT_EQ(by_name["c_pass_span"].size(), 2u);
  EXPECT_EQ(by_name["c_pass_span"][0]["args"]["compile_id"], "0/0");
  EXPECT_EQ(by_name["c_pass_span"][1]["args"]["compile_id"], "0/1");
  EXPECT_EQ(by_name["c_codegen"].size(), 2u);
  EXPECT_EQ(by_name["c_pass"].size(), 3u);  // two on the main thread, one on the worker
  // The inner phase's run-on after the outer one ended, taken from the
  // trace rather than allowed for (a loaded machine may preempt the thread
  // between the two ends): counted twice, the 2 ms would come on top.
  const auto end_us = [](const json& e) { return e["ts"].get<double>() + e["dur"].get<double>(); };
  const json* outer = nullptr;
  const json* inner = nullptr;
  for (const json& e : by_name["c_codegen"]) {
    if (e["args"].value("compile_id", "") == "0/1") outer = &e;
  }
  for (const json& e : by_name["c_pass"]) {
    if (e["args"].value("compile_id", "") == "0/1" &&
        e["tid"] == by_name["c_pass_span"][1]["tid"]) {
      inner = &e;
    }
  }
  ASSERT_NE(outer, nullptr);
  ASSERT_NE(inner, nullptr);
  const double run_on = std::max(0.0, end_us(*inner) - end_us(*outer));
  EXPECT_LT(codegen[1], duration[1] + run_on + 1000) << records[1].dump() << " run-on " << run_on;
  // jitscope_unit_waits_for: the recompile's "unit_waits" instant, naming it
  // and 0/0 (0/0's own wait on itself was refused).
  std::vector<std::string> waits;
  for (const json& e : trace) {
    if (e.value("name", "") != "unit_waits") continue;
    EXPECT_EQ(e["args"]["on"], "0/0") << e.dump();
    EXPECT_FALSE(e["args"].contains("on_pid")) << e.dump();
    waits.push_back(e["args"]["unit"]);
  }
  EXPECT_EQ(waits, (std::vector<std::string>{"0/1"}));
  ASSERT_EQ(by_name["c_worker_span"].size(), 1u);
  const json& worker = by_name["c_worker_span"][0];
  EXPECT_EQ(worker["args"]["compile_id"], "0/0");
  EXPECT_NE(worker["tid"], by_name["c_pass_span"][0]["tid"]);
}

}  // namespace
}  // namespace jitscope::testing
