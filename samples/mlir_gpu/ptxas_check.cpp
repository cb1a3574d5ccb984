// CUDA's ptxas as a child process (see ptxas_check.hpp).
#include "ptxas_check.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <system_error>
#include <vector>

extern char** environ;

#ifndef MLIR_GPU_PTXAS
#define MLIR_GPU_PTXAS ""
#endif

namespace mlir_gpu {
namespace fs = std::filesystem;

std::string default_ptxas() { return MLIR_GPU_PTXAS; }

PtxasCheck run_ptxas(const std::string& ptxas, const std::string& ptx, const std::string& kernel) {
  PtxasCheck out;
  // A folder of its own (mkdtemp: private, never an existing path), removed
  // with what is in it whatever happens below.
  std::error_code ec;
  std::string dir = (fs::temp_directory_path(ec) / "mlir_gpu.ptxas.XXXXXX").string();
  if (ec || ::mkdtemp(dir.data()) == nullptr) {
    out.error = "no scratch folder for ptxas: " + (ec ? ec.message() : std::strerror(errno));
    return out;
  }
  struct Cleanup {
    const std::string& dir;
    ~Cleanup() {
      std::error_code ignored;
      fs::remove_all(dir, ignored);
    }
  } cleanup{dir};
  std::string stem = kernel;  // the sample's names are [A-Za-z0-9_]; anything else is '_'
  for (char& c : stem) {
    if (std::isalnum(static_cast<unsigned char>(c)) == 0 && c != '_') c = '_';
  }
  const std::string ptx_path = dir + "/" + stem + ".ptx", cubin_path = dir + "/" + stem + ".cubin",
                    log_path = dir + "/ptxas.log";
  {
    std::ofstream f(ptx_path, std::ios::binary);
    f.write(ptx.data(), static_cast<std::streamsize>(ptx.size()));
    f.close();
    if (!f) {
      out.error = "cannot write " + ptx_path;
      return out;
    }
  }
  std::vector<std::string> args = {ptxas, "-arch=sm_90", ptx_path, "-o", cubin_path};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  // The child's output into a file of the folder (opened here: its failure
  // is said as such, not as ptxas's).
  const int log_fd = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (log_fd < 0) {
    out.error = "cannot create " + log_path + ": " + std::strerror(errno);
    return out;
  }
  posix_spawn_file_actions_t actions;
  const int made = posix_spawn_file_actions_init(&actions);
  int rc = made;
  if (rc == 0)
    rc = posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  if (rc == 0) rc = posix_spawn_file_actions_adddup2(&actions, log_fd, STDOUT_FILENO);
  if (rc == 0) rc = posix_spawn_file_actions_adddup2(&actions, log_fd, STDERR_FILENO);
  const auto t0 = std::chrono::steady_clock::now();
  pid_t pid = -1;
  int spawned =
      rc == 0 ? posix_spawn(&pid, ptxas.c_str(), &actions, nullptr, argv.data(), environ) : rc;
  if (made == 0) posix_spawn_file_actions_destroy(&actions);
  ::close(log_fd);
  int status = 0;
  if (spawned == 0) {
    pid_t waited = -1;
    while ((waited = ::waitpid(pid, &status, 0)) < 0 && errno == EINTR) {
    }
    if (waited < 0) spawned = errno;  // e.g. ECHILD where the host ignores SIGCHLD
  }
  out.ns = static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0)
          .count());
  if (std::ifstream log(log_path, std::ios::binary); log) {
    out.log.assign(std::istreambuf_iterator<char>(log), std::istreambuf_iterator<char>());
  }
  if (spawned != 0) {
    out.error = "cannot run " + ptxas + ": " + std::strerror(spawned);
  } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    out.error = "ptxas -arch=sm_90 rejected the PTX (" +
                (WIFEXITED(status) ? "exit " + std::to_string(WEXITSTATUS(status))
                                   : "signal " + std::to_string(WTERMSIG(status))) +
                ")";
  }
  return out;
}

}  // namespace mlir_gpu
