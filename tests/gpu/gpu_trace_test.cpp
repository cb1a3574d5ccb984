// The CUPTI collector on a real GPU, end to end (ctest label: gpu).
//
// Compiles a saxpy kernel with NVRTC inside a compile unit, loads it there
// (cuModuleLoadData, cuModuleGetFunction), launches it three times outside
// the unit in a span "run_kernels", stops the session and checks the trace
// and the metrics file: the kernels on a named stream track of the GPU's
// process, a launch flow from each cuLaunchKernel slice to its kernel, the
// compile unit that built the kernel (compiled_by), the timestamps inside the
// session, the session's stats and the unit's "gpu" metrics line.
//
// Usage: gpu_trace_test <output dir>
// Exit: 0 pass; 1 fail (each problem on a `FAIL:` line); 2 usage;
// 77 skip (no CUDA driver, no device, a device this toolkit cannot target),
// which ctest reports as Skipped. With JSTEST_GPU_REQUIRE=1 a skip is
// a failure instead (for machines that must have a GPU).
// JSTEST_GPU_SETTLE_MS (default 250): how long to wait between the
// last GPU work and stop(), so that the records arrive in ordinary flush
// cycles; 0 stops at once (only the final flush joins them).
//
// The driver is loaded with dlopen: the program never links libcuda, so it
// builds and starts on machines without one.
#include <jitscope/compile.hpp>
#include <jitscope/jitscope.hpp>

#include <cuda.h>
#include <nvrtc.h>

#include <nlohmann/json.hpp>

#include <dlfcn.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

using nlohmann::json;

constexpr int kPass = 0;
constexpr int kFail = 1;
constexpr int kUsage = 2;
constexpr int kSkip = 77;

constexpr int kLaunches = 3;
constexpr unsigned kGrid = 4;
constexpr unsigned kBlock = 256;
constexpr int kElements = static_cast<int>(kGrid * kBlock);
constexpr float kA = 2.0f;
constexpr const char* kRunSpan = "run_kernels";

constexpr const char* kSaxpySource = R"(
extern "C" __global__ void saxpy(float a, const float* x, float* y, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
)";

int g_failures = 0;

void fail(const std::string& message) {
  std::fprintf(stderr, "FAIL: %s\n", message.c_str());
  std::fflush(stderr);
  ++g_failures;
}

void note(const std::string& message) {
  std::fprintf(stderr, "note: %s\n", message.c_str());
  std::fflush(stderr);
}

bool require_gpu() {
  const char* v = std::getenv("JSTEST_GPU_REQUIRE");
  return v != nullptr && v[0] != '\0' && std::strcmp(v, "0") != 0;
}

// A skip, or a failure under JSTEST_GPU_REQUIRE.
int skip(const std::string& why) {
  if (require_gpu()) {
    fail(why + " (JSTEST_GPU_REQUIRE is set: not skipping)");
    return kFail;
  }
  std::printf("SKIP: %s\n", why.c_str());
  std::fflush(stdout);
  return kSkip;
}

std::uint64_t monotonic_ns() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000u +
         static_cast<std::uint64_t>(ts.tv_nsec);
}

// ---- the driver, through dlopen ----------------------------------------

struct Driver {
  void* lib = nullptr;
  // Required.
  decltype(&::cuInit) cuInit = nullptr;
  decltype(&::cuDeviceGetCount) cuDeviceGetCount = nullptr;
  decltype(&::cuDeviceGet) cuDeviceGet = nullptr;
  decltype(&::cuDeviceGetAttribute) cuDeviceGetAttribute = nullptr;
  decltype(&::cuDevicePrimaryCtxRetain) cuDevicePrimaryCtxRetain = nullptr;
  decltype(&::cuDevicePrimaryCtxRelease_v2) cuDevicePrimaryCtxRelease_v2 = nullptr;
  decltype(&::cuCtxSetCurrent) cuCtxSetCurrent = nullptr;
  decltype(&::cuCtxSynchronize) cuCtxSynchronize = nullptr;
  decltype(&::cuModuleLoadData) cuModuleLoadData = nullptr;
  decltype(&::cuModuleGetFunction) cuModuleGetFunction = nullptr;
  decltype(&::cuModuleUnload) cuModuleUnload = nullptr;
  decltype(&::cuMemAlloc_v2) cuMemAlloc_v2 = nullptr;
  decltype(&::cuMemFree_v2) cuMemFree_v2 = nullptr;
  decltype(&::cuMemcpyHtoD_v2) cuMemcpyHtoD_v2 = nullptr;
  decltype(&::cuMemcpyDtoH_v2) cuMemcpyDtoH_v2 = nullptr;
  decltype(&::cuLaunchKernel) cuLaunchKernel = nullptr;
  // Optional: better messages only.
  decltype(&::cuGetErrorName) cuGetErrorName = nullptr;
  decltype(&::cuGetErrorString) cuGetErrorString = nullptr;
  decltype(&::cuDriverGetVersion) cuDriverGetVersion = nullptr;
  decltype(&::cuDeviceGetName) cuDeviceGetName = nullptr;
};

Driver g_cu;

template <class F>
bool load_symbol(void* lib, const char* name, F& out, std::string* missing) {
  void* p = ::dlsym(lib, name);
  if (p == nullptr) {
    if (missing != nullptr) *missing += std::string(missing->empty() ? "" : ", ") + name;
    return false;
  }
  static_assert(sizeof(F) == sizeof(void*));
  std::memcpy(&out, &p, sizeof out);  // a data pointer to a function pointer, without a cast
  return true;
}

// "CUDA_ERROR_NO_DEVICE (no CUDA-capable device is detected; code 100)".
std::string cu_error(CUresult r) {
  const char* name = nullptr;
  const char* text = nullptr;
  if (g_cu.cuGetErrorName != nullptr && g_cu.cuGetErrorName(r, &name) != CUDA_SUCCESS) {
    name = nullptr;
  }
  if (g_cu.cuGetErrorString != nullptr && g_cu.cuGetErrorString(r, &text) != CUDA_SUCCESS) {
    text = nullptr;
  }
  if (name == nullptr) {
    // The stub library and some broken installs answer no names.
    switch (r) {
      case CUDA_ERROR_NOT_INITIALIZED: name = "CUDA_ERROR_NOT_INITIALIZED"; break;
      case CUDA_ERROR_STUB_LIBRARY: name = "CUDA_ERROR_STUB_LIBRARY"; break;
      case CUDA_ERROR_SYSTEM_DRIVER_MISMATCH: name = "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH"; break;
      case CUDA_ERROR_NO_DEVICE: name = "CUDA_ERROR_NO_DEVICE"; break;
      case CUDA_ERROR_OPERATING_SYSTEM: name = "CUDA_ERROR_OPERATING_SYSTEM"; break;
      case CUDA_ERROR_UNKNOWN: name = "CUDA_ERROR_UNKNOWN"; break;
      default: break;
    }
  }
  std::string s = name != nullptr ? name : "CUresult";
  s += " (";
  if (text != nullptr) s += std::string(text) + "; ";
  s += "code " + std::to_string(static_cast<int>(r)) + ")";
  return s;
}

// Checks a driver call; on failure one FAIL line naming it.
bool cu_ok(CUresult r, const char* call) {
  if (r == CUDA_SUCCESS) return true;
  fail(std::string(call) + " failed: " + cu_error(r));
  return false;
}

std::string version_text(int v) {
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

std::string driver_version_text() {
  int v = 0;
  if (g_cu.cuDriverGetVersion == nullptr || g_cu.cuDriverGetVersion(&v) != CUDA_SUCCESS) {
    return "unknown";
  }
  return version_text(v) + " (" + std::to_string(v) + ")";
}

// ---- NVRTC ---------------------------------------------------------------

struct Image {
  std::vector<char> bytes;  // CUBIN, or PTX with its terminating NUL
  std::string target;       // "sm_90" or "compute_90"
  bool ptx = false;
};

bool nvrtc_ok(nvrtcResult r, const char* call) {
  if (r == NVRTC_SUCCESS) return true;
  const char* s = nvrtcGetErrorString(r);
  fail(std::string(call) + " failed: " + (s != nullptr ? s : "?") + " (code " +
       std::to_string(static_cast<int>(r)) + ")");
  return false;
}

// The architectures this NVRTC can target (e.g. 75, 80, ..., 90, 100, ...).
std::vector<int> nvrtc_archs() {
  int n = 0;
  if (nvrtcGetNumSupportedArchs(&n) != NVRTC_SUCCESS || n <= 0) return {};
  std::vector<int> archs(static_cast<std::size_t>(n));
  if (nvrtcGetSupportedArchs(archs.data()) != NVRTC_SUCCESS) return {};
  return archs;
}

// Compiles saxpy for `target`; CUBIN for an sm_ target, PTX for compute_.
bool compile_saxpy(const std::string& target, bool ptx, Image& out) {
  nvrtcProgram prog = nullptr;
  if (!nvrtc_ok(nvrtcCreateProgram(&prog, kSaxpySource, "saxpy.cu", 0, nullptr, nullptr),
                "nvrtcCreateProgram")) {
    return false;
  }
  struct Destroy {
    nvrtcProgram* p;
    ~Destroy() { (void)nvrtcDestroyProgram(p); }
  } destroy{&prog};
  const std::string arch = "--gpu-architecture=" + target;
  const char* options[] = {arch.c_str()};
  const nvrtcResult compiled = nvrtcCompileProgram(prog, 1, options);
  if (compiled != NVRTC_SUCCESS) {
    std::size_t log_size = 0;
    std::string log;
    if (nvrtcGetProgramLogSize(prog, &log_size) == NVRTC_SUCCESS && log_size > 1) {
      log.resize(log_size);
      if (nvrtcGetProgramLog(prog, log.data()) != NVRTC_SUCCESS) log.clear();
      while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
    }
    nvrtc_ok(compiled, ("nvrtcCompileProgram(" + arch + ")").c_str());
    if (!log.empty()) std::fprintf(stderr, "NVRTC log:\n%s\n", log.c_str());
    return false;
  }
  std::size_t size = 0;
  if (ptx) {
    if (!nvrtc_ok(nvrtcGetPTXSize(prog, &size), "nvrtcGetPTXSize")) return false;
    out.bytes.assign(size, '\0');
    if (!nvrtc_ok(nvrtcGetPTX(prog, out.bytes.data()), "nvrtcGetPTX")) return false;
    if (out.bytes.empty() || out.bytes.back() != '\0') out.bytes.push_back('\0');
  } else {
    if (!nvrtc_ok(nvrtcGetCUBINSize(prog, &size), "nvrtcGetCUBINSize")) return false;
    if (size == 0) {
      fail("nvrtcGetCUBINSize returned 0 bytes for " + arch);
      return false;
    }
    out.bytes.assign(size, '\0');
    if (!nvrtc_ok(nvrtcGetCUBIN(prog, out.bytes.data()), "nvrtcGetCUBIN")) return false;
  }
  out.target = target;
  out.ptx = ptx;
  return true;
}

// ---- JSON helpers: absent or mistyped members read as nothing -----------

const json* member(const json& o, const char* key) {
  if (!o.is_object()) return nullptr;
  const auto it = o.find(key);
  return it == o.end() ? nullptr : &*it;
}

std::string str_of(const json& o, const char* key) {
  const json* v = member(o, key);
  return v != nullptr && v->is_string() ? v->get<std::string>() : std::string();
}

std::optional<long long> int_of(const json& o, const char* key) {
  const json* v = member(o, key);
  if (v == nullptr || !v->is_number_integer()) return std::nullopt;
  return v->get<long long>();
}

std::optional<double> num_of(const json& o, const char* key) {
  const json* v = member(o, key);
  if (v == nullptr || !v->is_number()) return std::nullopt;
  return v->get<double>();
}

const json& args_of(const json& e) {
  static const json kEmpty = json::object();
  const json* a = member(e, "args");
  return a != nullptr && a->is_object() ? *a : kEmpty;
}

std::string brief(const json& e) {
  std::string s = e.dump();
  if (s.size() > 600) s = s.substr(0, 600) + "...";
  return s;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// ---- what the program did, for the checks --------------------------------

struct Run {
  std::string trace_path;
  std::string metrics_path;
  int host_pid = 0;
  int device_ordinal = 0;
  jitscope::CompileId unit_id;
  std::string unit_slice;  // "[F/A] name": the unit's trace slice
  jitscope::SessionStats stats;
  std::uint64_t end_ns = 0;  // CLOCK_MONOTONIC after stop()
};

// GPU resources, released (unchecked) on every path.
struct Resources {
  CUdevice device = 0;
  CUcontext context = nullptr;
  CUmodule module = nullptr;
  CUdeviceptr x = 0, y = 0;
  ~Resources() {
    if (x != 0) (void)g_cu.cuMemFree_v2(x);
    if (y != 0) (void)g_cu.cuMemFree_v2(y);
    if (module != nullptr) (void)g_cu.cuModuleUnload(module);
    if (context != nullptr) {
      (void)g_cu.cuCtxSetCurrent(nullptr);
      (void)g_cu.cuDevicePrimaryCtxRelease_v2(device);
    }
  }
};

// Stops the session on every path (a no-op once stopped).
struct SessionGuard {
  ~SessionGuard() { (void)jitscope::stop(); }
};

// ---- the checks ------------------------------------------------------------

void check_trace(const Run& run) {
  const std::string text = read_text(run.trace_path);
  if (text.empty()) {
    fail("the trace " + run.trace_path + " is empty or unreadable");
    return;
  }
  json trace;
  try {
    trace = json::parse(text);
  } catch (const std::exception& e) {
    fail("the trace " + run.trace_path + " is not valid JSON: " + e.what());
    return;
  }
  if (!trace.is_array()) {
    fail("the trace is not a JSON array");
    return;
  }

  // The session: CUPTI on, and the time base.
  const json* session = nullptr;
  const json* stats_event = nullptr;
  for (const json& e : trace) {
    if (str_of(e, "ph") != "M") continue;
    if (str_of(e, "name") == "jitscope_session" && session == nullptr) session = &e;
    if (str_of(e, "name") == "jitscope_stats") stats_event = &e;
  }
  if (session == nullptr) {
    fail("no jitscope_session metadata event in the trace");
    return;
  }
  const json& session_args = args_of(*session);
  const json* cupti = member(session_args, "cupti");
  if (cupti == nullptr || !cupti->is_object()) {
    fail("jitscope_session has no args.cupti: " + brief(*session));
    return;
  }
  if (str_of(*cupti, "state") != "on") {
    fail("CUPTI did not start on this GPU machine: args.cupti.state = \"" +
         str_of(*cupti, "state") + "\", reason: \"" + str_of(*cupti, "reason") + "\" (driver " +
         driver_version_text() + ", toolkit " + version_text(CUDA_VERSION) +
         "; CUPTI needs a driver at least as new as its toolkit, and no other CUPTI client "
         "such as Nsight Systems)");
    return;
  }
  const std::optional<long long> start_ns = int_of(session_args, "session_start_monotonic_ns");
  if (!start_ns || *start_ns <= 0) {
    fail("jitscope_session has no args.session_start_monotonic_ns: " + brief(*session));
    return;
  }
  const double uncertainty_us =
      static_cast<double>(int_of(*cupti, "uncertainty_ns").value_or(0)) / 1000.0;
  const double tolerance_us = 1.0 + uncertainty_us;
  const double session_start_us = static_cast<double>(*start_ns) / 1000.0;
  const double end_us = static_cast<double>(run.end_ns) / 1000.0;

  const long long host_pid = run.host_pid;
  const long long gpu_pid = 10'000'000LL * (run.device_ordinal + 1) + host_pid;

  std::vector<const json*> cuda_slices, kernels, flow_starts, flow_ends;
  std::map<std::string, int> cuda_names;
  for (const json& e : trace) {
    const std::string ph = str_of(e, "ph");
    if (str_of(e, "cat") != "cuda") continue;
    if (ph == "X") {
      cuda_slices.push_back(&e);
      ++cuda_names[str_of(e, "name")];
      if (str_of(e, "name").find("saxpy") != std::string::npos) kernels.push_back(&e);
    } else if (ph == "s") {
      flow_starts.push_back(&e);
    } else if (ph == "f") {
      flow_ends.push_back(&e);
    }
  }
  auto names_seen = [&] {
    std::string s;
    for (const auto& [name, count] : cuda_names) {
      s += (s.empty() ? "" : ", ") + name + " x" + std::to_string(count);
    }
    return s.empty() ? std::string("none") : s;
  };

  // Every CUDA slice lies inside the session.
  for (const json* e : cuda_slices) {
    const std::optional<double> ts = num_of(*e, "ts"), dur = num_of(*e, "dur");
    if (!ts || !dur) {
      fail("a cuda slice without a numeric ts/dur: " + brief(*e));
      continue;
    }
    if (*ts < session_start_us - tolerance_us) {
      fail("a cuda slice starts " + std::to_string(session_start_us - *ts) +
           " us before the session (session_start_monotonic_ns " + std::to_string(*start_ns) +
           "; GPU timestamps off the CLOCK_MONOTONIC axis?): " + brief(*e));
    }
    if (*ts + *dur > end_us + tolerance_us) {
      fail("a cuda slice ends " + std::to_string(*ts + *dur - end_us) +
           " us after the program stopped the session (GPU timestamps off the "
           "CLOCK_MONOTONIC axis?): " +
           brief(*e));
    }
  }

  // The kernels.
  if (static_cast<int>(kernels.size()) != kLaunches) {
    fail("expected " + std::to_string(kLaunches) +
         " kernel slices (ph X, cat cuda, name containing \"saxpy\"), found " +
         std::to_string(kernels.size()) + "; cuda slices in the trace: " + names_seen());
  }
  auto find_metadata = [&](const char* what, long long pid, std::optional<long long> tid) {
    for (const json& e : trace) {
      if (str_of(e, "ph") != "M" || str_of(e, "name") != what) continue;
      if (int_of(e, "pid") != pid) continue;
      if (tid && int_of(e, "tid") != *tid) continue;
      return &e;
    }
    return static_cast<const json*>(nullptr);
  };
  const json* process = find_metadata("process_name", gpu_pid, std::nullopt);
  if (process == nullptr) {
    fail("no process_name metadata for the GPU's pid " + std::to_string(gpu_pid));
  } else {
    const std::string name = str_of(args_of(*process), "name");
    const std::string want = "GPU " + std::to_string(run.device_ordinal);
    if (name.rfind(want, 0) != 0 || (name.size() > want.size() && name[want.size()] != ' ')) {
      fail("the GPU process is named \"" + name + "\", expected it to start with \"" + want + "\"");
    }
  }

  for (const json* k : kernels) {
    const json& a = args_of(*k);
    const std::string what = "kernel " + brief(*k);
    const std::optional<long long> pid = int_of(*k, "pid"), tid = int_of(*k, "tid");
    const std::optional<long long> stream = int_of(a, "stream");
    const std::optional<long long> corr = int_of(a, "correlation");
    if (pid != gpu_pid) {
      fail("pid is not the GPU's (10000000 x (device " + std::to_string(run.device_ordinal) +
           " + 1) + host pid " + std::to_string(host_pid) + " = " + std::to_string(gpu_pid) +
           "): " + what);
    }
    if (int_of(a, "device") != run.device_ordinal) {
      fail("args.device is not " + std::to_string(run.device_ordinal) + ": " + what);
    }
    if (!stream || tid != stream) fail("tid is not args.stream (the stream track): " + what);
    if (!corr || *corr <= 0) fail("no numeric args.correlation: " + what);
    if (str_of(a, "compiled_by") != run.unit_slice) {
      fail("args.compiled_by is not the unit that loaded the module (\"" + run.unit_slice +
           "\"): " + what);
    }
    if (str_of(a, "compiled_by_id") != run.unit_id.str()) {
      fail("args.compiled_by_id is not \"" + run.unit_id.str() + "\": " + what);
    }
    if (str_of(a, "span") != kRunSpan) {
      fail(std::string("args.span is not \"") + kRunSpan + "\" (the span open at launch): " + what);
    }
    if (member(a, "compile_id") != nullptr) {
      fail("args.compile_id is set, but the kernel was launched outside any unit: " + what);
    }
    if (member(a, "unattributed") != nullptr) {
      fail("the kernel is unattributed (its cuLaunchKernel call was never matched): " + what);
    }
    const json* grid = member(a, "grid");
    const json* block = member(a, "block");
    if (grid == nullptr || *grid != json::array({kGrid, 1, 1}) || block == nullptr ||
        *block != json::array({kBlock, 1, 1})) {
      fail("args.grid/block are not [" + std::to_string(kGrid) + ",1,1]/[" +
           std::to_string(kBlock) + ",1,1]: " + what);
    }
    if (pid && tid) {
      const json* track = find_metadata("thread_name", *pid, *tid);
      if (track == nullptr) {
        fail("no thread_name metadata for the kernel's stream track (pid " + std::to_string(*pid) +
             ", tid " + std::to_string(*tid) + ")");
      } else if (str_of(args_of(*track), "name") != "stream " + std::to_string(*tid)) {
        fail("the stream track is named \"" + str_of(args_of(*track), "name") +
             "\", expected \"stream " + std::to_string(*tid) + "\"");
      }
    }
    if (!corr) continue;

    // The launch flow: one end on the kernel, one start on its cuLaunchKernel slice.
    auto flows_with = [&](const std::vector<const json*>& events) {
      std::vector<const json*> out;
      for (const json* e : events) {
        if (int_of(*e, "id") == *corr && str_of(*e, "name") == "launch") out.push_back(e);
      }
      return out;
    };
    const auto ends = flows_with(flow_ends);
    const auto starts = flows_with(flow_starts);
    const std::string hint =
        " (the kernel's cuLaunchKernel activity record was not joined with it; with "
        "JSTEST_GPU_SETTLE_MS=0 this points at the order of the final flush)";
    if (ends.size() != 1) {
      fail("expected one flow end (ph f, id " + std::to_string(*corr) + ", name launch), found " +
           std::to_string(ends.size()) + hint + ": " + what);
    } else {
      const json& f = *ends[0];
      if (num_of(f, "ts") != num_of(*k, "ts") || int_of(f, "pid") != pid ||
          int_of(f, "tid") != tid || str_of(f, "bp") != "e") {
        fail("the flow end does not bind to its kernel (same ts, pid, tid, \"bp\":\"e\"): " +
             brief(f) + " vs " + what);
      }
    }
    if (starts.size() != 1) {
      fail("expected one flow start (ph s, id " + std::to_string(*corr) + ", name launch), found " +
           std::to_string(starts.size()) + hint + ": " + what);
    } else {
      const json& s = *starts[0];
      if (int_of(s, "pid") != host_pid) {
        fail("the flow start is not on the host pid " + std::to_string(host_pid) + ": " + brief(s));
      }
      const json* api = nullptr;
      int bound = 0;
      for (const json* e : cuda_slices) {
        if (int_of(*e, "pid") == int_of(s, "pid") && int_of(*e, "tid") == int_of(s, "tid") &&
            num_of(*e, "ts") == num_of(s, "ts")) {
          api = e;
          ++bound;
        }
      }
      if (bound != 1) {
        fail("the flow start binds to " + std::to_string(bound) +
             " cuda slices (same pid, tid, ts), expected exactly one (its cuLaunchKernel): " +
             brief(s));
      } else {
        const json& aa = args_of(*api);
        if (str_of(*api, "name").rfind("cuLaunchKernel", 0) != 0) {
          fail("the flow starts on \"" + str_of(*api, "name") +
               "\", expected the cuLaunchKernel slice: " + brief(*api));
        }
        if (int_of(aa, "correlation") != corr) {
          fail("the flow's cuLaunchKernel slice has another correlation id: " + brief(*api));
        }
        if (str_of(aa, "span") != kRunSpan) {
          fail(std::string("the cuLaunchKernel slice's args.span is not \"") + kRunSpan +
               "\": " + brief(*api));
        }
      }
    }
  }

  // The load happened inside the unit.
  int loads_in_unit = 0;
  for (const json* e : cuda_slices) {
    if (str_of(*e, "name") != "cuModuleLoadData" || int_of(*e, "pid") != host_pid) continue;
    const json& a = args_of(*e);
    if (str_of(a, "compile_id") == run.unit_id.str() &&
        str_of(a, "compile_unit") == run.unit_slice) {
      ++loads_in_unit;
    } else {
      fail("the cuModuleLoadData slice does not carry the unit (compile_id \"" + run.unit_id.str() +
           "\", compile_unit \"" + run.unit_slice + "\"): " + brief(*e));
    }
  }
  if (loads_in_unit != 1) {
    fail("expected one cuModuleLoadData slice inside the unit, found " +
         std::to_string(loads_in_unit) + "; cuda slices in the trace: " + names_seen());
  }

  if (g_failures != 0 && stats_event != nullptr) {
    if (const json* c = member(args_of(*stats_event), "cupti")) {
      note("jitscope_stats args.cupti: " + brief(*c));
    }
  }
}

void check_stats(const jitscope::SessionStats& s) {
  const std::string all = "stats: cupti_on " + std::to_string(s.cupti_on) + ", gpu_events " +
                          std::to_string(s.gpu_events) + ", gpu_flows " +
                          std::to_string(s.gpu_flows) + ", gpu_unattributed " +
                          std::to_string(s.gpu_unattributed) + ", events_dropped " +
                          std::to_string(s.events_dropped);
  if (!s.cupti_on) fail("SessionStats::cupti_on is false; " + all);
  if (s.gpu_events < static_cast<std::uint64_t>(kLaunches) + 1) {
    fail("SessionStats::gpu_events < " + std::to_string(kLaunches + 1) +
         " (the kernels and the copies); " + all);
  }
  if (s.gpu_flows < static_cast<std::uint64_t>(kLaunches)) {
    fail("SessionStats::gpu_flows < " + std::to_string(kLaunches) + "; " + all);
  }
  if (s.gpu_unattributed != 0) fail("SessionStats::gpu_unattributed is not 0; " + all);
  if (s.write_failed) fail("SessionStats::write_failed is true; " + all);
}

void check_metrics(const Run& run) {
  std::ifstream in(run.metrics_path);
  if (!in) {
    fail("cannot open the metrics file " + run.metrics_path);
    return;
  }
  std::string line;
  int lineno = 0, matches = 0;
  while (std::getline(in, line)) {
    ++lineno;
    if (line.empty()) continue;
    json m;
    try {
      m = json::parse(line);
    } catch (const std::exception& e) {
      fail("metrics line " + std::to_string(lineno) + " is not JSON: " + e.what());
      continue;
    }
    if (str_of(m, "record") != "gpu" || str_of(m, "compile_id") != run.unit_id.str()) continue;
    ++matches;
    const json* gpu = member(m, "gpu");
    if (gpu == nullptr || !gpu->is_object()) {
      fail("the unit's gpu metrics line has no \"gpu\" object: " + brief(m));
      continue;
    }
    if (int_of(*gpu, "compiled_kernels") != kLaunches) {
      fail("gpu.compiled_kernels is not " + std::to_string(kLaunches) + ": " + brief(m));
    }
    if (int_of(*gpu, "compiled_kernel_ns").value_or(0) <= 0) {
      fail("gpu.compiled_kernel_ns is not > 0: " + brief(m));
    }
    if (int_of(*gpu, "kernels") != 0) {
      fail("gpu.kernels is not 0, but no kernel ran inside the unit: " + brief(m));
    }
  }
  if (matches != 1) {
    fail("expected one metrics line with \"record\":\"gpu\" and \"compile_id\":\"" +
         run.unit_id.str() + "\" in " + run.metrics_path + ", found " + std::to_string(matches));
  }
}

// ---- the program -----------------------------------------------------------

int run_test(const std::string& dir) {
  // The driver: absent or unusable is a skip.
  g_cu.lib = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
  if (g_cu.lib == nullptr) {
    const char* e = ::dlerror();
    return skip(std::string("no CUDA driver (") + (e != nullptr ? e : "libcuda.so.1 not found") +
                ")");
  }
  std::string missing;
  bool ok = true;
  ok &= load_symbol(g_cu.lib, "cuInit", g_cu.cuInit, &missing);
  ok &= load_symbol(g_cu.lib, "cuDeviceGetCount", g_cu.cuDeviceGetCount, &missing);
  ok &= load_symbol(g_cu.lib, "cuDeviceGet", g_cu.cuDeviceGet, &missing);
  ok &= load_symbol(g_cu.lib, "cuDeviceGetAttribute", g_cu.cuDeviceGetAttribute, &missing);
  ok &= load_symbol(g_cu.lib, "cuDevicePrimaryCtxRetain", g_cu.cuDevicePrimaryCtxRetain, &missing);
  ok &= load_symbol(g_cu.lib, "cuDevicePrimaryCtxRelease_v2", g_cu.cuDevicePrimaryCtxRelease_v2,
                    &missing);
  ok &= load_symbol(g_cu.lib, "cuCtxSetCurrent", g_cu.cuCtxSetCurrent, &missing);
  ok &= load_symbol(g_cu.lib, "cuCtxSynchronize", g_cu.cuCtxSynchronize, &missing);
  ok &= load_symbol(g_cu.lib, "cuModuleLoadData", g_cu.cuModuleLoadData, &missing);
  ok &= load_symbol(g_cu.lib, "cuModuleGetFunction", g_cu.cuModuleGetFunction, &missing);
  ok &= load_symbol(g_cu.lib, "cuModuleUnload", g_cu.cuModuleUnload, &missing);
  ok &= load_symbol(g_cu.lib, "cuMemAlloc_v2", g_cu.cuMemAlloc_v2, &missing);
  ok &= load_symbol(g_cu.lib, "cuMemFree_v2", g_cu.cuMemFree_v2, &missing);
  ok &= load_symbol(g_cu.lib, "cuMemcpyHtoD_v2", g_cu.cuMemcpyHtoD_v2, &missing);
  ok &= load_symbol(g_cu.lib, "cuMemcpyDtoH_v2", g_cu.cuMemcpyDtoH_v2, &missing);
  ok &= load_symbol(g_cu.lib, "cuLaunchKernel", g_cu.cuLaunchKernel, &missing);
  load_symbol(g_cu.lib, "cuGetErrorName", g_cu.cuGetErrorName, nullptr);
  load_symbol(g_cu.lib, "cuGetErrorString", g_cu.cuGetErrorString, nullptr);
  load_symbol(g_cu.lib, "cuDriverGetVersion", g_cu.cuDriverGetVersion, nullptr);
  load_symbol(g_cu.lib, "cuDeviceGetName", g_cu.cuDeviceGetName, nullptr);
  if (!ok) {
    fail("libcuda.so.1 lacks driver functions this test needs: " + missing + " (driver " +
         driver_version_text() + ")");
    return kFail;
  }

  if (const CUresult r = g_cu.cuInit(0); r != CUDA_SUCCESS) {
    std::string hint;
#if defined(__SANITIZE_ADDRESS__)
    hint = "; under AddressSanitizer the driver needs ASAN_OPTIONS=protect_shadow_gap=0";
#endif
    return skip("cuInit failed: " + cu_error(r) + " (driver " + driver_version_text() + hint + ")");
  }
  int count = 0;
  if (const CUresult r = g_cu.cuDeviceGetCount(&count); r != CUDA_SUCCESS) {
    return skip("cuDeviceGetCount failed: " + cu_error(r));
  }
  if (count <= 0) return skip("the CUDA driver sees no device");

  Resources res;
  Run run;
  run.device_ordinal = 0;
  if (!cu_ok(g_cu.cuDeviceGet(&res.device, run.device_ordinal), "cuDeviceGet(0)")) return kFail;
  int major = 0, minor = 0;
  if (!cu_ok(g_cu.cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                                       res.device),
             "cuDeviceGetAttribute(COMPUTE_CAPABILITY_MAJOR)") ||
      !cu_ok(g_cu.cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
                                       res.device),
             "cuDeviceGetAttribute(COMPUTE_CAPABILITY_MINOR)")) {
    return kFail;
  }
  char device_name[256] = "unknown";
  if (g_cu.cuDeviceGetName != nullptr &&
      g_cu.cuDeviceGetName(device_name, sizeof device_name, res.device) != CUDA_SUCCESS) {
    std::snprintf(device_name, sizeof device_name, "unknown");
  }
  const int cc = major * 10 + minor;

  // What NVRTC can build for it: a CUBIN for this exact architecture, else
  // PTX for the newest architecture below it (the driver JITs it).
  const std::vector<int> archs = nvrtc_archs();
  if (archs.empty()) {
    fail("nvrtcGetSupportedArchs returned no architecture");
    return kFail;
  }
  bool exact = false;
  int below = 0;
  std::string arch_list;
  for (int a : archs) {
    exact |= a == cc;
    if (a <= cc && a > below) below = a;
    arch_list += (arch_list.empty() ? "" : " ") + std::to_string(a);
  }
  if (!exact && below == 0) {
    return skip("device 0 (" + std::string(device_name) + ") is sm_" + std::to_string(cc) +
                ", which this toolkit's NVRTC cannot target (it supports: " + arch_list + ")");
  }
  const std::string target =
      exact ? "sm_" + std::to_string(cc) : "compute_" + std::to_string(below);
  if (!exact) note("NVRTC has no sm_" + std::to_string(cc) + "; compiling PTX for " + target);

  // The session. Started before the context exists, so CUPTI sees it created.
  // With its parents: run by hand, it may be given any path.
  std::error_code made;
  std::filesystem::create_directories(dir, made);
  if (made) {
    fail("cannot create the output directory " + dir + ": " + made.message());
    return kFail;
  }
  run.trace_path = dir + "/gpu_trace.json";
  run.metrics_path = dir + "/gpu_metrics.jsonl";
  run.host_pid = static_cast<int>(::getpid());
  (void)::unlink(run.trace_path.c_str());  // never check a previous run's files
  (void)::unlink(run.metrics_path.c_str());
  jitscope::Config cfg;
  cfg.output_path = run.trace_path;
  cfg.metrics_path = run.metrics_path;
  cfg.cupti = jitscope::CuptiMode::kOn;
  cfg.flush_interval = std::chrono::milliseconds(20);
  cfg.overflow = jitscope::OverflowPolicy::kBlock;  // an exact trace: no span dropped
  if (const jitscope::Status st = jitscope::start(cfg); !st) {
    fail("jitscope::start failed: " + st.message());
    return kFail;
  }
  SessionGuard session_guard;  // declared after `res`: stops before the GPU resources go

  if (!cu_ok(g_cu.cuDevicePrimaryCtxRetain(&res.context, res.device), "cuDevicePrimaryCtxRetain")) {
    return kFail;
  }
  if (!cu_ok(g_cu.cuCtxSetCurrent(res.context), "cuCtxSetCurrent")) return kFail;

  // Compile and load inside a compile unit.
  CUfunction saxpy = nullptr;
  {
    jitscope::CompileUnitOptions options;  // (designated initializers warn under -Wextra)
    options.frame = "saxpy";
    jitscope::CompileUnit unit(options);
    run.unit_id = unit.id();
    run.unit_slice = unit.id().display() + " " + unit.name();
    Image image;
    bool built = false;
    {
      JITSCOPE_SPAN("nvrtc_compile");
      built = compile_saxpy(target, !exact, image);
    }
    if (!built) {
      unit.fail("nvrtc", "compiling saxpy for " + target + " failed");
      return kFail;
    }
    const CUresult loaded = g_cu.cuModuleLoadData(&res.module, image.bytes.data());
    if (!cu_ok(loaded, ("cuModuleLoadData(" + image.target + (image.ptx ? " PTX, " : " CUBIN, ") +
                        std::to_string(image.bytes.size()) + " bytes)")
                           .c_str())) {
      res.module = nullptr;
      unit.fail("cuModuleLoadData", cu_error(loaded));
      return kFail;
    }
    const CUresult found = g_cu.cuModuleGetFunction(&saxpy, res.module, "saxpy");
    if (!cu_ok(found, "cuModuleGetFunction(\"saxpy\")")) {
      unit.fail("cuModuleGetFunction", cu_error(found));
      return kFail;
    }
    unit.close();
  }

  // Run it outside the unit.
  std::vector<float> hx(kElements), hy(kElements);
  for (int i = 0; i < kElements; ++i) {
    hx[i] = 1.0f;
    hy[i] = static_cast<float>(i);
  }
  const std::size_t bytes = sizeof(float) * static_cast<std::size_t>(kElements);
  {
    JITSCOPE_SPAN("run_kernels");
    if (!cu_ok(g_cu.cuMemAlloc_v2(&res.x, bytes), "cuMemAlloc_v2(x)") ||
        !cu_ok(g_cu.cuMemAlloc_v2(&res.y, bytes), "cuMemAlloc_v2(y)") ||
        !cu_ok(g_cu.cuMemcpyHtoD_v2(res.x, hx.data(), bytes), "cuMemcpyHtoD_v2(x)") ||
        !cu_ok(g_cu.cuMemcpyHtoD_v2(res.y, hy.data(), bytes), "cuMemcpyHtoD_v2(y)")) {
      return kFail;
    }
    float a = kA;
    int n = kElements;
    void* params[] = {&a, &res.x, &res.y, &n};
    for (int i = 0; i < kLaunches; ++i) {
      if (!cu_ok(g_cu.cuLaunchKernel(saxpy, kGrid, 1, 1, kBlock, 1, 1, 0, nullptr, params, nullptr),
                 ("cuLaunchKernel(saxpy) #" + std::to_string(i + 1)).c_str())) {
        return kFail;
      }
    }
    if (!cu_ok(g_cu.cuCtxSynchronize(), "cuCtxSynchronize after the launches")) return kFail;
    if (!cu_ok(g_cu.cuMemcpyDtoH_v2(hy.data(), res.y, bytes), "cuMemcpyDtoH_v2(y)")) {
      return kFail;
    }
  }
  // The kernels ran: y = i + launches * a * 1.
  for (int i = 0; i < kElements; ++i) {
    const float want = static_cast<float>(i) + static_cast<float>(kLaunches) * kA;
    if (hy[i] != want) {
      fail("saxpy computed y[" + std::to_string(i) + "] = " + std::to_string(hy[i]) +
           ", expected " + std::to_string(want));
      break;
    }
  }

  // Let the records come in ordinary flush cycles before stopping.
  long settle_ms = 250;
  if (const char* v = std::getenv("JSTEST_GPU_SETTLE_MS"); v != nullptr && *v != '\0') {
    settle_ms = std::strtol(v, nullptr, 10);
    if (settle_ms < 0) settle_ms = 0;
  }
  if (settle_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(settle_ms));

  const jitscope::Status stopped = jitscope::stop(&run.stats);
  run.end_ns = monotonic_ns();
  if (!stopped) fail("jitscope::stop failed: " + stopped.message());

  check_trace(run);  // first: when CUPTI is off, it says why
  if (run.stats.cupti_on) {
    check_stats(run.stats);
    check_metrics(run);
  } else if (g_failures == 0) {
    fail("SessionStats::cupti_on is false, though the trace says CUPTI was on");
  }
  if (g_failures != 0) {
    std::fprintf(stderr,
                 "%d check(s) failed on device 0 (%s, sm_%d, driver %s); trace: %s, metrics: %s\n",
                 g_failures, device_name, cc, driver_version_text().c_str(), run.trace_path.c_str(),
                 run.metrics_path.c_str());
    return kFail;
  }
  std::printf(
      "PASS: %d saxpy kernels on device 0 (%s, sm_%d, %s, driver %s) traced on GPU pid %lld: "
      "%llu GPU events, %llu launch flows, compiled by \"%s\"; trace: %s\n",
      kLaunches, device_name, cc, target.c_str(), driver_version_text().c_str(),
      10'000'000LL * (run.device_ordinal + 1) + run.host_pid,
      static_cast<unsigned long long>(run.stats.gpu_events),
      static_cast<unsigned long long>(run.stats.gpu_flows), run.unit_slice.c_str(),
      run.trace_path.c_str());
  return kPass;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2 || argv[1][0] == '\0') {
    std::fprintf(stderr, "usage: %s <output dir>\n", argc > 0 ? argv[0] : "gpu_trace_test");
    return kUsage;
  }
  int rc = kFail;
  try {
    rc = run_test(argv[1]);
  } catch (const std::exception& e) {
    fail(std::string("exception: ") + e.what());
    (void)jitscope::stop();
    rc = kFail;
  }
  if (rc == kPass && g_failures != 0) rc = kFail;
  return rc;
}
