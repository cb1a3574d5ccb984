// The HTML report's stylesheet and script (tools/report/html/report.css and
// report.js), embedded at build time by tools/report/html/embed.cmake into
// a generated html_assets.cpp, so jitscope-report is one file to install.
#pragma once

#include <string_view>

namespace jitscope::report {

extern const std::string_view kReportCss;
extern const std::string_view kReportJs;

}  // namespace jitscope::report
