// The jitscope session of a sample run, and absolute paths for its output.
#pragma once

#include <jitscope/jitscope.hpp>

#include <string>

namespace sample_common {

// `path` made absolute and normal; itself when empty or on error.
std::string absolute(const std::string& path);

// Started here with `trace` and `metrics`, unless JITSCOPE_TRACE started one
// when the program loaded (then its files are used). The JITSCOPE_DISABLE
// build starts none. Stopped at destruction, if not before.
class TraceSession {
 public:
  TraceSession(const std::string& trace, const std::string& metrics,
               const std::string& process_name, bool gpu);
  ~TraceSession() { (void)jitscope::stop(); }
  TraceSession(const TraceSession&) = delete;
  TraceSession& operator=(const TraceSession&) = delete;

  const std::string& trace() const { return trace_; }      // empty when untraced
  const std::string& metrics() const { return metrics_; }  // empty when untraced
  jitscope::SessionStats stop() {
    jitscope::SessionStats stats;
    (void)jitscope::stop(&stats);
    return stats;
  }

 private:
  std::string trace_;
  std::string metrics_;
};

}  // namespace sample_common
