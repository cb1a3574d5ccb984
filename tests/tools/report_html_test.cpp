// jitscope-report --format html, end to end: the binary runs as a
// subprocess on traces made here (with the SDK, and hand-written), and the
// page's data block (<script type="application/json" id="jitscope-data">)
// is taken out and checked exactly: against --format json of the same input
// (one serializer: the data is the JSON format plus artifact links), and
// against what the test put in (units, failures, recompiles, user context,
// artifact links relative or file://, histogram bins holding every
// duration). Also: names that try to end the script block cannot, no
// network reference anywhere, --section and --baseline, exit codes, and the
// embedded script parses (node --check) and formats times as human_ns does.
// Not covered here: the page in a browser (the headless-Chromium test of
// the DOM contract is its own suite, docs/report-html.md), load time (a
// measurement, not a pass/fail: docs/report-html.md has the numbers).
#include "render.hpp"
#include "render_internal.hpp"
#include "report_support.hpp"
#include "trace_support.hpp"

#include <jitscope/compile.hpp>
#include <jitscope/jitscope.hpp>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

namespace {

namespace fs = std::filesystem;
using jitscope::testing::read_file;
using jitscope::testing::temp_path;
using namespace jitscope::testing::report;

constexpr const char* kDataOpen = "<script type=\"application/json\" id=\"jitscope-data\">";

// A fresh empty folder.
std::string temp_dir(const std::string& stem) {
  const std::string dir = temp_path(stem) + ".d";
  fs::create_directories(dir);
  return dir;
}

// The data block's text: from its opening tag to the first "</script", as
// an HTML parser ends it (whatever the JSON inside says).
std::string data_text(const std::string& html) {
  const std::size_t open = html.find(kDataOpen);
  if (open == std::string::npos) return {};
  const std::size_t begin = open + std::string(kDataOpen).size();
  const std::size_t end = html.find("</script", begin);
  return html.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
}

json page_data(const std::string& html) {
  const std::string text = data_text(html);
  EXPECT_FALSE(text.empty()) << "no data block";
  return json::parse(text);
}

// The page's own script (the second <script>).
std::string page_script(const std::string& html) {
  const std::size_t data = html.find(kDataOpen);
  const std::size_t open = html.find("<script>", data);
  if (open == std::string::npos) return {};
  const std::size_t begin = open + 8;
  return html.substr(begin, html.find("</script>", begin) - begin);
}

// jitscope-report with `args` and --format html -o `out`; the page.
std::string html_report(std::vector<std::string> args, const std::string& out) {
  args.insert(args.end(), {"--format", "html", "-o", out});
  const Result r = report(args);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  return read_file(out);
}

// The data without what only the page adds (schema, artifact hrefs): the
// JSON format's object.
json without_page_extras(json data) {
  data.erase("schema");
  for (json& u : data["units"]) {
    if (!u["metrics"].is_object()) continue;
    for (json& a : u["metrics"]["artifacts"]) a.erase("href");
  }
  return data;
}

// Every histogram: contiguous bins whose counts sum to the name's count.
void expect_histograms(const json& data) {
  ASSERT_TRUE(data.contains("compile_times"));
  for (const json& row : data["compile_times"]) {
    const json& bins = row["histogram"];
    ASSERT_FALSE(bins.empty()) << row["name"];
    unsigned long long sum = 0;
    for (std::size_t i = 0; i < bins.size(); ++i) {
      sum += bins[i][2].get<unsigned long long>();
      EXPECT_LE(bins[i][0].get<long long>(), bins[i][1].get<long long>()) << row["name"];
      if (i > 0) {
        EXPECT_EQ(bins[i][0].get<long long>(), bins[i - 1][1].get<long long>() + 1)
            << row["name"] << " bin " << i;
      }
    }
    EXPECT_EQ(sum, row["count"].get<unsigned long long>()) << row["name"];
    EXPECT_GT(bins.front()[2].get<unsigned long long>(), 0u) << row["name"];
    EXPECT_GT(bins.back()[2].get<unsigned long long>(), 0u) << row["name"];
    EXPECT_LE(bins.front()[0].get<long long>(), row["min_ns"].get<long long>()) << row["name"];
    EXPECT_GE(bins.back()[1].get<long long>(), row["max_ns"].get<long long>()) << row["name"];
  }
}

const json* find_unit(const json& data, const std::string& compile_id) {
  for (const json& u : data["units"]) {
    if (u["compile_id"] == compile_id) return &u;
  }
  return nullptr;
}

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
  EXPECT_EQ(data["schema"], "jitscope-report-html/1");
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

// ---- hand-written: links, escapes, histograms ----

std::string metrics_line(const std::string& compile_id, const std::string& rest) {
  return R"({"compile_id":")" + compile_id + R"(","name":"n)" + compile_id.substr(0, 1) +
         R"(","duration_us":10)" + rest + "}\n";
}

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

TEST(HtmlReport, NamesCannotEndTheDataBlock) {
  // A unit, a span and a user field named to close the script and inject
  // markup, with U+2028/U+2029 and an HTML comment opener.
  const std::string evil = "f</script><img src=x onerror=alert(1)>\u2028\u2029<!--<script>";
  const std::string evil_json = json(evil).dump();  // as a JSON string token
  const std::string trace = write_temp(
      "html_evil", R"([{"ph":"X","cat":"compile_unit","name":"[0/0] )" + evil_json.substr(1) +
                       R"(,"pid":1,"tid":1,"ts":0,"dur":10,"args":{"compile_id":"0/0"}},)"
                       R"({"ph":"X","name":)" +
                       evil_json +
                       R"(,"pid":1,"tid":1,"ts":1,"dur":5,"args":{"compile_id":"0/0"}}])");
  const std::string metrics =
      write_temp("html_evil_m", metrics_line("0/0", ",\"note\":" + evil_json));
  const std::string page =
      html_report({trace, "--metrics", metrics}, temp_path("html_evil") + ".html");
  const std::string text = data_text(page);
  EXPECT_EQ(text.find('<'), std::string::npos);  // nothing in it can start a tag
  EXPECT_EQ(page.find("\u2028"), std::string::npos);
  EXPECT_EQ(page.find("\u2029"), std::string::npos);
  EXPECT_EQ(page.find("<img"), std::string::npos);
  const json data = json::parse(text);  // the block parses on its own...
  const json* unit = find_unit(data, "0/0");
  ASSERT_NE(unit, nullptr);  // ...and holds the names as they were
  EXPECT_EQ((*unit)["name"], evil);
  EXPECT_EQ((*unit)["metrics"]["context"]["note"], evil);
  EXPECT_EQ((*unit)["spans"][0][0], evil);
  EXPECT_EQ(data["compile_times"][0]["name"], evil);
  // Exactly two scripts: the data and the page's own, then the end of the page.
  std::size_t scripts = 0;
  for (std::size_t at = page.find("<script"); at != std::string::npos;
       at = page.find("<script", at + 1))
    ++scripts;
  EXPECT_EQ(scripts, 2u);
  EXPECT_EQ(page.substr(page.size() - 26), "</script>\n</body>\n</html>\n");
}

// The escaper in process: the same output however the JSON is cut into
// pieces (a U+2028's bytes split between two), every '<' and U+2028/2029
// escaped, other bytes (U+2027, a lone E2 at the end) as they were.
TEST(HtmlReport, ScriptSafeJsonAnyPieceBoundary) {
  const std::string in = "{\"a\":\"x</script>\u2028y\u2029z\u2027\xe2\x80\"}\xe2";
  const std::string want = "{\"a\":\"x\\u003c/script>\\u2028y\\u2029z\u2027\xe2\x80\"}\xe2";
  for (std::size_t cut1 = 0; cut1 <= in.size(); ++cut1) {
    for (std::size_t cut2 = cut1; cut2 <= in.size(); ++cut2) {
      std::string out;
      const jitscope::report::Writer collect = [&out](std::string_view p) { out.append(p); };
      {
        jitscope::report::Emitter em(collect);
        jitscope::report::ScriptSafeJson safe(em);
        safe.write(std::string_view(in).substr(0, cut1));
        safe.write(std::string_view(in).substr(cut1, cut2 - cut1));
        safe.write(std::string_view(in).substr(cut2));
        safe.finish();
      }
      ASSERT_EQ(out, want) << "cut at " << cut1 << " and " << cut2;
    }
  }
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

// ---- the page around the data ----

TEST(HtmlReport, NoNetworkReferencesAndSectionsPresent) {
  const std::string trace = write_temp(
      "html_net", R"([{"ph":"X","cat":"compile_unit","name":"[0/0] g","pid":1,"tid":1,"ts":0,)"
                  R"("dur":10,"args":{"compile_id":"0/0"}}])");
  const std::string page = html_report({trace}, temp_path("html_net") + ".html");
  EXPECT_EQ(page.find("http:"), std::string::npos);
  EXPECT_EQ(page.find("https:"), std::string::npos);
  // No scheme-relative URL, no src= or url() anywhere (CSS, markup or script).
  EXPECT_FALSE(std::regex_search(page, std::regex(R"(["'(=]\s*//)")));
  EXPECT_EQ(page.find("src="), std::string::npos);
  EXPECT_EQ(page.find("url("), std::string::npos);
  EXPECT_EQ(page.find("@import"), std::string::npos);
  for (const char* id :
       {"<section id=\"summary\">", "<section id=\"units\">", "<section id=\"compile-times\">",
        "<section id=\"gpu\">", "<section id=\"timeline\">", "<table id=\"units-table\">",
        "<div id=\"units-pager\"", "<input id=\"units-filter\"", "<svg id=\"timeline\"",
        "<table id=\"compile-times-table\"", "<table id=\"gpu-table\"", "<style>"}) {
    EXPECT_NE(page.find(id), std::string::npos) << id;
  }
  EXPECT_EQ(page.find("id=\"compare\""), std::string::npos);  // only with --baseline
  EXPECT_EQ(page.rfind("<!DOCTYPE html>", 0), 0u);
}

TEST(HtmlReport, SectionOptionChoosesSectionsAndData) {
  const std::string trace = write_temp(
      "html_sec", R"([{"ph":"X","cat":"compile_unit","name":"[0/0] g","pid":1,"tid":1,"ts":0,)"
                  R"("dur":10,"args":{"compile_id":"0/0"}}])");
  const std::string page =
      html_report({trace, "--section", "units"}, temp_path("html_sec") + ".html");
  EXPECT_NE(page.find("<section id=\"units\">"), std::string::npos);
  EXPECT_NE(page.find("<section id=\"timeline\">"), std::string::npos);
  for (const char* gone : {"id=\"summary\"", "id=\"compile-times\"", "id=\"gpu\""}) {
    EXPECT_EQ(page.find(gone), std::string::npos) << gone;
  }
  const json data = page_data(page);
  EXPECT_TRUE(data.contains("units"));
  EXPECT_TRUE(data.contains("header"));  // always: the page's title and time origin
  EXPECT_FALSE(data.contains("compile_times"));
  EXPECT_FALSE(data.contains("gpu"));
}

TEST(HtmlReport, BaselineAddsTheComparison) {
  auto unit_trace = [](const char* stem, long long parse_ns) {
    return write_temp(stem, "[" + x_event("parse", 0, parse_ns) + "," +
                                x_event("codegen", parse_ns, 1'000'000) + "]");
  };
  const std::string base = unit_trace("html_base", 10'000'000);
  const std::string next = unit_trace("html_new", 30'000'000);
  const std::string out = temp_path("html_cmp") + ".html";
  const Result r =
      report({"--baseline", base, next, "--format", "html", "-o", out, "--fail-if-slower", "50"});
  EXPECT_EQ(r.code, 3) << r.err;  // the regression's exit status, the page written first
  const std::string page = read_file(out);
  EXPECT_NE(page.find("<section id=\"compare\">"), std::string::npos);
  const json data = page_data(page);
  ASSERT_TRUE(data.contains("compare"));
  // The comparison is the JSON format's, and the page shows the new run.
  const Result cmp_json =
      report({"--baseline", base, next, "--format", "json", "--fail-if-slower", "50"});
  ASSERT_EQ(cmp_json.code, 3) << cmp_json.err;
  EXPECT_EQ(data["compare"], json::parse(cmp_json.out));
  EXPECT_EQ(data["compare"]["comparison"]["failing"], 1);
  EXPECT_EQ(data["header"]["input"], next);
  bool parse_slower = false;
  for (const json& row : data["compare"]["names"]) {
    if (row["name"] == "parse") parse_slower = row["change"] == "slower";
  }
  EXPECT_TRUE(parse_slower);
}

TEST(HtmlReport, ExitCodesUnchanged) {
  const std::string out = temp_path("html_err") + ".html";
  expect_error(report({"/nonexistent/trace.json", "--format", "html", "-o", out}), 1, "cannot open",
               "missing trace");
  EXPECT_FALSE(fs::exists(out));
  expect_error(report({"x.json", "--format", "htm"}), 2, "--format", "unknown format");
  const std::string bad = write_temp("html_bad", "[{\"ph\":\"X\",");
  const Result cut = report({bad, "--format", "html", "--metrics", "/nonexistent.jsonl"});
  EXPECT_EQ(cut.code, 1);
  EXPECT_EQ(cut.out, "");
}

// ---- the embedded script ----

#ifdef JITSCOPE_NODE
TEST(HtmlReport, EmbeddedScriptParsesAndFormatsAsHumanNs) {
  const std::string trace = write_temp("html_js", "[" + x_event("parse", 0, 1000) + "]");
  const std::string script = page_script(html_report({trace}, temp_path("html_js") + ".html"));
  ASSERT_FALSE(script.empty());
  const std::string js = temp_path("html_js") + ".js";
  std::ofstream(js) << script;
  const Result check = run({JITSCOPE_NODE, "--check", js});
  EXPECT_EQ(check.code, 0) << check.err;
  // The script's humanNs against the report's human_ns, value by value.
  const std::vector<long long> values = {
      0,          999,         1000,        1234,          999'499,         999'500,
      12'345'678, 999'499'999, 999'500'000, 1'234'567'890, 999'499'999'999, 1'000'000'000'000,
      -5,         -2'500'000};
  std::string list;
  for (long long v : values) list += (list.empty() ? "" : ",") + std::to_string(v);
  const Result out = run({JITSCOPE_NODE, "-e",
                          "const m = require(" + json(js).dump() + "); for (const v of [" + list +
                              "]) console.log(m.humanNs(v));"});
  ASSERT_EQ(out.code, 0) << out.err;
  std::string expected;
  for (long long v : values) expected += jitscope::report::human_ns(v) + "\n";
  EXPECT_EQ(out.out, expected);
}
#endif

}  // namespace
