// CUDA's ptxas as a child process (see ptxas_check.hpp).
#include "ptxas_check.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

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
  std::error_code ec;
  const fs::path dir = fs::temp_directory_path(ec);
  if (ec) {
    out.error = "no temporary folder: " + ec.message();
    return out;
  }
  const std::string stem =
      (dir / ("mlir_gpu." + std::to_string(::getpid()) + "." + kernel)).string();
  const std::string ptx_path = stem + ".ptx", cubin_path = stem + ".cubin",
                    log_path = stem + ".ptxas.log";
  {
    std::ofstream f(ptx_path, std::ios::binary);
    f.write(ptx.data(), static_cast<std::streamsize>(ptx.size()));
    if (!f) {
      out.error = "cannot write " + ptx_path;
      return out;
    }
  }
  std::vector<std::string> args = {ptxas, "-arch=sm_90", ptx_path, "-o", cubin_path};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log_path.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  const auto t0 = std::chrono::steady_clock::now();
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, ptxas.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  int status = 0;
  if (rc == 0) {
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
  }
  out.ns = static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0)
          .count());
  if (std::ifstream log(log_path, std::ios::binary); log) {
    out.log.assign(std::istreambuf_iterator<char>(log), std::istreambuf_iterator<char>());
  }
  if (rc != 0) {
    out.error = "cannot run " + ptxas + ": " + std::strerror(rc);
  } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    out.error = "ptxas -arch=sm_90 rejected the PTX (" +
                (WIFEXITED(status) ? "exit " + std::to_string(WEXITSTATUS(status))
                                   : "signal " + std::to_string(WTERMSIG(status))) +
                ")";
  }
  for (const std::string& p : {ptx_path, cubin_path, log_path}) fs::remove(p, ec);
  return out;
}

}  // namespace mlir_gpu
