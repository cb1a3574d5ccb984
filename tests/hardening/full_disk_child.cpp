// A host whose disk fills up, for full_disk_test.cpp (issue 17 item 2),
// without root: RLIMIT_FSIZE makes every write past <limit> bytes of a file
// fail with EFBIG (SIGXFSZ ignored), as ENOSPC would.
//
//   full_disk_child <limit> <trace> <metrics>
//
// Starts a session writing <trace> and <metrics>, records spans (args of
// varied length, so events differ in size) and compile units until both
// files would pass <limit> several times over, stops, and exits 0 if stop()
// reported the failure (SessionStats::write_failed), 5 if not.
#include <jitscope/compile.hpp>
#include <jitscope/jitscope.hpp>

#include <signal.h>
#include <sys/resource.h>

#include <cstdio>
#include <cstdlib>
#include <string>

int main(int argc, char** argv) {
  if (argc != 4) return 64;
  const rlim_t limit = std::strtoull(argv[1], nullptr, 10);
  ::signal(SIGXFSZ, SIG_IGN);
  const struct rlimit rl = {limit, limit};
  if (::setrlimit(RLIMIT_FSIZE, &rl) != 0) return 65;

  jitscope::Config cfg;
  cfg.output_path = argv[2];
  cfg.metrics_path = argv[3];
  cfg.cupti = jitscope::CuptiMode::kOff;
  cfg.flush_interval = std::chrono::milliseconds(5);
  cfg.overflow = jitscope::OverflowPolicy::kBlock;  // every event reaches the writer
  if (!jitscope::start(cfg)) return 66;
  const std::string filler(97, 'x');
  const std::size_t enough = 8 * static_cast<std::size_t>(limit);
  for (std::size_t i = 0; i * 100 < enough; ++i) {
    jitscope::Span span("full_disk");
    span.arg("note", std::string_view(filler).substr(0, i % filler.size()));
  }
  for (std::size_t i = 0; i * 250 < enough; ++i) {
    jitscope::CompileUnit unit(jitscope::CompileUnitOptions{.graph = "full_disk"});
    (void)unit.set("note", std::string_view(filler).substr(0, i % filler.size()));
  }
  jitscope::SessionStats stats;
  const jitscope::Status stopped = jitscope::stop(&stats);
  std::printf("write_failed=%d stopped_ok=%d\n", stats.write_failed ? 1 : 0, stopped.ok() ? 1 : 0);
  return stats.write_failed && !stopped.ok() ? 0 : 5;
}
