// Autotuning and running the winners on the GPU (see autotuner.hpp).
#include "autotuner.hpp"

#include "common/cuda_driver.hpp"

#include <jitscope/autotune.hpp>
#include <jitscope/jitscope.hpp>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <map>
#include <string>
#include <vector>

namespace nvrtc_jit {
namespace {

using sample_common::cu_error;
using sample_common::Driver;
using sample_common::driver;

constexpr int kElements = 1 << 22;  // elementwise and reduce inputs (16 MiB of floats)
constexpr int kMatrixN = 512;       // matmul: n x n
constexpr int kMatrixChecks = 64;   // matmul entries checked against the CPU

// Fails with one line naming the call; true on success.
bool cu_ok(CUresult r, const std::string& what) {
  if (r == CUDA_SUCCESS) return true;
  std::fprintf(stderr, "nvrtc_jit: %s failed: %s\n", what.c_str(), cu_error(r).c_str());
  return false;
}

// Device memory and events, freed on every path.
struct DeviceState {
  CUdeviceptr x = 0, y = 0, sum = 0, a = 0, b = 0, c = 0;
  CUevent start = nullptr, stop = nullptr;
  ~DeviceState() {
    const Driver& d = driver();
    for (CUdeviceptr p : {x, y, sum, a, b, c}) {
      if (p != 0) (void)d.cuMemFree(p);
    }
    if (start != nullptr) (void)d.cuEventDestroy(start);
    if (stop != nullptr) (void)d.cuEventDestroy(stop);
  }
};

struct HostInputs {
  std::vector<float> x;     // kElements, in [-4, 4)
  std::vector<float> a, b;  // kMatrixN^2, in [-1, 1)
};

// Fixed pseudo-random values: the same inputs on every run.
float value(std::uint32_t i, float scale) {
  const std::uint32_t h = (i * 2654435761u) ^ (i >> 13);
  return (static_cast<float>(h % 65536u) / 32768.0f - 1.0f) * scale;
}

HostInputs make_inputs() {
  HostInputs in;
  in.x.resize(kElements);
  for (int i = 0; i < kElements; ++i) in.x[i] = value(static_cast<std::uint32_t>(i), 4.0f);
  in.a.resize(static_cast<std::size_t>(kMatrixN) * kMatrixN);
  in.b.resize(in.a.size());
  for (std::size_t i = 0; i < in.a.size(); ++i) {
    in.a[i] = value(static_cast<std::uint32_t>(i) + 7u, 1.0f);
    in.b[i] = value(static_cast<std::uint32_t>(i) + 1000003u, 1.0f);
  }
  return in;
}

bool upload(DeviceState& dev, const HostInputs& in) {
  const Driver& d = driver();
  const std::size_t vec_bytes = in.x.size() * sizeof(float);
  const std::size_t mat_bytes = in.a.size() * sizeof(float);
  return cu_ok(d.cuMemAlloc(&dev.x, vec_bytes), "cuMemAlloc(x)") &&
         cu_ok(d.cuMemAlloc(&dev.y, vec_bytes), "cuMemAlloc(y)") &&
         cu_ok(d.cuMemAlloc(&dev.sum, sizeof(float)), "cuMemAlloc(sum)") &&
         cu_ok(d.cuMemAlloc(&dev.a, mat_bytes), "cuMemAlloc(a)") &&
         cu_ok(d.cuMemAlloc(&dev.b, mat_bytes), "cuMemAlloc(b)") &&
         cu_ok(d.cuMemAlloc(&dev.c, mat_bytes), "cuMemAlloc(c)") &&
         cu_ok(d.cuMemcpyHtoD(dev.x, in.x.data(), vec_bytes), "cuMemcpyHtoD(x)") &&
         cu_ok(d.cuMemcpyHtoD(dev.a, in.a.data(), mat_bytes), "cuMemcpyHtoD(a)") &&
         cu_ok(d.cuMemcpyHtoD(dev.b, in.b.data(), mat_bytes), "cuMemcpyHtoD(b)") &&
         cu_ok(d.cuEventCreate(&dev.start, CU_EVENT_DEFAULT), "cuEventCreate") &&
         cu_ok(d.cuEventCreate(&dev.stop, CU_EVENT_DEFAULT), "cuEventCreate");
}

// One launch of `k` on its family's buffers (the default stream).
bool launch(const BuiltKernel& k, DeviceState& dev) {
  const KernelSpec& s = k.spec;
  int n = kElements;
  unsigned grid_x = 1, grid_y = 1, block_x = 256, block_y = 1;
  void* elementwise_args[] = {&dev.x, &dev.y, &n};
  void* reduce_args[] = {&dev.x, &dev.sum, &n};
  int mn = kMatrixN;
  void* matmul_args[] = {&dev.a, &dev.b, &dev.c, &mn};
  void** args = elementwise_args;
  switch (s.family) {
    case Family::kGelu:
    case Family::kSilu: {
      const int per_block = 256 * s.unroll;
      grid_x = static_cast<unsigned>((n / s.vec + per_block - 1) / per_block);
      break;
    }
    case Family::kReduce:
      block_x = static_cast<unsigned>(s.block);
      grid_x = static_cast<unsigned>((n + s.block * s.items - 1) / (s.block * s.items));
      args = reduce_args;
      break;
    case Family::kMatmul:
      block_x = static_cast<unsigned>(s.tile);
      block_y = static_cast<unsigned>(s.tile / s.rows);
      grid_x = grid_y = static_cast<unsigned>((kMatrixN + s.tile - 1) / s.tile);
      args = matmul_args;
      break;
  }
  return cu_ok(driver().cuLaunchKernel(k.function, grid_x == 0 ? 1 : grid_x, grid_y, 1, block_x,
                                       block_y, 1, 0, nullptr, args, nullptr),
               "cuLaunchKernel(" + s.name + ")");
}

double reference_op(Family f, double v) {
  return f == Family::kGelu ? 0.5 * v * (1.0 + std::tanh(0.7978845608 * (v + 0.044715 * v * v * v)))
                            : v / (1.0 + std::exp(-v));
}

// Runs `k` once more from a clean output and compares with the CPU.
// *correct says whether it matched; false only when a CUDA call failed.
bool check(const BuiltKernel& k, DeviceState& dev, const HostInputs& in, bool* correct) {
  const Driver& d = driver();
  *correct = false;
  const KernelSpec& s = k.spec;
  if (s.family == Family::kReduce && !cu_ok(d.cuMemsetD32(dev.sum, 0, 1), "cuMemsetD32(sum)")) {
    return false;
  }
  if (!launch(k, dev) || !cu_ok(d.cuCtxSynchronize(), "cuCtxSynchronize(" + s.name + ")")) {
    return false;
  }
  std::string mismatch;
  if (s.family == Family::kGelu || s.family == Family::kSilu) {
    std::vector<float> y(in.x.size());
    if (!cu_ok(d.cuMemcpyDtoH(y.data(), dev.y, y.size() * sizeof(float)), "cuMemcpyDtoH(y)")) {
      return false;
    }
    for (std::size_t i = 0; i < y.size() && mismatch.empty(); i += (i + 97 < y.size() ? 97 : 1)) {
      const double want = reference_op(s.family, in.x[i]);
      if (std::fabs(y[i] - want) > 1e-4 + 1e-4 * std::fabs(want)) {
        mismatch = "y[" + std::to_string(i) + "] = " + std::to_string(y[i]) + ", expected " +
                   std::to_string(want);
      }
    }
  } else if (s.family == Family::kReduce) {
    float got = 0;
    if (!cu_ok(d.cuMemcpyDtoH(&got, dev.sum, sizeof got), "cuMemcpyDtoH(sum)")) return false;
    double want = 0, magnitude = 0;
    for (float v : in.x) want += v, magnitude += std::fabs(v);
    if (std::fabs(got - want) > 1e-5 * magnitude + 1e-2) {
      mismatch = "sum = " + std::to_string(got) + ", expected " + std::to_string(want);
    }
  } else {
    std::vector<float> c(in.a.size());
    if (!cu_ok(d.cuMemcpyDtoH(c.data(), dev.c, c.size() * sizeof(float)), "cuMemcpyDtoH(c)")) {
      return false;
    }
    for (int t = 0; t < kMatrixChecks && mismatch.empty(); ++t) {
      const int row = (t * 131) % kMatrixN, col = (t * 313 + 7) % kMatrixN;
      double want = 0, magnitude = 0;
      for (int j = 0; j < kMatrixN; ++j) {
        const double p = static_cast<double>(in.a[row * kMatrixN + j]) * in.b[j * kMatrixN + col];
        want += p;
        magnitude += std::fabs(p);
      }
      const float got = c[static_cast<std::size_t>(row) * kMatrixN + col];
      if (std::fabs(got - want) > 1e-4 * magnitude + 1e-4) {
        mismatch = "c[" + std::to_string(row) + "][" + std::to_string(col) +
                   "] = " + std::to_string(got) + ", expected " + std::to_string(want);
      }
    }
  }
  if (!mismatch.empty()) {
    std::fprintf(stderr, "nvrtc_jit: kernel %s computed a wrong result: %s\n", s.name.c_str(),
                 mismatch.c_str());
    return true;
  }
  *correct = true;
  return true;
}

// A variant's parameters as a trial's config: its family's own.
std::vector<jitscope::Arg> config_args(const KernelSpec& s) {
  switch (s.family) {
    case Family::kGelu:
    case Family::kSilu: return {{"vec", s.vec}, {"unroll", s.unroll}};
    case Family::kReduce: return {{"block", s.block}, {"items", s.items}};
    case Family::kMatmul: return {{"tile", s.tile}, {"rows", s.rows}};
  }
  return {};
}

// Mean µs per launch over `reps` launches after one warm-up; < 0 on a CUDA error.
double time_kernel(const BuiltKernel& k, DeviceState& dev, int reps) {
  const Driver& d = driver();
  if (!launch(k, dev)) return -1;  // warm-up: first-launch costs out of the timing
  if (!cu_ok(d.cuEventRecord(dev.start, nullptr), "cuEventRecord")) return -1;
  for (int r = 0; r < reps; ++r) {
    if (!launch(k, dev)) return -1;
  }
  float ms = 0;
  if (!cu_ok(d.cuEventRecord(dev.stop, nullptr), "cuEventRecord") ||
      !cu_ok(d.cuEventSynchronize(dev.stop), "cuEventSynchronize(" + k.spec.name + ")") ||
      !cu_ok(d.cuEventElapsedTime(&ms, dev.start, dev.stop), "cuEventElapsedTime")) {
    return -1;
  }
  return 1000.0 * ms / reps;
}

}  // namespace

bool autotune_and_run(const std::vector<BuiltKernel>& built, int reps,
                      std::vector<FamilyWinner>* winners) {
  // The loaded variants of each family, in build order.
  std::map<std::string, std::vector<const BuiltKernel*>> families;
  for (const BuiltKernel& b : built) {
    if (b.ok && b.function != nullptr) families[family_name(b.spec.family)].push_back(&b);
  }
  DeviceState dev;
  const HostInputs in = make_inputs();
  if (!upload(dev, in)) return false;

  bool all_ok = true;
  std::vector<const BuiltKernel*> chosen;
  {
    JITSCOPE_SPAN_ARGS("autotune", {"families", families.size()}, {"reps", reps});
    for (const auto& [family, variants] : families) {
      jitscope::Span tune_span("autotune " + family,
                               {{"variants", static_cast<std::int64_t>(variants.size())}});
      // Each variant a trial of the family's tuning session: its compile is
      // the unit that built it (on the compile pool, before), its benchmark
      // the timed launches and the check (docs/autotuning.md).
      jitscope::Autotune tune(family);
      FamilyWinner best{family, "", std::numeric_limits<double>::infinity(),
                        static_cast<int>(variants.size())};
      const BuiltKernel* best_kernel = nullptr;
      jitscope::AutotuneTrial best_trial;
      for (const BuiltKernel* k : variants) {
        const jitscope::AutotuneTrial trial = tune.trial(config_args(k->spec));
        trial.compiled_by(k->unit_id);
        jitscope::Span variant_span(k->spec.name);
        double us = 0;
        bool correct = false;
        {
          jitscope::AutotuneStep bench = trial.benchmark();
          us = time_kernel(*k, dev, reps);
          if (us < 0 || !check(*k, dev, in, &correct)) return false;  // the context may be broken
        }
        variant_span.arg("avg_us", us);
        variant_span.arg("correct", correct);
        if (!correct) {
          trial.failed("wrong result");
          all_ok = false;
          continue;
        }
        trial.result(us);
        if (us < best.avg_us) {
          best.avg_us = us;
          best.kernel = k->spec.name;
          best_kernel = k;
          best_trial = trial;
        }
      }
      if (best_kernel == nullptr) continue;  // every variant was wrong (said above)
      tune.winner(best_trial);
      tune_span.arg("winner", best.kernel);
      tune_span.arg("winner_us", best.avg_us);
      winners->push_back(best);
      chosen.push_back(best_kernel);
    }
  }
  {
    JITSCOPE_SPAN_ARGS("run winners", {"kernels", chosen.size()});
    for (const BuiltKernel* k : chosen) {
      jitscope::Span run_span("run " + k->spec.name);
      bool correct = false;
      if (!check(*k, dev, in, &correct)) return false;
      run_span.arg("correct", correct);
      all_ok &= correct;
    }
  }
  return all_ok;
}

}  // namespace nvrtc_jit
