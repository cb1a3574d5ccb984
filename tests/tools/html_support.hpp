// What the HTML report's tests share (report_html_test.cpp,
// report_html_page_test.cpp): running jitscope-report --format html, and
// taking the page's data block and script out of it as an HTML parser would.
#pragma once

#include "report_support.hpp"
#include "trace_support.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

namespace jitscope::testing::report {

inline constexpr const char* kDataOpen = "<script type=\"application/json\" id=\"jitscope-data\">";

// The data block's text: from its opening tag to the first "</script", as
// an HTML parser ends it (whatever the JSON inside says).
inline std::string data_text(const std::string& html) {
  const std::size_t open = html.find(kDataOpen);
  if (open == std::string::npos) return {};
  const std::size_t begin = open + std::string(kDataOpen).size();
  const std::size_t end = html.find("</script", begin);
  return html.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
}

inline json page_data(const std::string& html) {
  const std::string text = data_text(html);
  EXPECT_FALSE(text.empty()) << "no data block";
  return json::parse(text);
}

// The page's own script (the second <script>).
inline std::string page_script(const std::string& html) {
  const std::size_t data = html.find(kDataOpen);
  const std::size_t open = html.find("<script>", data);
  if (open == std::string::npos) return {};
  const std::size_t begin = open + 8;
  return html.substr(begin, html.find("</script>", begin) - begin);
}

// jitscope-report with `args` and --format html -o `out`; the page.
inline std::string html_report(std::vector<std::string> args, const std::string& out) {
  args.insert(args.end(), {"--format", "html", "-o", out});
  const Result r = report(args);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  return read_file(out);
}

// The data without what only the page adds (schema, artifact hrefs): the
// JSON format's object.
inline json without_page_extras(json data) {
  data.erase("schema");
  for (json& u : data["units"]) {
    if (!u["metrics"].is_object()) continue;
    for (json& a : u["metrics"]["artifacts"]) a.erase("href");
  }
  return data;
}

// Every histogram: contiguous bins whose counts sum to the name's count.
inline void expect_histograms(const json& data) {
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

inline const json* find_unit(const json& data, const std::string& compile_id) {
  for (const json& u : data["units"]) {
    if (u["compile_id"] == compile_id) return &u;
  }
  return nullptr;
}

// A metrics file's compile record for `compile_id` ("n<frame digit>", 10 µs),
// `rest` (",\"key\":value...") added.
inline std::string metrics_line(const std::string& compile_id, const std::string& rest) {
  return R"({"compile_id":")" + compile_id + R"(","name":"n)" + compile_id.substr(0, 1) +
         R"(","duration_us":10)" + rest + "}\n";
}

}  // namespace jitscope::testing::report
