// Formats a Report: a terminal table (aligned columns, human units), CSV
// (one table after another, each after a "# <section>" line; times in ns),
// JSON (one object, a key per section, times in ns), Markdown (GitHub
// tables, human units) or HTML (one self-contained page: the JSON format's
// data in a script block and the script that builds the page from it;
// docs/report-html.md).
#pragma once

#include "report_data.hpp"

#include <functional>
#include <string>
#include <string_view>

namespace jitscope::report {

enum class Format { kTable, kCsv, kJson, kMarkdown, kHtml };

struct Sections {
  bool header = true;
  bool compile_times = true;
  bool phases = true;
  bool units = true;
  bool top_spans = true;
  bool gpu = true;
  bool caches = true;
  bool autotune = true;
  bool critical_path = true;
};

// The section names --section accepts (also the JSON keys).
inline constexpr std::string_view kSectionNames[] = {"header", "compile_times", "phases",
                                                     "units",  "top_spans",     "gpu",
                                                     "caches", "autotune",      "critical_path"};

// Receives the report in pieces (about 1 MiB each), in order.
using Writer = std::function<void(std::string_view)>;

// Formats `r`, handing the text to `write` as it goes: memory stays at one
// piece plus one row of the biggest table, however many units there are.
// kHtml links artifacts as render_html() does with the current directory.
void render(const Report& r, Format format, const Sections& sections, const Writer& write);

struct Comparison;
struct CompareSections;

struct HtmlOptions {
  // Artifact links are relative to this folder (absolute: the HTML file's
  // folder, or the current directory when writing to stdout) when the
  // artifact lies under it, else file:// URLs of their absolute paths.
  std::string link_base;
};

// The HTML page of `r`; with `comparison` (--baseline) also its compare
// section (`compare_sections` chooses the tables). Streamed like render().
void render_html(const Report& r, const Sections& sections, const Comparison* comparison,
                 const CompareSections* compare_sections, const HtmlOptions& options,
                 const Writer& write);

// An artifact's link: `path` relative to `base` (both absolute, compared
// lexically) when it lies under it, else a file:// URL; percent-encoded
// (RFC 3986: all but unreserved characters and '/'). An empty `base` (the
// page's folder is unknown) makes no link relative.
std::string artifact_href(const std::string& path, const std::string& base);

// 12.3 ms, 1.23 s, 850 ns, 4.56 µs: three significant digits.
std::string human_ns(std::int64_t ns);

}  // namespace jitscope::report
