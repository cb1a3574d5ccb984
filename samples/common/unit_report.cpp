#include "common/unit_report.hpp"

#include <jitscope/jitscope.hpp>

#include <cstdio>

namespace sample_common {

void record_field(const char* sample, std::string_view key, const jitscope::FieldValue& value) {
  if (!jitscope::active()) return;
  const jitscope::Status st =
      jitscope::toplevel_event().set(jitscope::DataLevel::kMetric, key, value, /*overwrite=*/true);
  if (!st) {
    std::fprintf(stderr, "%s: warning: record field %.*s refused: %s\n", sample,
                 static_cast<int>(key.size()), key.data(), st.message().c_str());
  }
}

void report_failure(const char* sample, const std::string& kernel, std::string_view stage,
                    const std::string& error, std::string_view log) {
  std::string text = std::string(sample) + ": kernel " + kernel + " failed: " + error + "\n";
  while (!log.empty() && log.back() == '\n') log.remove_suffix(1);
  if (!log.empty()) {
    text += "---- " + std::string(stage) + " log ----\n" + std::string(log) + "\n----\n";
  }
  std::fputs(text.c_str(), stderr);
}

}  // namespace sample_common
