// jitscope-report --format html, the page around its data: names that try
// to end the data block cannot (through the binary, and the escaper in
// process at every piece boundary), no URL that fetches anything,
// --section and --baseline choose the sections, exit codes are unchanged,
// and (with node) the embedded script parses, formats times as human_ns
// does and round-trips the unit hash. The data itself:
// report_html_test.cpp. Not covered: the page in a browser (the
// headless-Chromium test of the DOM contract is its own suite).
#include "html_support.hpp"
#include "render.hpp"
#include "render_internal.hpp"
#include "report_support.hpp"
#include "trace_support.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

namespace {

using jitscope::testing::read_file;
using jitscope::testing::temp_path;
using namespace jitscope::testing::report;

// ---- the data block cannot be ended early ----

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
  // A lone E2 before a whole U+2028 (invalid UTF-8): the held byte stays first.
  const std::string in =
      "{\"a\":\"x</script>\u2028y\u2029z\u2027\xe2\x80\","
      "\"b\":\"\xe2"
      "\xe2\x80\xa8"
      "w\"}\xe2";
  const std::string want =
      "{\"a\":\"x\\u003c/script>\\u2028y\\u2029z\u2027\xe2\x80\","
      "\"b\":\"\xe2"
      "\\u2028"
      "w\"}\xe2";
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
        "<div id=\"units-pager\"", "<input id=\"units-filter\"", "<svg id=\"timeline-chart\"",
        "<table id=\"compile-times-table\"", "<table id=\"gpu-table\"",
        "<table id=\"gpu-work-table\"", "<style>"}) {
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

// The caches section: on the page (with its nav link and tables) only when
// the trace has cache lookups, and then only with the caches section chosen.
TEST(HtmlReport, TheCachesSectionOnlyWithLookups) {
  const std::string unit =
      R"({"ph":"X","cat":"compile_unit","name":"[0/0] g","pid":1,"tid":1,"ts":0,)"
      R"("dur":10,"args":{"compile_id":"0/0"}})";
  const std::string lookup =
      R"({"ph":"i","s":"t","name":"cache_lookup","pid":1,"tid":1,"ts":1,"args":{)"
      R"("compile_id":"0/0","layer":"ptx","hit":false,"unit":"0/0",)"
      R"("key_parts":"{\"source\":\"a\"}"}})";
  const std::string without = write_temp("html_nocache", "[" + unit + "]");
  const std::string with = write_temp("html_cache", "[" + unit + "," + lookup + "]");
  const std::string plain = html_report({without}, temp_path("html_nocache") + ".html");
  EXPECT_EQ(plain.find("id=\"caches\""), std::string::npos);
  EXPECT_EQ(plain.find("href=\"#caches\""), std::string::npos);
  const std::string page = html_report({with}, temp_path("html_cache") + ".html");
  for (const char* id :
       {"<section id=\"caches\">", "<a href=\"#caches\">", "<table id=\"caches-table\"",
        "<table id=\"cache-misses-table\"", "<div id=\"cache-misses-pager\""}) {
    EXPECT_NE(page.find(id), std::string::npos) << id;
  }
  const json data = page_data(page);
  ASSERT_EQ(data["caches"].size(), 1u);
  EXPECT_EQ(data["caches"][0]["layer"], "ptx");
  EXPECT_EQ(data["caches"][0]["misses"], 1);
  const std::string units_only =
      html_report({with, "--section", "units"}, temp_path("html_cache_units") + ".html");
  EXPECT_EQ(units_only.find("id=\"caches\""), std::string::npos);
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
  EXPECT_FALSE(std::filesystem::exists(out));
  expect_error(report({"x.json", "--format", "htm"}), 2, "--format", "unknown format");
  const std::string bad = write_temp("html_bad", "[{\"ph\":\"X\",");
  const Result cut = report({bad, "--format", "html", "--metrics", "/nonexistent.jsonl"});
  EXPECT_EQ(cut.code, 1);
  EXPECT_EQ(cut.out, "");
}

// ---- the embedded script ----

#ifndef JITSCOPE_NODE
#define JITSCOPE_NODE ""  // not found at configure time: the test says it skipped
#endif
TEST(HtmlReport, EmbeddedScriptParsesAndFormatsAsHumanNs) {
  if (std::string_view(JITSCOPE_NODE).empty()) GTEST_SKIP() << "node was not found by CMake";
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

  // The unit hash round-trips (docs/report-html.md), and compile ids sort
  // by frame, then attempt, numerically.
  const std::string script_checks = R"(
const m = require()" + json(js).dump() +
                                    R"();
const cases = [[1234, '3/0'], [null, '0/1'], ['a:b/%c', 'x/y:z'], ['Spans', '10/2'], ['é', ' ']];
for (const [pid, id] of cases) {
  const h = m.unitHash(pid, id);
  const back = m.parseUnitHash(h);
  console.log(h, back.pid === (pid === null ? '' : String(pid)) && back.compileId === id);
}
const ids = ['10/0', '2/1', 'x', '2/0', '1/10'];
ids.sort((a, b) => m.compareValues(m.compileIdKey(a), m.compileIdKey(b)));
console.log(ids.join(' '));
console.log(m.parseUnitHash('#summary'), m.parseUnitHash('#unit=%E0%A4%A:1/0'));
)";
  const Result checks = run({JITSCOPE_NODE, "-e", script_checks});
  ASSERT_EQ(checks.code, 0) << checks.err;
  EXPECT_EQ(checks.out,
            "#unit=1234:3/0 true\n"
            "#unit=:0/1 true\n"
            "#unit=a%3Ab%2F%25c:x/y%3Az true\n"
            "#unit=Spans:10/2 true\n"
            "#unit=%C3%A9:%E2%80%A8 true\n"
            "1/10 2/0 2/1 10/0 x\n"
            "null null\n");
}

}  // namespace
