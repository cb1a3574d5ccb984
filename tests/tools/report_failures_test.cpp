// jitscope-report on failures, end to end: a unit open when its process
// crashed is a failed unit ("crashed", the crash as its reason) in the
// JSON, the tables and the HTML page's data; the passes the adapters mark
// "failed" (MLIR's runAfterPassFailed: the pass and its pipeline) and the
// span a thread crashed in are listed as failed passes (name, unit, reason);
// a unit left open at stop() without a crash is "incomplete", not failed.
// The crash comes from the SDK itself (report_crash_child.cpp: a real fault,
// and std::terminate) and from hand-made traces of the same shape.
// Not covered: the Perfetto form (its spans reach the report as the JSON
// form's: perfetto_tools_test); the page's script drawing them (the browser
// tests).
#include "html_support.hpp"
#include "report_support.hpp"
#include "sanitizers.hpp"
#include "trace_support.hpp"

#include <gtest/gtest.h>

#include <signal.h>

#include <algorithm>
#include <string>
#include <vector>

namespace {

using jitscope::testing::read_file;
using jitscope::testing::temp_path;
using namespace jitscope::testing::report;

constexpr long long kUs = 1000;

const json* unit_by_id(const json& rep, const std::string& cid) {
  for (const json& u : rep["units"]) {
    if (u["compile_id"] == cid) return &u;
  }
  return nullptr;
}

// A jitscope-shaped trace: unit 0/0 ended; unit 1/0 open at a SIGSEGV on
// tid 7 inside "lower" > "InstCombine", with "worker_open" open on tid 8
// (another thread, not the crash's); the crash instant.
std::string crashed_trace() {
  const std::string open = R"("incomplete":true)";
  return trace_of({
      R"({"ph":"M","name":"thread_name","pid":1,"tid":7,"args":{"name":"compiler"}})",
      unit_span("0/0", "lower", 10 * kUs, 50 * kUs, 7),
      unit_event("0/0", "model__fwd_0", 0, 100 * kUs, 7),
      unit_span("1/0", "InstCombine", 250 * kUs, 150 * kUs, 7, open),
      unit_span("1/0", "lower", 210 * kUs, 190 * kUs, 7, open),
      unit_event("1/0", "model__bwd_1", 200 * kUs, 200 * kUs, 7, open),
      R"({"ph":"X","name":"worker_open","pid":1,"tid":8,"ts":150,"dur":250,"args":{"incomplete":true}})",
      R"({"ph":"I","s":"t","cat":"jitscope","name":"crash: SIGSEGV","ts":400,"pid":1,"tid":7,)"
      R"("args":{"signal":"SIGSEGV","signo":11,"si_code":1,"address":"0x0","tid":7}})",
  });
}

TEST(ReportFailures, CrashedUnitIsFailedWithTheCrashAsReason) {
  const std::string path = crashed_trace();
  const json rep = report_json({path});
  const json* ok = unit_by_id(rep, "0/0");
  const json* crashed = unit_by_id(rep, "1/0");
  ASSERT_NE(ok, nullptr);
  ASSERT_NE(crashed, nullptr);
  EXPECT_EQ((*ok)["status"], "ok");
  EXPECT_TRUE((*ok)["fail_type"].is_null());
  EXPECT_EQ((*crashed)["status"], "crashed");
  EXPECT_EQ((*crashed)["fail_type"], "crash");
  EXPECT_EQ((*crashed)["fail_reason"], "SIGSEGV at 0x0 on thread 7");

  // The span the thread crashed in is a failed pass; the worker's open span is not.
  const json& fp = rep["failed_passes"];
  EXPECT_EQ(fp["total"], 1);
  ASSERT_EQ(fp["passes"].size(), 1u) << fp.dump();
  const json& p = fp["passes"][0];
  EXPECT_EQ(p["name"], "InstCombine");
  EXPECT_EQ(p["kind"], "crashed");
  EXPECT_EQ(p["compile_id"], "1/0");
  EXPECT_EQ(p["unit"], "model__bwd_1");
  EXPECT_EQ(p["thread"], "compiler");
  EXPECT_EQ(p["tid"], 7);
  EXPECT_EQ(p["ts_ns"], 250 * kUs);
  EXPECT_EQ(p["reason"], "crash: SIGSEGV at 0x0 on thread 7");

  // The tables.
  const Result table = report({path, "-s", "units"});
  ASSERT_EQ(table.code, 0) << table.err;
  EXPECT_NE(table.out.find("status"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("crashed  SIGSEGV at 0x0 on thread 7"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("== Failed passes"), std::string::npos) << table.out;
  const Result csv = report({path, "-s", "units", "-f", "csv"});
  EXPECT_NE(csv.out.find("\n1/0,model__bwd_1,200000,1,1,crashed,SIGSEGV at 0x0 on thread 7\n"),
            std::string::npos)
      << csv.out;
  EXPECT_NE(csv.out.find("# failed_passes\nname,kind,compile_id,unit,thread,dur_ns,ts_ns,reason\n"
                         "InstCombine,crashed,1/0,model__bwd_1,compiler (1/7),150000,250000,"
                         "crash: SIGSEGV at 0x0 on thread 7\n"),
            std::string::npos)
      << csv.out;

  // The HTML page's data holds the same.
  const std::string html = html_report({path}, temp_path("failures") + ".html");
  const json data = page_data(html);
  ASSERT_NE(unit_by_id(data, "1/0"), nullptr);
  EXPECT_EQ((*unit_by_id(data, "1/0"))["status"], "crashed");
  EXPECT_EQ((*unit_by_id(data, "1/0"))["fail_reason"], "SIGSEGV at 0x0 on thread 7");
  EXPECT_EQ(data["failed_passes"], fp);
  EXPECT_NE(html.find("id=\"failed-passes-table\""), std::string::npos);
}

TEST(ReportFailures, FailedPassesAreListedWithUnitAndReason) {
  // MLIR marks the failed pass and the pipeline it ran in; a B/E pair
  // marked on its B; a failed pass outside any unit; unit 0/0's record
  // says why it failed.
  const std::string f = R"("failed":true)";
  const std::string path = trace_of({
      unit_span("0/0", "Canonicalizer", 10 * kUs, 20 * kUs, 1,
                f + R"(,"pass":"canonicalize","op":"func.func","ir_name":"main")"),
      unit_span("0/0", "pipeline", 5 * kUs, 30 * kUs, 1, f + R"(,"op":"builtin.module")"),
      unit_span("0/0", "CSE", 40 * kUs, 5 * kUs, 1),
      unit_event("0/0", "model__fwd_0", 0, 100 * kUs, 1),
      R"({"ph":"B","name":"Verifier","pid":1,"tid":2,"ts":200,"args":{"compile_id":"1/0","failed":true,"reason":"'func.return' op has 2 operands"}})",
      R"({"ph":"E","pid":1,"tid":2,"ts":210})",
      unit_event("1/0", "model__bwd_1", 190 * kUs, 30 * kUs, 2),
      R"({"ph":"X","name":"Inliner","pid":1,"tid":3,"ts":300,"dur":5,"args":{"failed":true}})",
      x_event("not_failed", 400 * kUs, 5 * kUs, 3),
  });
  const std::string metrics =
      write_temp("failures_metrics",
                 "{\"compile_id\":\"0/0\",\"name\":\"model__fwd_0\",\"duration_us\":100,"
                 "\"fail_type\":\"PassFailure\",\"fail_reason\":\"canonicalize failed\"}\n");
  const json rep = report_json({path, "--metrics", metrics});
  const json& fp = rep["failed_passes"];
  EXPECT_EQ(fp["total"], 4);
  ASSERT_EQ(fp["passes"].size(), 4u) << fp.dump();
  // By start: pipeline, Canonicalizer, Verifier, Inliner.
  const json& pipeline = fp["passes"][0];
  const json& canon = fp["passes"][1];
  const json& verifier = fp["passes"][2];
  const json& inliner = fp["passes"][3];
  EXPECT_EQ(pipeline["name"], "pipeline");
  EXPECT_EQ(pipeline["reason"], "on builtin.module; unit failed: PassFailure: canonicalize failed");
  EXPECT_EQ(canon["name"], "Canonicalizer");
  EXPECT_EQ(canon["kind"], "failed");
  EXPECT_EQ(canon["compile_id"], "0/0");
  EXPECT_EQ(canon["unit"], "model__fwd_0");
  EXPECT_EQ(canon["dur_ns"], 20 * kUs);
  EXPECT_EQ(canon["reason"], "on func.func @main; unit failed: PassFailure: canonicalize failed");
  EXPECT_EQ(verifier["name"], "Verifier");
  EXPECT_EQ(verifier["compile_id"], "1/0");
  EXPECT_EQ(verifier["dur_ns"], 10 * kUs);
  EXPECT_EQ(verifier["reason"], "'func.return' op has 2 operands");
  EXPECT_EQ(inliner["name"], "Inliner");
  EXPECT_TRUE(inliner["compile_id"].is_null());
  EXPECT_TRUE(inliner["unit"].is_null());
  EXPECT_TRUE(inliner["reason"].is_null());
  // The failed unit (from its record) has the record's failure.
  EXPECT_EQ((*unit_by_id(rep, "0/0"))["status"], "failed");
  EXPECT_EQ((*unit_by_id(rep, "0/0"))["fail_type"], "PassFailure");
  EXPECT_EQ((*unit_by_id(rep, "1/0"))["status"], "ok");

  const Result table = report({path, "-s", "units"});
  EXPECT_NE(table.out.find("== Failed passes"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("Canonicalizer  failed"), std::string::npos) << table.out;
  // No failed pass, no table (and an empty list in JSON).
  const std::string clean = trace_of({x_event("A", 0, kUs)});
  EXPECT_EQ(report({clean}).out.find("Failed passes"), std::string::npos);
  EXPECT_EQ(report_json({clean})["failed_passes"], (json{{"total", 0}, {"passes", json::array()}}));
}

TEST(ReportFailures, OpenAtStopIsIncompleteNotFailed) {
  // "incomplete" without a crash in its process: open when the session stopped.
  const std::string path = trace_of({
      unit_span("0/0", "lower", 10 * kUs, 50 * kUs, 1, R"("incomplete":true)"),
      unit_event("0/0", "model__fwd_0", 0, 60 * kUs, 1, R"("incomplete":true)"),
  });
  const json rep = report_json({path});
  EXPECT_EQ(rep["units"][0]["status"], "incomplete");
  EXPECT_TRUE(rep["units"][0]["fail_type"].is_null());
  EXPECT_EQ(rep["failed_passes"]["total"], 0);
  const Result table = report({path, "-s", "units"});
  EXPECT_NE(table.out.find("incomplete  still open when the trace ended"), std::string::npos)
      << table.out;
}

TEST(ReportFailures, FailedPassesAreBounded) {
  std::vector<std::string> ev;
  const std::size_t n = 10001;
  for (std::size_t i = 0; i < n; ++i) {
    ev.push_back(R"({"ph":"X","name":"P","pid":1,"tid":1,"ts":)" + std::to_string(i * 10) +
                 R"(,"dur":1,"args":{"failed":true}})");
  }
  const json rep = report_json({trace_of(ev)});
  EXPECT_EQ(rep["failed_passes"]["total"], n);
  EXPECT_EQ(rep["failed_passes"]["passes"].size(), 10000u);
  EXPECT_NE(report({trace_of(ev), "-s", "units"}).out.find("the first 10000 of 10001"),
            std::string::npos);
}

// The SDK's own crash: a unit open at a real fault, and at std::terminate.
void check_sdk_crash(const std::string& how, int signo, const std::string& reason_start) {
  const std::string trace = temp_path("failures_crash_" + how);
  const std::string metrics = trace + ".metrics.jsonl";
  const Result child = run({JITSCOPE_REPORT_CRASH_CHILD, trace, metrics, how});
  ASSERT_TRUE(child.signaled) << how << ": exit " << child.code << " " << child.err;
  EXPECT_EQ(child.signal, signo) << how;
  const json rep = report_json({trace, "--metrics", metrics});
  const json* bwd = nullptr;
  for (const json& u : rep["units"]) {
    if (u["name"].get<std::string>().find("bwd") != std::string::npos) bwd = &u;
    if (u["name"].get<std::string>().find("fwd") != std::string::npos) {
      EXPECT_EQ(u["status"], "ok") << u.dump();
    }
  }
  ASSERT_NE(bwd, nullptr) << rep["units"].dump();
  EXPECT_EQ((*bwd)["status"], "crashed") << bwd->dump();
  EXPECT_EQ((*bwd)["fail_type"], "crash");
  const std::string reason = (*bwd)["fail_reason"].get<std::string>();
  EXPECT_EQ(reason.rfind(reason_start, 0), 0u) << reason;
  EXPECT_NE(reason.find(" on thread "), std::string::npos) << reason;
  ASSERT_EQ(rep["failed_passes"]["passes"].size(), 1u) << rep["failed_passes"].dump();
  const json& p = rep["failed_passes"]["passes"][0];
  EXPECT_EQ(p["name"], "InstCombine");
  EXPECT_EQ(p["kind"], "crashed");
  EXPECT_EQ(p["compile_id"], (*bwd)["compile_id"]);
  EXPECT_EQ(p["thread"], "compiler");
  EXPECT_EQ(p["reason"], "crash: " + reason);
}

TEST(ReportFailures, SdkCrashByStdTerminate) {
  check_sdk_crash("terminate", SIGABRT, "std::terminate: std::runtime_error: pass exploded");
}

TEST(ReportFailures, SdkCrashBySegv) {
  // The sanitizers' own SIGSEGV handlers would report the fault instead.
  if (jitscope::testing::kSanitized) GTEST_SKIP() << "sanitized build";
  check_sdk_crash("segv", SIGSEGV, "SIGSEGV at 0x");
}

}  // namespace
