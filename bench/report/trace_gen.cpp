// Writes a synthetic jitscope-like Chrome trace of about a given size, fast
// (hundreds of MB/s), for benchmarking jitscope-report on big inputs.
//
// usage: jitscope_trace_gen OUT BYTES [--threads N] [--units N] [--seed S] [--unterminated]
//                           [--metrics PATH]
//   --threads  compile threads (default 8; each has two codegen workers and a GPU stream)
//   --units    compile units (default: one per 512 KiB of output)
//   --metrics  also a metrics file (JSON lines) with one record per unit: phase
//              columns, caches, user fields, two artifacts, a failure every 50th
//              unit and a recompile reason on every second attempt (for the HTML
//              report at 10,000 units)
//
// The mix follows what jitscope writes for a multi-threaded compiler with
// CUPTI on: per compile unit, on one of N host threads, a unit slice
// ("[f/a] model__graph_n", cat compile_unit) around compile_graph > parse,
// passes > pass:* x3, codegen; attached unit slices on two worker threads
// with emit_kernel spans; step instants and counters carrying compile_id;
// CUDA calls (cuModuleLoadData in the unit, cuLaunchKernel later) and their
// kernels on a GPU process's stream threads (one per compile thread) with compiled_by /
// compiled_by_id / correlation, and the launch flows (s/f). Events are
// written in end order per thread (children first), as jitscope does; the
// array is closed with ']' unless --unterminated. Timestamps are µs with
// three decimals (ns), so totals are exact.
#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace {

class Out {
 public:
  explicit Out(std::FILE* f) : f_(f) { buf_.reserve(kFlush + 4096); }
  ~Out() { flush(); }
  void s(std::string_view v) { buf_.append(v); }
  void i(std::uint64_t v) {
    char tmp[24];
    auto [p, ec] = std::to_chars(tmp, tmp + sizeof tmp, v);
    buf_.append(tmp, p);
  }
  // ns as µs with three decimals.
  void us(std::uint64_t ns) {
    i(ns / 1000);
    char tmp[4] = {'.', static_cast<char>('0' + ns / 100 % 10),
                   static_cast<char>('0' + ns / 10 % 10), static_cast<char>('0' + ns % 10)};
    buf_.append(tmp, 4);
  }
  void maybe_flush() {
    if (buf_.size() >= kFlush) flush();
  }
  void flush() {
    if (!buf_.empty() && std::fwrite(buf_.data(), 1, buf_.size(), f_) != buf_.size()) {
      std::perror("jitscope_trace_gen: write");
      std::exit(1);
    }
    written_ += buf_.size();
    buf_.clear();
  }
  std::uint64_t size() const { return written_ + buf_.size(); }

 private:
  static constexpr std::size_t kFlush = std::size_t{4} << 20;
  std::FILE* f_;
  std::string buf_;
  std::uint64_t written_ = 0;
};

// xorshift64*: fast, deterministic.
struct Rng {
  std::uint64_t x;
  std::uint64_t next() {
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    return x * 2685821657736338717ull;
  }
  std::uint64_t range(std::uint64_t lo, std::uint64_t hi) { return lo + next() % (hi - lo + 1); }
};

constexpr std::uint64_t kPid = 4242;
constexpr std::uint64_t kGpuPid = 10'000'000 + kPid;
const char* const kPasses[] = {"pass:fold_constants", "pass:fuse", "pass:dce", "pass:cse",
                               "pass:layout"};
const char* const kKernels[] = {"fused_gemm_relu", "softmax", "layer_norm", "attention_fwd",
                                "reduce_sum"};

struct Gen {
  Out& o;
  Rng rng;
  bool first = true;
  std::uint64_t correlation = 1;

  void begin_event() {
    o.s(first ? "\n" : ",\n");
    first = false;
  }
  void x(std::string_view cat, std::string_view name, std::uint64_t ts, std::uint64_t dur,
         std::uint64_t pid, std::uint64_t tid, std::string_view args) {
    begin_event();
    o.s(R"({"ph":"X","cat":")");
    o.s(cat);
    o.s(R"(","name":")");
    o.s(name);
    o.s(R"(","ts":)");
    o.us(ts);
    o.s(R"(,"dur":)");
    o.us(dur);
    o.s(R"(,"pid":)");
    o.i(pid);
    o.s(R"(,"tid":)");
    o.i(tid);
    if (!args.empty()) {
      o.s(R"(,"args":{)");
      o.s(args);
      o.s("}");
    }
    o.s("}");
  }
  void meta(std::string_view what, std::uint64_t pid, std::uint64_t tid, std::string_view name) {
    begin_event();
    o.s(R"({"ph":"M","name":")");
    o.s(what);
    o.s(R"(","pid":)");
    o.i(pid);
    o.s(R"(,"tid":)");
    o.i(tid);
    o.s(R"(,"args":{"name":")");
    o.s(name);
    o.s(R"("}})");
  }
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr,
                 "usage: %s OUT BYTES [--threads N] [--units N] [--seed S] [--unterminated] "
                 "[--metrics PATH]\n",
                 argv[0]);
    return 2;
  }
  const std::string path = argv[1];
  const std::uint64_t target = std::strtoull(argv[2], nullptr, 10);
  std::uint64_t threads = 8, seed = 42, units = 0;
  bool unterminated = false;
  std::string metrics_path;
  for (int a = 3; a < argc; ++a) {
    if (std::strcmp(argv[a], "--threads") == 0 && a + 1 < argc)
      threads = std::strtoull(argv[++a], nullptr, 10);
    else if (std::strcmp(argv[a], "--seed") == 0 && a + 1 < argc)
      seed = std::strtoull(argv[++a], nullptr, 10);
    else if (std::strcmp(argv[a], "--units") == 0 && a + 1 < argc)
      units = std::strtoull(argv[++a], nullptr, 10);
    else if (std::strcmp(argv[a], "--metrics") == 0 && a + 1 < argc)
      metrics_path = argv[++a];
    else if (std::strcmp(argv[a], "--unterminated") == 0)
      unterminated = true;
    else {
      std::fprintf(stderr, "jitscope_trace_gen: unknown argument %s\n", argv[a]);
      return 2;
    }
  }
  if (threads == 0) threads = 1;
  if (units == 0)
    units = std::max<std::uint64_t>(1, target / (std::uint64_t{512} << 10));  // 2048 per GiB
  std::FILE* f = path == "-" ? stdout : std::fopen(path.c_str(), "wb");
  if (f == nullptr) {
    std::perror(path.c_str());
    return 1;
  }
  std::FILE* metrics = nullptr;
  if (!metrics_path.empty() && (metrics = std::fopen(metrics_path.c_str(), "wb")) == nullptr) {
    std::perror(metrics_path.c_str());
    return 1;
  }
  std::uint64_t events = 0;
  {
    Out o(f);
    Gen g{o, Rng{seed * 0x9E3779B97F4A7C15ull + 1}};
    o.s("[");
    g.meta("process_name", kPid, 0, "synthetic_compiler");
    g.begin_event();
    o.s(R"({"ph":"M","name":"jitscope_session","pid":4242,"tid":0,"args":{"version":"0.1.0","clock":"tsc",)"
        R"("timestamps":"CLOCK_MONOTONIC microseconds","cupti":{"state":"on","timestamps":"timestamp_callback"}}})");
    g.meta("process_name", kGpuPid, 0, "GPU 0 (pid 4242)");
    // Host threads: compile threads kPid+1.., each with two workers after them.
    std::vector<std::uint64_t> clock(threads, 1'000'000'000'000ull);  // ns, per compile thread
    char name[128];
    for (std::uint64_t t = 0; t < threads; ++t) {
      std::snprintf(name, sizeof name, "compile-%llu", static_cast<unsigned long long>(t));
      g.meta("thread_name", kPid, kPid + 1 + t * 3, name);
      for (int w = 0; w < 2; ++w) {
        std::snprintf(name, sizeof name, "codegen-worker-%llu.%d",
                      static_cast<unsigned long long>(t), w);
        g.meta("thread_name", kPid, kPid + 2 + t * 3 + w, name);
      }
    }
    for (std::uint64_t t = 0; t < threads; ++t) {  // one stream per compile thread
      std::snprintf(name, sizeof name, "stream %llu", static_cast<unsigned long long>(7 + t));
      g.meta("thread_name", kGpuPid, 7 + t, name);
    }
    std::uint64_t unit_no = 0;
    std::string args, unit_name, cid;
    while (o.size() < target && unit_no < units) {
      const std::uint64_t t = unit_no % threads;
      const std::uint64_t tid = kPid + 1 + t * 3;
      const std::uint64_t frame = unit_no / 2, attempt = unit_no % 2;
      cid = std::to_string(frame) + "/" + std::to_string(attempt);
      unit_name = "[" + cid + "] model__graph_" + std::to_string(unit_no);
      const std::string cid_arg = "\"compile_id\":\"" + cid + "\"";
      std::uint64_t now = clock[t];
      const std::uint64_t unit_start = now;
      now += g.rng.range(1000, 5000);
      const std::uint64_t graph_start = now;
      now += g.rng.range(500, 2000);
      // parse
      const std::uint64_t parse_dur = g.rng.range(200'000, 800'000);
      g.x("phase", "parse", now, parse_dur, kPid, tid, cid_arg);
      now += parse_dur + g.rng.range(100, 1000);
      g.begin_event();
      o.s(R"({"ph":"I","s":"t","cat":"jitscope","name":"step","ts":)");
      o.us(now);
      o.s(R"(,"pid":4242,"tid":)");
      o.i(tid);
      o.s(R"(,"args":{)");
      o.s(cid_arg);
      o.s(R"(,"step":1,"message":"parsed graph: 11 ops, \"quoted\" [brackets] {braces}"}})");
      // passes > pass:* x3
      const std::uint64_t passes_start = now;
      now += g.rng.range(500, 3000);
      for (int p = 0; p < 3; ++p) {
        const std::uint64_t d = g.rng.range(1000, 10'000);
        g.x("phase", kPasses[g.rng.range(0, 4)], now, d, kPid, tid, cid_arg);
        now += d + g.rng.range(100, 2000);
      }
      g.x("phase", "passes", passes_start, now - passes_start, kPid, tid,
          cid_arg + R"(,"passes_run":3)");
      now += g.rng.range(100, 1000);
      // codegen on the compile thread, emit_kernel on two workers (attached unit slices)
      const std::uint64_t codegen_start = now;
      const std::uint64_t kernels = g.rng.range(1, 4);
      std::uint64_t worker_end = now;
      for (int w = 0; w < 2; ++w) {
        std::uint64_t wt = now + g.rng.range(1000, 20'000);
        const std::uint64_t attach_start = wt;
        wt += g.rng.range(500, 2000);
        for (std::uint64_t k = 0; k < kernels; ++k) {
          const std::uint64_t d = g.rng.range(20'000, 150'000);
          g.x("phase", "emit_kernel", wt, d, kPid, tid + 1 + w,
              cid_arg + R"(,"kernel":"k)" + std::to_string(k) + "\"");
          wt += d + g.rng.range(500, 5000);
        }
        g.x("compile_unit", unit_name, attach_start, wt - attach_start, kPid, tid + 1 + w,
            cid_arg + R"(,"attached":true)");
        worker_end = std::max(worker_end, wt);
      }
      now = worker_end + g.rng.range(1000, 5000);
      g.begin_event();
      o.s(R"({"ph":"C","cat":"jitscope","name":"codegen_workers.waiting","ts":)");
      o.us(now);
      o.s(R"(,"pid":4242,"tid":)");
      o.i(tid);
      o.s(",");
      o.s(cid_arg);
      o.s(R"(,"args":{"value":0}})");
      // the module load inside the unit
      const std::uint64_t load = now;
      const std::uint64_t load_corr = g.correlation++;
      now += 6000;
      g.x("compile_event", "codegen", codegen_start, now - codegen_start, kPid, tid,
          cid_arg + R"(,"cached_kernels":0,"kernels":)" + std::to_string(kernels));
      now += g.rng.range(500, 2000);
      g.x("phase", "compile_graph", graph_start, now - graph_start, kPid, tid, cid_arg);
      now += g.rng.range(1000, 3000);
      g.x("compile_unit", unit_name, unit_start, now - unit_start, kPid, tid,
          cid_arg + R"(,"is_forward":true,"duration_us":)" +
              std::to_string((now - unit_start) / 1000));
      if (metrics != nullptr) {
        const std::string n = std::to_string(unit_no);
        std::string line =
            R"({"compile_id":")" + cid + R"(","frame_id":)" + std::to_string(frame) +
            R"(,"attempt":)" + std::to_string(attempt) + R"(,"name":"model__graph_)" + n +
            R"(","is_runtime":false,"duration_us":)" + std::to_string((now - unit_start) / 1000) +
            R"(,"parse_us":)" + std::to_string(parse_dur / 1000) + R"(,"passes_us":)" +
            std::to_string((codegen_start - passes_start) / 1000) + R"(,"codegen_us":)" +
            std::to_string((now - codegen_start) / 1000);
        if (attempt == 1) line += R"(,"recompile_reason":"input shape changed")";
        if (unit_no % 50 == 49) {
          line +=
              R"(,"fail_type":"CompileError","fail_reason":"register allocation failed in unit )" +
              n + "\"";
        }
        line += R"(,"caches":{"kernel_cache":{"hits":)" + std::to_string(attempt * kernels) +
                R"(,"misses":)" + std::to_string(kernels - attempt * kernels / 2) + "}}";
        line += R"(,"input_shape":[)" + std::to_string(1 + unit_no % 8) + R"(,128],"num_ops":)" +
                std::to_string(8 + unit_no % 13) + R"(,"kernels_emitted":)" +
                std::to_string(kernels);
        const std::string dir = "/tmp/jitscope_trace_gen.artifacts/" + std::to_string(frame) + "_" +
                                std::to_string(attempt);
        line += R"(,"artifacts":[{"kind":"source","path":")" + dir +
                R"(/source.cu","bytes":2048,"fnv1a":"cbf29ce484222325"},{"kind":"ptx","path":")" +
                dir + R"(/ptx.ptx","bytes":9000,"fnv1a":"af63bd4c8601b7df"}]})";
        line += "\n";
        if (std::fwrite(line.data(), 1, line.size(), metrics) != line.size()) {
          std::perror(metrics_path.c_str());
          return 1;
        }
      }
      // CUDA calls come a flush later in jitscope's traces: after the unit.
      args = R"("correlation":)" + std::to_string(load_corr) + R"(,"span":")" + unit_name +
             R"(",)" + cid_arg + R"(,"compile_unit":")" + unit_name + "\"";
      g.x("cuda", "cuModuleLoadData", load, 5000, kPid, tid, args);
      // Then the model runs: run_model spans with cuLaunchKernel calls and
      // their kernels on the thread's stream, until this unit's share of
      // the bytes is written (most of a real trace: compile once, run often).
      const std::uint64_t stream = 7 + t;
      std::uint64_t gpu_t = now;
      const std::uint64_t unit_bytes_end = (unit_no + 1) * (target / units);
      do {
        now = std::max(now, gpu_t) + g.rng.range(5000, 50'000);
        const std::uint64_t run_start = now;
        now += 2000;
        gpu_t = now + 10'000;
        for (std::uint64_t k = 0; k < kernels; ++k) {
          const std::uint64_t corr = g.correlation++;
          const std::uint64_t launch = now;
          const std::uint64_t kdur = g.rng.range(5000, 200'000);
          const std::string by = R"("correlation":)" + std::to_string(corr) +
                                 R"(,"span":"run_model","compiled_by":")" + unit_name +
                                 R"(","compiled_by_id":")" + cid + "\"";
          g.x("cuda", "cuLaunchKernel", launch, 5000, kPid, tid, by);
          g.x("cuda", kKernels[(unit_no + k) % 5], gpu_t, kdur, kGpuPid, stream,
              by + R"(,"device":0,"stream":)" + std::to_string(stream) +
                  R"(,"grid":[4,1,1],"block":[128,1,1],"registers_per_thread":32,"shared_memory_bytes":1536)");
          g.begin_event();
          o.s(R"({"ph":"s","cat":"cuda","name":"launch","id":)");
          o.i(corr);
          o.s(R"(,"ts":)");
          o.us(launch);
          o.s(R"(,"pid":4242,"tid":)");
          o.i(tid);
          o.s("}");
          g.begin_event();
          o.s(R"({"ph":"f","cat":"cuda","name":"launch","id":)");
          o.i(corr);
          o.s(R"(,"ts":)");
          o.us(gpu_t);
          o.s(R"(,"pid":10004242,"tid":)");
          o.i(stream);
          o.s(R"(,"bp":"e"})");
          now += 8000;
          gpu_t += kdur + 1000;
          events += 4;
        }
        g.x("jitscope", "run_model", run_start, now + 1000 - run_start, kPid, tid, "");
        events += 1;
        o.maybe_flush();
      } while (o.size() < unit_bytes_end && o.size() < target);
      clock[t] = std::max(now, gpu_t) + g.rng.range(10'000, 100'000);
      ++unit_no;
      events += 14 + 2 * (kernels + 1);
      o.maybe_flush();
    }
    o.s(unterminated ? "\n" : "\n]\n");
  }
  if (metrics != nullptr && std::fclose(metrics) != 0) {
    std::perror(metrics_path.c_str());
    return 1;
  }
  if (f != stdout && std::fclose(f) != 0) {
    std::perror(path.c_str());
    return 1;
  }
  std::fprintf(stderr, "jitscope_trace_gen: %s: about %llu events\n", path.c_str(),
               static_cast<unsigned long long>(events));
  return 0;
}
