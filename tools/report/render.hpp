// Formats a Report: a terminal table (aligned columns, human units), CSV
// (one table after another, each after a "# <section>" line; times in ns),
// JSON (one object, a key per section, times in ns) or Markdown (GitHub
// tables, human units).
#pragma once

#include "report_data.hpp"

#include <functional>
#include <string>
#include <string_view>

namespace jitscope::report {

enum class Format { kTable, kCsv, kJson, kMarkdown };

struct Sections {
  bool header = true;
  bool compile_times = true;
  bool phases = true;
  bool units = true;
  bool top_spans = true;
  bool gpu = true;
};

// The section names --section accepts (also the JSON keys).
inline constexpr std::string_view kSectionNames[] = {"header", "compile_times", "phases",
                                                     "units",  "top_spans",     "gpu"};

// Receives the report in pieces (about 1 MiB each), in order.
using Writer = std::function<void(std::string_view)>;

// Formats `r`, handing the text to `write` as it goes: memory stays at one
// piece plus one row of the biggest table, however many units there are.
void render(const Report& r, Format format, const Sections& sections, const Writer& write);

// 12.3 ms, 1.23 s, 850 ns, 4.56 µs: three significant digits.
std::string human_ns(std::int64_t ns);

}  // namespace jitscope::report
