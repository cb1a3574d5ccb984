#include "common/trace_session.hpp"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <system_error>

namespace sample_common {

std::string absolute(const std::string& path) {
  if (path.empty()) return path;
  std::error_code ec;
  const std::filesystem::path p = std::filesystem::absolute(path, ec);
  return ec ? path : p.lexically_normal().string();
}

TraceSession::TraceSession(const std::string& trace, const std::string& metrics,
                           const std::string& process_name, bool gpu) {
#if defined(JITSCOPE_DISABLE)
  (void)trace, (void)metrics, (void)process_name, (void)gpu;
#else
  if (jitscope::active()) {
    const char* env_trace = std::getenv("JITSCOPE_TRACE");
    const char* env_metrics = std::getenv("JITSCOPE_METRICS");
    trace_ = absolute(env_trace != nullptr ? env_trace : "");
    metrics_ = absolute(env_metrics != nullptr ? env_metrics : "");
    return;
  }
  jitscope::Config cfg;
  cfg.output_path = absolute(trace);
  // The JITSCOPE_* knobs (docs/configuration.md: JITSCOPE_COMPRESSION, ...)
  // apply (JITSCOPE_TRACE names the file instead of the path above); the
  // fields set below are this program's own.
  if (const jitscope::Status st = jitscope::Config::from_env(&cfg, /*require_trace=*/false); !st) {
    std::fprintf(stderr, "%s: %s; the defaults apply\n", process_name.c_str(),
                 st.message().c_str());
  }
  cfg.metrics_path = absolute(metrics);
  cfg.process_name = process_name;
  cfg.overflow = jitscope::OverflowPolicy::kBlock;  // a sample wants every event
  // Without a GPU the sample says so itself: jitscope need not say it again.
  // With one, JITSCOPE_CUPTI decides (from_env above; auto when unset).
  if (!gpu) cfg.cupti = jitscope::CuptiMode::kOff;
  if (jitscope::start(cfg)) {
    trace_ = cfg.output_path;
    metrics_ = cfg.metrics_path;
  }  // else jitscope said why; the run goes on untraced
#endif
}

}  // namespace sample_common
