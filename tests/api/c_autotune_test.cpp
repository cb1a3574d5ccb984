// The autotuning C API (jitscope/autotune.h) driven from C
// (c_autotune_scenario.c): the trace holds the session, its trials' typed
// config, their steps, the unit named a trial's compile, the result, the
// failure and the winner; NULL handles, unknown trials and ended handles
// do nothing (an ended handle is said once).
#include "trace_support.hpp"

#include <jitscope/compile.hpp>

#include <map>
#include <string>
#include <vector>

extern "C" int jitscope_c_autotune_scenario(void);

namespace jitscope::testing {
namespace {

using nlohmann::json;

TEST(CAutotuneApi, ASessionFromCIsRecordedAsFromCpp) {
  reset_compile_state();
  ScopedSession session(test_config("c_autotune_api"));
  ASSERT_TRUE(session.status().ok()) << session.status().message();
  StderrCapture err;
  ASSERT_EQ(jitscope_c_autotune_scenario(), 0);
  const std::string said = err.text();
  (void)session.finish();
  EXPECT_EQ(count_lines_starting(said, "jitscope:"), 2) << said;  // the two ended handles

  std::map<std::string, std::vector<json>> by_name;
  for (const json& e : load_trace(session.path())) {
    const std::string name = e.value("name", "");
    // A slice on its own track is a b/e pair: its begin, with the args, counts.
    if (name.rfind("autotune", 0) == 0 && e.value("ph", "") != "e") {
      by_name[name].push_back(e.value("args", json::object()));
    }
  }
  ASSERT_EQ(by_name["autotune_start"].size(), 1u);
  EXPECT_EQ(by_name["autotune_start"][0]["kernel"], "matmul");
  const json& tune = by_name["autotune_start"][0]["tune"];
  ASSERT_EQ(by_name["autotune_trial"].size(), 2u);
  const json& first = by_name["autotune_trial"][0];
  EXPECT_EQ(first["tune"], tune);
  EXPECT_EQ(first["trial"], 0);
  EXPECT_EQ(first["config"], "block=128, fast=true, dtype=bf16, ratio=0.5");
  EXPECT_EQ(first["block"], 128);
  EXPECT_EQ(first["fast"], true);
  EXPECT_EQ(first["dtype"], "bf16");
  EXPECT_EQ(first["ratio"], 0.5);
  // The name's buffer changed after the first trial: the first kept its
  // name (above), the second has the new one.
  EXPECT_EQ(by_name["autotune_trial"][1]["config"], "Xlock=128");
  EXPECT_EQ(by_name["autotune_trial"][1]["Xlock"], 128);
  ASSERT_EQ(by_name["autotune_step"].size(), 2u);
  EXPECT_EQ(by_name["autotune_step"][0]["step"], "compile");
  EXPECT_EQ(by_name["autotune_step"][1]["step"], "benchmark");
  EXPECT_EQ(by_name["autotune compile"].size(), 1u);  // the steps' slices
  EXPECT_EQ(by_name["autotune benchmark"].size(), 1u);
  ASSERT_EQ(by_name["autotune_compiled_by"].size(), 1u);
  EXPECT_EQ(by_name["autotune_compiled_by"][0]["trial"], 1);
  EXPECT_EQ(by_name["autotune_compiled_by"][0]["compile_id"], "0/0");
  ASSERT_EQ(by_name["autotune_result"].size(), 1u);  // not those of unknown trials
  EXPECT_EQ(by_name["autotune_result"][0]["value"], 2.5);
  ASSERT_EQ(by_name["autotune_failed"].size(), 1u);
  EXPECT_EQ(by_name["autotune_failed"][0]["reason"], "out of shared memory");
  ASSERT_EQ(by_name["autotune_winner"].size(), 1u);
  EXPECT_EQ(by_name["autotune_winner"][0]["trial"], 0);
  ASSERT_EQ(by_name["autotune_end"].size(), 1u);
  EXPECT_EQ(by_name["autotune_end"][0]["trials"], 2);
  ASSERT_EQ(by_name["autotune session"].size(), 1u);  // the session's slice
  EXPECT_EQ(by_name["autotune session"][0]["winner"], 0);
}

}  // namespace
}  // namespace jitscope::testing
