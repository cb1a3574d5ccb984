// The command line, with CLI11 (see options.hpp).
#include "options.hpp"

#include "kernel_catalog.hpp"
#include "toolchain.hpp"

#include <CLI/CLI.hpp>

#include <cstdio>
#include <string>
#include <vector>

namespace nvrtc_jit {

int parse_options(int argc, char** argv, Options* out) {
  Options& o = *out;
  CLI::App app{
      "nvrtc_jit: a small GPU JIT, instrumented with jitscope. Generates CUDA C++ kernels\n"
      "(elementwise, reduction and tiled matmul families), compiles them with NVRTC to LTO-IR\n"
      "and links them with nvJitLink on worker threads or processes, caches the cubins on\n"
      "disk, and with a GPU loads them, autotunes each family and runs the winners.",
      "nvrtc_jit"};
  app.add_option("--kernels", o.kernels, "kernels to generate and compile")
      ->check(CLI::Range(1, catalogue_size()))
      ->capture_default_str();
  app.add_option("--workers", o.workers, "compile threads (per process with --processes)")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  app.add_option("--arch", o.arch, "target GPU architecture (NVRTC compute_XX, nvJitLink sm_XX)")
      ->check(CLI::Validator([](std::string& v) { return check_arch(v); }, "sm_XX", "arch"))
      ->capture_default_str();
  CLI::Option* cache_dir =
      app.add_option("--cache-dir", o.cache_dir, "on-disk cubin cache (shared by processes)")
          ->capture_default_str();
  CLI::Option* no_cache =
      app.add_flag("--no-cache", o.no_cache, "compile everything; read and write no cache");
  cache_dir->excludes(no_cache);
  app.add_option("--trace", o.trace, "the Chrome trace JSON file")
      ->check([](const std::string& v) { return v.empty() ? "must not be empty" : ""; })
      ->capture_default_str();
  app.add_option("--metrics", o.metrics, "compile records as JSON lines (empty: none)")
      ->capture_default_str();
  CLI::Option* processes =
      app.add_option("--processes", o.processes,
                     "compile in N worker processes (each with --workers threads), which hand "
                     "their cubins back through the cache")
          ->check(CLI::Range(2, 64));
  processes->excludes(no_cache);
  app.add_option("--worker-timeout", o.worker_timeout_s,
                 "seconds before a worker process is killed")
      ->check(CLI::Range(1, 86400))
      ->capture_default_str();
  app.add_option("--reps", o.reps, "timed launches per variant when autotuning")
      ->check(CLI::Range(1, 10000))
      ->capture_default_str();
  app.add_flag("--no-gpu", o.no_gpu, "compile only, even when a GPU is present");
  app.add_flag("-q,--quiet", o.quiet, "no summary on stdout");
  app.add_option("--nvrtc-option", o.nvrtc_extra,
                 "one more NVRTC option (repeat it for more): part of the cache key, so "
                 "changing it misses the cache, and the report says why (docs/caches.md)")
      ->allow_extra_args(false);
  app.add_option("--inject-compile-error", o.inject_error,
                 "give this kernel's source a compile error (to see a failing kernel)");
  // Hidden (empty group): how a parent starts its worker processes.
  CLI::Option* index =
      app.add_option("--worker-process", o.worker_index, "")->check(CLI::Range(0, 63))->group("");
  CLI::Option* count =
      app.add_option("--of", o.worker_count, "")->check(CLI::Range(2, 64))->group("");
  index->needs(count);
  count->needs(index);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);  // prints the help or the error
    return code == 0 ? 0 : 2;
  }
  if (o.worker_index >= 0 && o.worker_index >= o.worker_count) {
    std::fprintf(stderr, "nvrtc_jit: --worker-process %d is not below --of %d\n", o.worker_index,
                 o.worker_count);
    return 2;
  }
  if (!o.inject_error.empty()) {
    bool known = false;
    for (const KernelSpec& k : make_kernels(o.kernels)) known |= k.name == o.inject_error;
    if (!known) {
      std::fprintf(stderr,
                   "--inject-compile-error: '%s' is not one of the %d kernels (e.g. %s)\n"
                   "Run with --help for more information.\n",
                   o.inject_error.c_str(), o.kernels, make_kernels(1)[0].name.c_str());
      return 2;
    }
  }
  return -1;
}

std::vector<std::string> worker_arguments(const Options& o) {
  std::vector<std::string> args = {"--kernels",   std::to_string(o.kernels),
                                   "--workers",   std::to_string(o.workers),
                                   "--arch",      o.arch,
                                   "--cache-dir", o.cache_dir,
                                   "--quiet"};
  for (const std::string& extra : o.nvrtc_extra) args.push_back("--nvrtc-option=" + extra);
  if (!o.inject_error.empty()) {
    args.push_back("--inject-compile-error");
    args.push_back(o.inject_error);
  }
  return args;
}

}  // namespace nvrtc_jit
