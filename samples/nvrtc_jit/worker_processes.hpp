// Compile worker processes, like PyTorch Inductor's subprocess pool: the
// parent starts N copies of its own executable (posix_spawn of
// /proc/self/exe), each compiling its shard of the kernels with its own
// threads and its own jitscope session (trace and metrics files of its own),
// and hands the cubins back through the disk cache.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace nvrtc_jit {

struct WorkerProcess {
  int index = 0;
  pid_t pid = -1;       // -1: never started
  std::string trace;    // its own files (absolute)
  std::string metrics;  // empty: none
  std::string label;    // "nvrtc_jit worker 0"
  bool ok = false;      // exited with status 0
  std::string failure;  // how it ended otherwise
};

// This run's id (16 hex digits, random, the same for the whole process),
// which spawn_workers hands each worker in NVRTC_JIT_RUN: a cache entry a
// worker stores names it, so that the parent tells this run's entries from
// an earlier run's, whose worker may have had the same pid (a container's
// pids start over every run).
const std::string& run_id();
inline constexpr const char* kRunIdVariable = "NVRTC_JIT_RUN";

// "dir/run.trace.json" -> "dir/run.trace.worker-3.json" (same folder and extension).
std::string worker_file(const std::string& path, int index);

// Starts `count` workers: this executable with `args` plus its own
// --worker-process, --of, --trace and --metrics. The JITSCOPE_TRACE family of
// variables is removed from their environment, so that they never write the
// parent's files. False (after one line per failure) if any could not start;
// those that did are in *workers either way.
bool spawn_workers(int count, const std::vector<std::string>& args, const std::string& trace,
                   const std::string& metrics, std::vector<WorkerProcess>* workers);

// Waits for every started worker. One that runs past `timeout_s` is killed
// (SIGKILL); one that fails or is killed gets one line. True if all exited 0.
bool wait_workers(std::vector<WorkerProcess>* workers, int timeout_s);

}  // namespace nvrtc_jit
