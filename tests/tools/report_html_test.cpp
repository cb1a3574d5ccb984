// jitscope-report --format html, its data: the binary runs as a subprocess
// on traces made here (with the SDK, the pass_pipeline sample, and
// hand-written), and the page's data block (<script type="application/json"
// id="jitscope-data">) is taken out and checked exactly: against --format
// json of the same input (one serializer: the data is the JSON format plus
// artifact links), and against what the test put in (units, failures,
// recompiles, user context, artifact links relative or file://, histogram
// bins holding every duration, a unit's waterfall keeping its longest spans).
// The page around the data (escapes, no URL, sections, --baseline, exit
// codes, the script): report_html_page_test.cpp.
// Not covered here: the page in a browser (the headless-Chromium test of
// the DOM contract is its own suite, docs/report-html.md), load time (a
// measurement, not a pass/fail: docs/report-html.md has the numbers).
#include "html_support.hpp"
#include "render.hpp"
#include "render_internal.hpp"
#include "report_support.hpp"
#include "trace_support.hpp"

#include <jitscope/compile.hpp>
#include <jitscope/jitscope.hpp>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

namespace {

namespace fs = std::filesystem;
using jitscope::testing::read_file;
using jitscope::testing::temp_dir;
using jitscope::testing::temp_path;
using namespace jitscope::testing::report;

// ---- a trace written with the SDK, with its metrics file and artifacts ----

TEST(HtmlReport, SdkTraceUnitsMetricsAndArtifacts) {
  const std::string dir = temp_dir("html_sdk");
  jitscope::Config cfg = jitscope::testing::test_config("html_sdk");
  cfg.metrics_path = dir + "/metrics.jsonl";
  cfg.artifacts_dir = dir + "/artifacts";
  ASSERT_TRUE(jitscope::start(cfg));
  {
    jitscope::CompileUnit unit({.frame = "f0", .graph = "fwd"});
    JITSCOPE_PHASE("compile_graph", {.column = "entire_compile_us"});
    {
      JITSCOPE_PHASE("parse", {.column = "parse_us"});
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
    std::thread worker([ref = unit.ref()] {
      jitscope::UnitScope scope(ref);
      JITSCOPE_SPAN("emit_kernel");
    });
    worker.join();
    EXPECT_TRUE(unit.artifact("ptx", ".version 8.0\n", "ptx").ok());
    EXPECT_TRUE(unit.set("input_shape", "[2, 3]").ok());
    unit.cache_miss("k0", "kernels");
  }
  {
    jitscope::CompileUnit again(
        {.frame = "f0", .graph = "fwd", .recompile_reason = "shape changed"});
    JITSCOPE_PHASE("parse", {.column = "parse_us"});
    again.cache_hit("k0", "kernels");
    again.fail("CompileError", "no registers left");
  }
  jitscope::stop();

  const std::string page =
      html_report({cfg.output_path, "--metrics", cfg.metrics_path}, dir + "/report.html");
  const json data = page_data(page);
  EXPECT_EQ(data["schema"], "jitscope-report-html/2");
  // The data is the JSON format's, plus the page's extras.
  EXPECT_EQ(without_page_extras(data),
            report_json({cfg.output_path, "--metrics", cfg.metrics_path}));

  ASSERT_EQ(data["units"].size(), 2u);
  const json* first = find_unit(data, "0/0");
  const json* second = find_unit(data, "0/1");
  ASSERT_NE(first, nullptr);
  ASSERT_NE(second, nullptr);
  // The first: not failed, no recompile, its user field, one artifact linked
  // relative to the page's folder (it lies under it).
  const json& m0 = (*first)["metrics"];
  EXPECT_TRUE(m0["fail_type"].is_null());
  EXPECT_TRUE(m0["recompile_reason"].is_null());
  EXPECT_EQ(m0["context"], (json{{"input_shape", "[2, 3]"}}));
  EXPECT_FALSE(m0["fields"].contains("input_shape"));  // kept once
  EXPECT_EQ(m0["cache_misses"], 1);
  ASSERT_EQ(m0["artifacts"].size(), 1u);
  const json& art = m0["artifacts"][0];
  EXPECT_EQ(art["kind"], "ptx");
  EXPECT_EQ(art["bytes"], 13);
  EXPECT_EQ(art["href"], "artifacts/0_0/ptx.ptx");
  EXPECT_EQ(fs::path(dir) / art["href"].get<std::string>(),
            fs::path(art["path"].get<std::string>()));
  // Its waterfall: the phases on its own thread's lane, emit_kernel on the worker's.
  ASSERT_EQ((*first)["lanes"].size(), 2u);
  EXPECT_EQ((*first)["thread"], (*first)["lanes"][0]);
  std::map<std::string, long long> lane_of;
  for (const json& s : (*first)["spans"]) {
    lane_of[s[0].get<std::string>()] = s[3].get<long long>();
    EXPECT_GE(s[1].get<long long>(), 0) << s;
    EXPECT_LE(s[1].get<long long>() + s[2].get<long long>(),
              (*first)["end_ns"].get<long long>() - (*first)["start_ns"].get<long long>())
        << s;
  }
  EXPECT_EQ(lane_of, (std::map<std::string, long long>{
                         {"compile_graph", 0}, {"parse", 0}, {"emit_kernel", 1}}));
  EXPECT_EQ((*first)["spans_total"], 3);
  // The second: a failed recompile with its reason.
  const json& m1 = (*second)["metrics"];
  EXPECT_EQ(m1["fail_type"], "CompileError");
  EXPECT_EQ(m1["fail_reason"], "no registers left");
  EXPECT_EQ(m1["recompile_reason"], "shape changed");
  EXPECT_EQ(m1["cache_hits"], 1);
  EXPECT_TRUE(m1["artifacts"].empty());
  expect_histograms(data);

  // Written to another folder: the artifact is not under it, a file:// URL.
  const std::string elsewhere = temp_dir("html_sdk_elsewhere");
  const json moved = page_data(
      html_report({cfg.output_path, "--metrics", cfg.metrics_path}, elsewhere + "/r.html"));
  EXPECT_EQ(find_unit(moved, "0/0")->at("metrics")["artifacts"][0]["href"],
            "file://" + fs::path(art["path"].get<std::string>()).lexically_normal().string());
}

#ifdef JITSCOPE_PASS_PIPELINE
// The pass_pipeline sample's own user fields are the units' context, and
// its failed unit and recompiles are flagged.
TEST(HtmlReport, PassPipelineContextAndFlags) {
  const std::string trace = temp_path("html_pp"), metrics = temp_path("html_pp_metrics") + "l";
  const Result sample = run({JITSCOPE_PASS_PIPELINE, "--trace", trace, "--metrics", metrics});
  ASSERT_EQ(sample.code, 0) << sample.err;
  const json data = page_data(html_report({trace, "--metrics", metrics}, trace + ".html"));
  EXPECT_EQ(without_page_extras(data), report_json({trace, "--metrics", metrics}));
  std::map<std::string, json> records;  // the metrics file's compile records
  std::ifstream in(metrics);
  for (std::string line; std::getline(in, line);) {
    const json rec = json::parse(line);
    if (!rec["compile_id"].is_null() && !rec.contains("record")) records[rec["compile_id"]] = rec;
  }
  ASSERT_EQ(data["units"].size(), records.size());
  std::size_t failures = 0, recompiles = 0;
  for (const json& u : data["units"]) {
    const json& rec = records.at(u["compile_id"].get<std::string>());
    const json& m = u["metrics"];
    for (const char* user : {"input_shape", "kernels_emitted", "num_ops", "op_kinds"}) {
      EXPECT_EQ(m["context"].contains(user), rec.contains(user)) << u["compile_id"] << " " << user;
      if (rec.contains(user)) EXPECT_EQ(m["context"][user], rec[user]) << u["compile_id"];
    }
    for (const auto& [key, value] : m["context"].items()) EXPECT_EQ(rec.at(key), value) << key;
    for (const auto& [key, value] : m["fields"].items()) EXPECT_EQ(rec.at(key), value) << key;
    failures += rec.contains("fail_type") ? 1 : 0;
    recompiles += rec.contains("recompile_reason") ? 1 : 0;
    EXPECT_EQ(m["fail_type"].is_null(), !rec.contains("fail_type")) << u["compile_id"];
    EXPECT_EQ(m["recompile_reason"].is_null(), !rec.contains("recompile_reason"))
        << u["compile_id"];
  }
  EXPECT_GT(failures, 0u);  // the sample fails one unit
  EXPECT_GT(recompiles, 0u);
  expect_histograms(data);
}
#endif

// ---- hand-written: links, histograms, waterfalls ----

TEST(HtmlReport, ArtifactLinksArePercentEncoded) {
  const std::string dir = temp_dir("html_links");
  const std::string trace = write_temp("html_links", "[" + x_event("parse", 0, 1000) + "]");
  const std::string metrics = write_temp(
      "html_links_m",
      metrics_line("0/0",
                   R"(,"artifacts":[{"kind":"ptx","path":")" + dir +
                       R"(/a b/k#1%.ptx","bytes":3,"fnv1a":"ab"},)"
                       R"({"kind":"log","path":"/opt/x:y/é?.txt","bytes":1,"fnv1a":"cd"}])"));
  const json data = page_data(html_report({trace, "--metrics", metrics}, dir + "/r.html"));
  const json& arts = find_unit(data, "0/0")->at("metrics")["artifacts"];
  ASSERT_EQ(arts.size(), 2u);
  EXPECT_EQ(arts[0]["href"], "a%20b/k%231%25.ptx");
  EXPECT_EQ(arts[1]["href"], "file:///opt/x%3Ay/%C3%A9%3F.txt");
  // In process: the same rule, and a folder beside the base is not under it.
  EXPECT_EQ(jitscope::report::artifact_href("/w/out/a.ptx", "/w/out"), "a.ptx");
  EXPECT_EQ(jitscope::report::artifact_href("/w/out/a.ptx", "/w/out/"), "a.ptx");
  EXPECT_EQ(jitscope::report::artifact_href("/w/outside/a.ptx", "/w/out"),
            "file:///w/outside/a.ptx");
  EXPECT_EQ(jitscope::report::artifact_href("/w/out/../x.ptx", "/w/out"), "file:///w/x.ptx");
  // No base (the page's folder could not be found): never relative.
  EXPECT_EQ(jitscope::report::artifact_href("/w/out/a.ptx", ""), "file:///w/out/a.ptx");

  // To stdout: relative to the current directory.
  const std::string cwd = fs::current_path().string();
  const std::string here_metrics = write_temp(
      "html_links_cwd", metrics_line("0/0", R"(,"artifacts":[{"kind":"ptx","path":")" + cwd +
                                                R"(/sub/p.ptx","bytes":3,"fnv1a":"ab"}])"));
  const Result out = report({trace, "--metrics", here_metrics, "--format", "html"});
  ASSERT_EQ(out.code, 0) << out.err;
  EXPECT_EQ(find_unit(page_data(out.out), "0/0")->at("metrics")["artifacts"][0]["href"],
            "sub/p.ptx");
}

TEST(HtmlReport, HistogramBinsHoldEveryDuration) {
  // 1000 durations of one name (past Distribution's 256 exact samples: the
  // bucketed path) and 5 of another (the exact path), spread over decades.
  std::string events = "[";
  std::vector<long long> many, few;
  for (int i = 0; i < 1000; ++i)
    many.push_back(1 + (static_cast<long long>(i) * i * 7919) % 50'000'000);
  for (long long d : {0LL, 1LL, 3LL, 4LL, 123'456LL}) few.push_back(d);
  long long ts = 0;
  for (long long d : many) {
    events += x_event("many", ts, d) + ",";
    ts += d + 1;
  }
  for (long long d : few) {
    events += x_event("few", ts, d) + ",";
    ts += d + 1;
  }
  events.back() = ']';
  const std::string trace = write_temp("html_hist", events);
  const json data = page_data(html_report({trace}, temp_path("html_hist") + ".html"));
  expect_histograms(data);
  for (const json& row : data["compile_times"]) {
    const auto& durations = row["name"] == "many" ? many : few;
    std::vector<unsigned long long> expected(row["histogram"].size(), 0);
    for (long long d : durations) {
      bool placed = false;
      for (std::size_t b = 0; b < expected.size() && !placed; ++b) {
        const json& bin = row["histogram"][b];
        if (bin[0].get<long long>() <= d && d <= bin[1].get<long long>()) {
          ++expected[b];
          placed = true;
        }
      }
      EXPECT_TRUE(placed) << row["name"] << " " << d;
    }
    for (std::size_t b = 0; b < expected.size(); ++b) {
      EXPECT_EQ(row["histogram"][b][2].get<unsigned long long>(), expected[b])
          << row["name"] << " bin " << b;
    }
    // Four bins per power of two: a bin's width is at most a quarter of its low end.
    for (const json& bin : row["histogram"]) {
      const long long low = bin[0], high = bin[1];
      if (low >= 4) EXPECT_LE(high - low + 1, low / 4) << row["name"];
    }
  }
}

TEST(HtmlReport, WaterfallKeepsTheLongestSpansByStart) {
  // A unit with 300 phase spans of distinct durations, each longer than the
  // one before (so keeping the first 128 would be wrong), on two threads.
  const int n = 300;
  std::string events =
      R"([{"ph":"X","cat":"compile_unit","name":"[0/0] big","pid":1,"tid":1,"ts":0,)"
      R"("dur":10000,"args":{"compile_id":"0/0"}})";
  std::vector<std::tuple<long long, long long, int>> spans;  // start, dur, tid
  for (int i = 0; i < n; ++i) {
    const long long dur = 1000 + i, start = 1000 + i * 20;
    const int tid = 1 + i % 2;
    spans.emplace_back(start, dur, tid);
    events += R"(,{"ph":"X","name":"p)" + std::to_string(i) + R"(","pid":1,"tid":)" +
              std::to_string(tid) + R"(,"ts":)" + us(start) + R"(,"dur":)" + us(dur) +
              R"(,"args":{"compile_id":"0/0"}})";
  }
  events += "]";
  const std::string trace = write_temp("html_wf", events);
  const json data = page_data(html_report({trace}, temp_path("html_wf") + ".html"));
  const json& u = data["units"][0];
  EXPECT_EQ(u["spans_total"], n);
  ASSERT_EQ(u["spans"].size(), 128u);  // UnitRow::kMaxSpans
  // The 128 longest are the last 128 written, and they come by start.
  for (std::size_t i = 0; i < 128; ++i) {
    const std::size_t k = n - 128 + i;
    const auto& [start, dur, tid] = spans[k];
    const json& s = u["spans"][i];
    EXPECT_EQ(s[0], "p" + std::to_string(k));
    EXPECT_EQ(s[1].get<long long>(), start) << i;  // the unit starts at 0
    EXPECT_EQ(s[2].get<long long>(), dur) << i;
    EXPECT_EQ(u["lanes"][s[3].get<std::size_t>()]["tid"], tid) << i;
  }
  EXPECT_EQ(u["lanes"][0]["tid"], 1);  // its own slice's thread first
}

}  // namespace
