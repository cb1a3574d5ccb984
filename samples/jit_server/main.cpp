// jit_server: a long-running JIT server in flight-recorder mode (issue 39,
// docs/flight-recorder.md). It warms up by compiling the kernels of the
// shapes it knows (NVRTC to LTO-IR, nvJitLink to a cubin, with the disk
// cache of nvrtc_jit), says jitscope::mark_ready(), then serves a stream of
// requests. Three requests bring a shape it has not compiled, one of them a
// pathological kernel that compiles slowly: each is a compile while
// serving, and the flight recorder leaves one snapshot per such compile
// (a slow one's trigger says it is slow), named in one `jitscope:` line
// each, with nothing else written but the metrics file.
//
// No GPU is needed: a request's kernel "runs" as a sleep of --request-us.
// Run with --help for the options; JITSCOPE_* variables, when set, start
// the session instead (and name its files).
#include "common/trace_session.hpp"
#include "nvrtc_jit/disk_cache.hpp"
#include "nvrtc_jit/toolchain.hpp"

#include <jitscope/compile.hpp>
#include <jitscope/jitscope.hpp>

#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdio>
#include <map>
#include <string>
#include <thread>
#include <vector>

namespace {

using nvrtc_jit::CachedCubin;
using nvrtc_jit::DiskCache;
using nvrtc_jit::Toolchain;

struct Shape {
  int rows = 0, cols = 0;
  bool pathological = false;  // generated code gone wild: seconds to compile
  std::string name() const {
    return std::string(pathological ? "generated_" : "scale_") + std::to_string(rows) + "x" +
           std::to_string(cols);
  }
};

constexpr int kPathologicalStatements = 6000;

// A kernel specialized for its shape, as a shape-specializing JIT makes it.
std::string source_of(const Shape& s) {
  const std::string n = std::to_string(s.rows * s.cols);
  std::string body =
      "  if (i < " + n + ") out[i] = alpha * in[i] + (i % " + std::to_string(s.cols) + ");\n";
  if (s.pathological) {
    // Straight-line code a code generator went wild on: thousands of
    // dependent statements that NVRTC and nvJitLink each work through.
    body = "  float acc = in[i % " + n + "];\n";
    for (int k = 0; k < kPathologicalStatements; ++k) {
      body += "  acc = acc * " + std::to_string(1.0 + k * 1e-4) + "f + __sinf(acc + " +
              std::to_string(k) + ".0f);\n";
    }
    body += "  if (i < " + n + ") out[i] = acc;\n";
  }
  return "extern \"C\" __global__ void " + s.name() +
         "(float* out, const float* in, float alpha) {\n"
         "  const int i = blockIdx.x * blockDim.x + threadIdx.x;\n" +
         body + "}\n";
}

struct Server {
  Toolchain toolchain;
  DiskCache cache;
  std::map<std::string, std::vector<char>> loaded;  // kernel name -> cubin
  int compiles = 0, failures = 0;
};

// One compile unit: source, disk cache, NVRTC, nvJitLink, store.
bool compile(Server& server, const Shape& shape) {
  const std::string name = shape.name();
  jitscope::CompileUnit unit({.frame = name, .graph = "serve"});
  ++server.compiles;
  std::string source;
  {
    JITSCOPE_PHASE("generate", {.column = "generate_us"});
    source = source_of(shape);
  }
  const std::string key = DiskCache::key_text(server.toolchain, name, source);
  const std::string hash = DiskCache::key_hash(key);
  CachedCubin cached;
  DiskCache::Lookup found = DiskCache::Lookup::kMiss;
  {
    JITSCOPE_PHASE("cache lookup", {.column = "cache_lookup_us"});
    found = server.cache.load(name, key, &cached);
  }
  if (found == DiskCache::Lookup::kHit) {
    unit.cache_hit(hash, "disk_cache");
    server.loaded[name] = std::move(cached.cubin);
    return true;
  }
  unit.cache_miss(hash, "disk_cache");
  nvrtc_jit::BuildOutput ltoir;
  {
    JITSCOPE_PHASE("nvrtc", {.column = "nvrtc_us"});
    ltoir = nvrtc_jit::compile_to_ltoir(server.toolchain, source, name + ".cu");
  }
  nvrtc_jit::BuildOutput cubin;
  if (ltoir.ok) {
    JITSCOPE_PHASE("nvjitlink", {.column = "nvjitlink_us"});
    cubin = nvrtc_jit::link_to_cubin(server.toolchain, ltoir.bytes, name + ".ltoir");
  }
  const nvrtc_jit::BuildOutput& last = ltoir.ok ? cubin : ltoir;
  if (!last.ok) {
    unit.fail(ltoir.ok ? "nvjitlink" : "nvrtc", last.error);
    std::fprintf(stderr, "jit_server: %s did not build: %s\n%s\n", name.c_str(), last.error.c_str(),
                 last.log.c_str());
    ++server.failures;
    return false;
  }
  (void)unit.set("cubin_bytes", static_cast<std::int64_t>(cubin.bytes.size()));
  {
    JITSCOPE_PHASE("cache store", {.column = "cache_store_us"});
    server.cache.store(name, key, cubin.bytes, ltoir.bytes.size());
  }
  server.loaded[name] = std::move(cubin.bytes);
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"jit_server: a JIT server in flight-recorder mode (docs/flight-recorder.md)"};
  std::string trace = "jit_server_trace.json";
  std::string metrics = "jit_server_metrics.jsonl";
  std::string cache_dir = "jit_server_cache";
  std::string arch = "sm_90";
  int requests = 240;
  int request_us = 2000;
  std::uint64_t flight_mib = 8;
  int slow_unit_ms = 500;
  app.add_option("--trace", trace, "names the snapshots (trace.snapshot.<pid>.<n>.json)");
  app.add_option("--metrics", metrics, "the per-unit records, written as units end");
  app.add_option("--cache", cache_dir, "the disk cache of cubins (kept across runs)");
  app.add_option("--arch", arch, "target GPU architecture")
      ->check(
          CLI::Validator([](std::string& v) { return nvrtc_jit::check_arch(v); }, "sm_XX", "arch"));
  app.add_option("--requests", requests, "requests served after warm-up (at least 8)")
      ->check(CLI::Range(8, 1000000));
  app.add_option("--request-us", request_us, "each request's kernel time (a sleep)")
      ->check(CLI::Range(0, 1000000));
  app.add_option("--flight-mib", flight_mib, "the flight recorder's window")
      ->check(CLI::Range(1, 4096));
  app.add_option("--slow-unit-ms", slow_unit_ms, "a compile this slow is an alarm")
      ->check(CLI::Range(1, 86400000));
  CLI11_PARSE(app, argc, argv);

  // The variables, when set, started the session at load; else this one.
  if (!jitscope::active()) {
    jitscope::Config cfg;
    cfg.output_path = sample_common::absolute(trace);
    cfg.metrics_path = sample_common::absolute(metrics);
    cfg.process_name = "jit_server";
    cfg.cupti = jitscope::CuptiMode::kOff;  // no kernel runs: nothing for CUPTI to see
    cfg.flight_recorder_bytes = flight_mib << 20;
    cfg.snapshot_slow_unit = std::chrono::milliseconds(slow_unit_ms);
    cfg.snapshot_min_interval = std::chrono::milliseconds(0);  // one per compile, however close
    if (const jitscope::Status st = jitscope::start(cfg); !st) {
      std::fprintf(stderr, "jit_server: serving untraced: %s\n", st.message().c_str());
    }
  }

  Server server{
      nvrtc_jit::make_toolchain(arch), DiskCache(sample_common::absolute(cache_dir)), {}, 0, 0};
  server.cache.prepare();
  jitscope::set_thread_name("server");

  const std::vector<Shape> known = {{128, 128}, {256, 256}, {512, 128}, {1024, 64}};
  {
    JITSCOPE_SPAN("warm_up");
    for (const Shape& s : known) compile(server, s);
  }
  const int warm_compiles = server.compiles;
  jitscope::mark_ready();

  // The three shapes it has not seen, at fixed points of the stream.
  const std::map<int, Shape> arrivals = {{requests / 4, {384, 384}},
                                         {requests / 2, {2048, 2048, true}},
                                         {3 * requests / 4, {96, 4096}}};
  static const jitscope::PhaseKey kServe("serve_request");
  for (int r = 0; r < requests; ++r) {
    const auto arrival = arrivals.find(r);
    const Shape shape = arrival != arrivals.end() ? arrival->second : known[r % known.size()];
    jitscope::Phase serve(kServe, {{"request", r}, {"shape", shape.name()}});
    if (server.loaded.find(shape.name()) == server.loaded.end()) compile(server, shape);
    JITSCOPE_SPAN("run_kernel");
    std::this_thread::sleep_for(std::chrono::microseconds(request_us));
  }

  jitscope::SessionStats stats;
  const bool traced = jitscope::active();
  (void)jitscope::stop(&stats);
  std::printf("requests served:  %d\n", requests);
  std::printf("compiles:         %d in warm-up, %d while serving (%d failed)\n", warm_compiles,
              server.compiles - warm_compiles, server.failures);
  if (traced) {
    std::printf("snapshots:        %llu written, %llu refused (each named above)\n",
                static_cast<unsigned long long>(stats.snapshots_written),
                static_cast<unsigned long long>(stats.snapshots_refused));
  }
  return server.failures == 0 ? 0 : 1;
}
