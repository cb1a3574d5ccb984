// jitscope hello: a pretend JIT. Worker threads "compile" kernels through
// nested phases with args, instants and counters; the main thread wraps it
// all in a "session" span. Prints what the trace holds.
//
//   jitscope_hello [--trace PATH] [--threads N] [--kernels K]
//
// With JITSCOPE_TRACE set, the session started at load is used instead.
#include <jitscope/jitscope.hpp>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

// Deterministic busy work standing in for a compiler pass.
std::uint64_t work(std::uint64_t seed, int rounds) {
  std::uint64_t x = seed | 1;
  for (int i = 0; i < rounds * 1000; ++i) x ^= x << 13, x ^= x >> 7, x ^= x << 17;
  return x;
}

std::atomic<std::uint64_t> g_sink{0};
std::atomic<int> g_remaining{0};

void compile_kernels(int worker, int kernels) {
  JITSCOPE_THREAD_NAME("worker-" + std::to_string(worker));
  for (int k = 0; k < kernels; ++k) {
    const std::string name = "kernel_" + std::to_string(worker) + "_" + std::to_string(k);
    jitscope::Span unit("compile_kernel", {{"kernel", k}, {"name", name}});
    std::uint64_t h = 0;
    {
      JITSCOPE_SPAN("parse");
      h += work(k, 20);
    }
    {
      JITSCOPE_SPAN("lower");
      JITSCOPE_SPAN_ARGS("optimize", {"level", 3}, {"unroll", true});
      h += work(h, 40);
    }
    {
      JITSCOPE_SPAN("codegen");
      JITSCOPE_SPAN_DYN("emit " + name);  // a runtime-built name
      h += work(h, 30);
    }
    unit.arg("code_bytes", static_cast<std::uint64_t>(h % 4096 + 512));
    JITSCOPE_INSTANT("cache_miss", {"kernel", name});
    JITSCOPE_COUNTER("queue_depth", g_remaining.fetch_sub(1) - 1);
    g_sink += h;
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::string trace = "hello.trace.json";
  int threads = 4;
  int kernels = 8;
  for (int i = 1; i < argc; ++i) {
    const bool has_value = i + 1 < argc;
    if (std::strcmp(argv[i], "--trace") == 0 && has_value) {
      trace = argv[++i];
    } else if (std::strcmp(argv[i], "--threads") == 0 && has_value) {
      threads = std::atoi(argv[++i]);
    } else if (std::strcmp(argv[i], "--kernels") == 0 && has_value) {
      kernels = std::atoi(argv[++i]);
    } else {
      std::fprintf(stderr, "usage: %s [--trace PATH] [--threads N] [--kernels K]\n", argv[0]);
      return 2;
    }
  }
  if (threads < 1 || threads > 1024 || kernels < 0) {
    std::fprintf(stderr, "hello: --threads must be in [1, 1024] and --kernels >= 0\n");
    return 2;
  }

  if (!jitscope::active()) {
    jitscope::Config cfg;
    cfg.output_path = trace;
    // The JITSCOPE_* knobs (docs/configuration.md: JITSCOPE_COMPRESSION, ...)
    // apply (JITSCOPE_TRACE names the file instead of the path above); the
    // fields set below are this program's own.
    if (const jitscope::Status st = jitscope::Config::from_env(&cfg, /*require_trace=*/false);
        !st) {
      std::fprintf(stderr, "hello: %s; the defaults apply\n", st.message().c_str());
    }
    cfg.overflow = jitscope::OverflowPolicy::kBlock;  // a sample wants every event
    (void)jitscope::start(cfg);  // on failure jitscope says why; we run untraced
  }

  JITSCOPE_THREAD_NAME("main");
  g_remaining = threads * kernels;
  {
    JITSCOPE_SPAN_ARGS("session", {"threads", threads}, {"kernels", kernels});
    std::vector<std::thread> pool;
    for (int w = 0; w < threads; ++w) pool.emplace_back(compile_kernels, w, kernels);
    for (auto& t : pool) t.join();
  }

  jitscope::SessionStats stats;
  const jitscope::Status st = jitscope::stop(&stats);
  if (stats.output_path.empty()) {
    std::printf("hello: compiled %d kernels on %d threads; no trace was recorded\n",
                threads * kernels, threads);
    return 0;
  }
  std::printf("hello: compiled %d kernels on %d threads\n", threads * kernels, threads);
  std::printf("trace:            %s (%llu bytes)\n", stats.output_path.c_str(),
              static_cast<unsigned long long>(stats.bytes_written));
  std::printf("events written:   %llu\n", static_cast<unsigned long long>(stats.events_written));
  std::printf("events dropped:   %llu\n", static_cast<unsigned long long>(stats.events_dropped));
  std::printf("threads traced:   %llu\n", static_cast<unsigned long long>(stats.threads));
  std::printf("open it at https://ui.perfetto.dev (Open trace file) or chrome://tracing\n");
  return st ? 0 : 1;
}
