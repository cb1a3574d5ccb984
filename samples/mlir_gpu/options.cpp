// The command line, with CLI11 (see options.hpp).
#include "options.hpp"

#include "kernel_catalog.hpp"
#include "ptxas_check.hpp"

#include <CLI/CLI.hpp>

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <system_error>

namespace mlir_gpu {

int parse_options(int argc, char** argv, Options* out) {
  Options& o = *out;
  CLI::App app{
      "mlir_gpu: a small MLIR GPU compiler, instrumented with jitscope. Generates kernels as\n"
      "MLIR (gpu, arith, memref and scf dialects: elementwise, reduction and tiled matmul\n"
      "families), lowers them to NVVM with an MLIR pass pipeline, optimizes the LLVM IR at O3,\n"
      "emits sm_90 PTX with LLVM's NVPTX backend and links it to a cubin with nvJitLink, on a\n"
      "pool of threads, with a disk cache. With --run and a GPU it loads and runs them.",
      "mlir_gpu"};
  app.add_option("--kernels", o.kernels, "kernels to generate and compile")
      ->check(CLI::Range(1, catalogue_size()))
      ->capture_default_str();
  app.add_option("--threads", o.threads, "compile worker threads")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  app.add_option("--opt-level", o.opt_level,
                 "LLVM's optimization level (the O1, O2 or O3 pipeline; in the cache key)")
      ->check(CLI::Range(1, 3))
      ->capture_default_str();
  CLI::Option* cache_dir = app.add_option("--cache-dir", o.cache_dir, "on-disk PTX and cubin cache")
                               ->capture_default_str();
  CLI::Option* no_cache =
      app.add_flag("--no-cache", o.no_cache, "compile everything; read and write no cache");
  cache_dir->excludes(no_cache);
  app.add_option("--out-dir", o.out_dir, "write each kernel's .mlir, .ptx and .cubin here");
  app.add_option("--trace", o.trace, "the Chrome trace JSON file (JITSCOPE_TRACE wins)")
      ->check([](const std::string& v) { return v.empty() ? "must not be empty" : ""; })
      ->capture_default_str();
  app.add_option("--metrics", o.metrics, "compile records as JSON lines (empty: none)")
      ->capture_default_str();
  app.add_flag("--run", o.run, "load and launch each kernel on the GPU (skipped without one)");
  app.add_flag("-q,--quiet", o.quiet, "no summary on stdout");
  app.add_option("--inject-error", o.inject_error,
                 "give this kernel's MLIR an error (to see a failing kernel)");
  CLI::Option* ptxas_check =
      app.add_flag("--ptxas-check", o.ptxas_check,
                   "run CUDA's ptxas on each kernel's PTX as a child process, outside every "
                   "span (jitscope-report's unexplained time finds it)");
  app.add_option("--ptxas", o.ptxas, "the ptxas --ptxas-check runs")
      ->default_str(default_ptxas().empty() ? "none found at build time" : default_ptxas())
      ->needs(ptxas_check);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);  // prints the help or the error
    return code == 0 ? 0 : 2;
  }
  if (o.ptxas.empty()) o.ptxas = default_ptxas();
  std::error_code ec;
  if (o.ptxas_check && (o.ptxas.empty() || !std::filesystem::is_regular_file(o.ptxas, ec) ||
                        ::access(o.ptxas.c_str(), X_OK) != 0)) {
    std::fprintf(stderr, "--ptxas-check: no ptxas to run%s (give --ptxas PATH)\n",
                 o.ptxas.empty() ? "" : (" at " + o.ptxas).c_str());
    return 2;
  }
  if (!o.inject_error.empty()) {
    bool known = false;
    for (const KernelSpec& k : make_kernels(o.kernels)) known |= k.name == o.inject_error;
    if (!known) {
      std::fprintf(stderr, "--inject-error: '%s' is not one of the %d kernels (e.g. %s)\n",
                   o.inject_error.c_str(), o.kernels, make_kernels(1)[0].name.c_str());
      return 2;
    }
  }
  return -1;
}

}  // namespace mlir_gpu
