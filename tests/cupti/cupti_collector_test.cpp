// The CUPTI collector without a GPU: real CUDA 13 activity records
// (CUpti_ActivityKernel10, Memcpy6, Memset4, API, ExternalCorrelation, Jit2,
// Overhead3) in buffers walked by cuptiActivityGetNextRecord through the same
// function CUPTI's buffer-completed callback calls, and API callbacks made as
// CUPTI makes them (enter/exit, the generated *_params structs). Checks what
// reaches the trace and the metrics file: attribution to spans, compile units
// and compiled_by, records in any order, unattributed records, skipped and
// truncated buffers, dropped counts, flows, out of memory in CUPTI's callbacks.
//
// Not covered here: CUPTI itself starting (needs a driver: the `gpu` label's
// test does it on a GPU machine), timestamps from the timestamp callback.
#include "cupti/fake_cupti.hpp"
#include "fail_allocation.hpp"
#include "trace_support.hpp"

#include "crash/crash_handler.hpp"  // sdk/src: wake_flusher

#include <jitscope/compile.h>
#include <jitscope/compile.hpp>
#include <jitscope/jitscope.hpp>

#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <thread>

namespace jitscope::testing {
namespace {

using detail::monotonic_ns;

int os_tid() { return static_cast<int>(::syscall(SYS_gettid)); }
long long gpu_pid(int device = 0) { return 10'000'000LL * (device + 1) + ::getpid(); }
long long us_to_ns(std::uint64_t ns) { return static_cast<long long>(ns); }

// A session whose collector acts as if CUPTI had started.
class GpuSession {
 public:
  explicit GpuSession(const std::string& stem, CuptiMode mode = CuptiMode::kOn) {
    detail::cupti_simulate_for_testing(true);
    cfg_ = test_config(stem);
    cfg_.cupti = mode;
    cfg_.metrics_path = temp_path(stem + ".metrics.jsonl");
    // One pool size for every test in this process (the pool is sized once).
    cfg_.cupti_buffers = 2;
    cfg_.cupti_buffer_bytes = 64 * 1024;
    const Status st = start(cfg_);
    EXPECT_TRUE(st.ok()) << st.message();
  }
  ~GpuSession() {
    (void)stop();
    detail::cupti_simulate_for_testing(false);
  }
  SessionStats finish() {
    SessionStats stats;
    const Status st = stop(&stats);
    EXPECT_TRUE(st.ok()) << st.message();
    trace_ = load_trace(cfg_.output_path);
    return stats;
  }
  const nlohmann::json& trace() const { return trace_; }
  const nlohmann::json& cupti_stats() const {
    return (*metadata(trace_, "jitscope_stats"))["args"]["cupti"];
  }
  // The "record":"gpu" metrics line of a compile id, or null.
  nlohmann::json gpu_metrics(const std::string& compile_id) const {
    std::ifstream in(cfg_.metrics_path);
    std::string line;
    while (std::getline(in, line)) {
      const nlohmann::json j = nlohmann::json::parse(line);
      if (j.value("record", "") == "gpu" && j["compile_id"] == compile_id) return j;
    }
    return nullptr;
  }

 private:
  Config cfg_;
  nlohmann::json trace_;
};

std::vector<nlohmann::json> slices_named(const nlohmann::json& trace, const std::string& name) {
  std::vector<nlohmann::json> out;
  for (const auto& e : events_with_ph(trace, "X")) {
    if (e["name"] == name) out.push_back(e);
  }
  return out;
}

const nlohmann::json* name_metadata(const nlohmann::json& trace, const std::string& what,
                                    long long pid, long long tid) {
  for (const auto& e : trace) {
    if (e["ph"] == "M" && e["name"] == what && e["pid"] == pid && e["tid"] == tid) return &e;
  }
  return nullptr;
}

// Every flow is one "s" and one "f" sharing id, cat and name, each bound to
// a slice with its ts, pid, tid and cat (what Chrome's viewers require).
// Returns the number of flows.
std::size_t check_flows(const nlohmann::json& trace) {
  const auto starts = events_with_ph(trace, "s");
  const auto finishes = events_with_ph(trace, "f");
  EXPECT_EQ(starts.size(), finishes.size());
  const auto xs = events_with_ph(trace, "X");
  const auto bound = [&](const nlohmann::json& flow) {
    return std::count_if(xs.begin(), xs.end(), [&](const nlohmann::json& x) {
      return x["ts"] == flow["ts"] && x["pid"] == flow["pid"] && x["tid"] == flow["tid"] &&
             x["cat"] == flow["cat"];
    });
  };
  for (const auto& s : starts) {
    const auto f = std::find_if(finishes.begin(), finishes.end(), [&](const nlohmann::json& e) {
      return e["id"] == s["id"] && e["cat"] == s["cat"] && e["name"] == s["name"];
    });
    EXPECT_NE(f, finishes.end()) << s.dump();
    if (f == finishes.end()) continue;
    EXPECT_EQ((*f)["bp"], "e");
    EXPECT_EQ(bound(s), 1) << "the start binds to exactly one slice: " << s.dump();
    EXPECT_EQ(bound(*f), 1) << "the end binds to exactly one slice: " << f->dump();
    EXPECT_EQ((*f)["pid"].get<long long>() / 10'000'000, 1) << "the end is on a GPU process";
    EXPECT_EQ(s["pid"], ::getpid()) << "the start is on the host process";
  }
  return starts.size();
}

// A unit's trace slice name, "[F/A] name": what compiled_by carries.
std::string slice_name(const CompileUnit& unit) { return unit.id().display() + " " + unit.name(); }

TEST(CuptiCollector, AKernelCarriesItsSpanAndTheUnitThatBuiltIt) {
  GpuSession session("cupti_attr");
  CompileId id;
  std::string unit_slice;
  {
    CompileUnit unit(CompileUnitOptions{.frame = "gemm"});
    id = unit.id();
    unit_slice = slice_name(unit);
    load_module(1, fake_module(0x1000));
    get_function(2, fake_function(0x2000), fake_module(0x1000));
  }
  const std::uint64_t t = monotonic_ns();
  {
    JITSCOPE_SPAN("run");
    launch_kernel(10, fake_function(0x2000));  // at run time, outside the unit
  }
  ActivityBuffer b;
  b.api(false, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, 10, t + 100, t + 200,
        static_cast<std::uint32_t>(os_tid()));
  b.kernel(10, t + 1000, t + 3000, 7, "gemm_kernel");
  b.consume();
  const SessionStats stats = session.finish();
  EXPECT_TRUE(stats.cupti_on);
  EXPECT_EQ(stats.gpu_events, 1u);
  EXPECT_EQ(stats.gpu_flows, 1u);
  EXPECT_EQ(stats.gpu_unattributed, 0u);

  const auto kernels = slices_named(session.trace(), "gemm_kernel");
  ASSERT_EQ(kernels.size(), 1u);
  const nlohmann::json& k = kernels[0];
  EXPECT_EQ(k["cat"], "cuda");
  EXPECT_EQ(k["pid"], gpu_pid());
  EXPECT_EQ(k["tid"], 7);
  EXPECT_EQ(to_ns(k["ts"]), us_to_ns(t + 1000));
  EXPECT_EQ(to_ns(k["dur"]), 2000);
  const nlohmann::json& a = k["args"];
  EXPECT_EQ(a["correlation"], 10);
  EXPECT_EQ(a["span"], "run");
  EXPECT_EQ(a["compiled_by"], unit_slice);
  EXPECT_EQ(a["compiled_by_id"], id.str());
  EXPECT_FALSE(a.contains("compile_id")) << "launched outside any compile unit";
  EXPECT_FALSE(a.contains("unattributed"));
  EXPECT_EQ(a["grid"], nlohmann::json::array({4, 1, 1}));
  EXPECT_EQ(a["block"], nlohmann::json::array({128, 1, 1}));
  EXPECT_EQ(a["registers_per_thread"], 32);
  EXPECT_EQ(a["shared_memory_bytes"], 1536);

  const auto apis = slices_named(session.trace(), "cuLaunchKernel");
  ASSERT_EQ(apis.size(), 1u);
  EXPECT_EQ(apis[0]["pid"], ::getpid());
  EXPECT_EQ(apis[0]["tid"], os_tid());
  EXPECT_EQ(apis[0]["cat"], "cuda");
  EXPECT_EQ(apis[0]["args"]["span"], "run");
  EXPECT_EQ(to_ns(apis[0]["ts"]), us_to_ns(t + 100));

  EXPECT_EQ(check_flows(session.trace()), 1u);
  const auto s = events_with_ph(session.trace(), "s");
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0]["id"], 10);
  EXPECT_EQ(s[0]["ts"], apis[0]["ts"]);
  EXPECT_EQ(events_with_ph(session.trace(), "f")[0]["ts"], k["ts"]);

  const nlohmann::json* process = name_metadata(session.trace(), "process_name", gpu_pid(), 0);
  ASSERT_NE(process, nullptr);
  EXPECT_EQ((*process)["args"]["name"], "GPU 0 (pid " + std::to_string(::getpid()) + ")");
  const nlohmann::json* stream = name_metadata(session.trace(), "thread_name", gpu_pid(), 7);
  ASSERT_NE(stream, nullptr);
  EXPECT_EQ((*stream)["args"]["name"], "stream 7");

  const nlohmann::json m = session.gpu_metrics(id.str());
  ASSERT_FALSE(m.is_null());
  EXPECT_EQ(m["name"], unit_slice.substr(unit_slice.find(' ') + 1));
  EXPECT_EQ(m["gpu"]["compiled_kernels"], 1);
  EXPECT_EQ(m["gpu"]["compiled_kernel_ns"], 2000);
  EXPECT_EQ(m["gpu"]["compiled_kernel_avg_ns"], 2000);
  EXPECT_EQ(m["gpu"]["kernels"], 0) << "none was launched inside the unit";
  const nlohmann::json& cs = session.cupti_stats();
  EXPECT_EQ(cs["state"], "on");
  EXPECT_EQ(cs["calls_correlated"], 2) << "the load and the launch";
  EXPECT_EQ(cs["records"], 2);
  ASSERT_EQ(cs["units"].size(), 1u);
  EXPECT_EQ(cs["units"][0]["compile_id"], id.str());
}

// A JIT that compiles in a unit and loads the binary later (at first
// launch, from its cache, on another thread) names the unit with a LoadScope.
TEST(CuptiCollector, ALoadScopeCreditsLaterLoadsToAClosedUnit) {
  GpuSession session("cupti_load_scope");
  CompileUnitRef built;
  std::string built_slice;
  {
    CompileUnit unit(CompileUnitOptions{.frame = "built_earlier"});
    built = unit.ref();
    built_slice = slice_name(unit);
  }
  std::thread([&built] {
    LoadScope loading(built);
    load_module(90, fake_module(0x9000));  // after the unit closed, on another thread
  }).join();
  get_function(91, fake_function(0x9100), fake_module(0x9000));
  {
    CompileUnit open(CompileUnitOptions{.frame = "open_here"});
    LoadScope loading(built);  // wins over the unit open on this thread
    load_module(92, fake_module(0x9200));
    get_function(93, fake_function(0x9300), fake_module(0x9200));
  }
  load_module(94, fake_module(0x9400));  // no scope, no unit: nobody's
  get_function(95, fake_function(0x9500), fake_module(0x9400));
  std::string open_slice;
  {
    CompileUnit open(CompileUnitOptions{.frame = "open_under_an_invalid_scope"});
    open_slice = slice_name(open);
    LoadScope invalid{CompileUnitRef{}};  // inactive: credited as without it
    EXPECT_FALSE(invalid.active());
    load_module(96, fake_module(0x9600));
    get_function(97, fake_function(0x9700), fake_module(0x9600));
  }
  launch_kernel(98, fake_function(0x9100));
  launch_kernel(99, fake_function(0x9300));
  launch_kernel(100, fake_function(0x9500));
  launch_kernel(101, fake_function(0x9700));
  const std::uint64_t t = monotonic_ns();
  ActivityBuffer b;
  b.kernel(98, t + 100, t + 200, 1, "scoped_on_a_thread");
  b.kernel(99, t + 300, t + 400, 1, "scoped_in_an_open_unit");
  b.kernel(100, t + 500, t + 600, 1, "unscoped");
  b.kernel(101, t + 700, t + 800, 1, "invalid_scope");
  b.consume();
  session.finish();
  for (const char* name : {"scoped_on_a_thread", "scoped_in_an_open_unit"}) {
    const auto k = slices_named(session.trace(), name);
    ASSERT_EQ(k.size(), 1u) << name;
    EXPECT_EQ(k[0]["args"]["compiled_by"], built_slice) << name;
  }
  const auto unscoped = slices_named(session.trace(), "unscoped");
  ASSERT_EQ(unscoped.size(), 1u);
  EXPECT_FALSE(unscoped[0]["args"].contains("compiled_by"));
  const auto invalid = slices_named(session.trace(), "invalid_scope");
  ASSERT_EQ(invalid.size(), 1u);
  EXPECT_EQ(invalid[0]["args"]["compiled_by"], open_slice);
  const nlohmann::json m = session.gpu_metrics(built_slice.substr(1, built_slice.find(']') - 1));
  ASSERT_FALSE(m.is_null());
  EXPECT_EQ(m["gpu"]["compiled_kernels"], 2);
}

// The C form, scopes ended out of order, and one ended on another thread.
TEST(CuptiCollector, LoadScopesFromCEndInAnyOrderAndOnAnyThread) {
  GpuSession session("cupti_load_scope_c");
  jitscope_unit* first = jitscope_unit_open(nullptr);
  jitscope_unit* second = jitscope_unit_open(nullptr);
  jitscope_unit_ref* first_ref = jitscope_unit_ref_get(first);
  jitscope_unit_ref* second_ref = jitscope_unit_ref_get(second);
  ASSERT_NE(first_ref, nullptr);
  ASSERT_NE(second_ref, nullptr);
  unsigned frame = 0, attempt = 0;
  jitscope_unit_compile_id(first, &frame, &attempt);
  const std::string first_id = std::to_string(frame) + "/" + std::to_string(attempt);
  jitscope_unit_compile_id(second, &frame, &attempt);
  const std::string second_id = std::to_string(frame) + "/" + std::to_string(attempt);
  jitscope_unit_close(second);
  jitscope_unit_close(first);

  jitscope_load_scope* a = jitscope_load_begin(first_ref);
  jitscope_load_scope* b = jitscope_load_begin(second_ref);
  load_module(110, fake_module(0xa000));  // the newest scope: second
  jitscope_load_end(a);                   // out of order
  load_module(111, fake_module(0xa100));  // still second
  jitscope_load_end(b);
  load_module(112, fake_module(0xa200));  // none

  // Ended on another thread: said once, and it ends on its own thread too
  // (at that thread's next load), so a pool worker is not left crediting it.
  std::thread([first_ref] {
    jitscope_load_scope* c = jitscope_load_begin(first_ref);
    std::thread([c] { jitscope_load_end(c); }).join();
    load_module(113, fake_module(0xa300));  // none: ended
  }).join();
  load_module(114, fake_module(0xa400));  // none here
  jitscope_unit_ref_free(first_ref);      // the scope keeps its unit alive
  jitscope_unit_ref_free(second_ref);

  const std::pair<std::uintptr_t, const char*> loads[] = {
      {0xa000, "k110"}, {0xa100, "k111"}, {0xa200, "k112"}, {0xa300, "k113"}, {0xa400, "k114"}};
  std::uint32_t correlation = 120;
  ActivityBuffer buffer;
  const std::uint64_t t = monotonic_ns();
  for (const auto& [module, name] : loads) {
    get_function(correlation, fake_function(module + 1), fake_module(module));
    launch_kernel(correlation + 1, fake_function(module + 1));
    buffer.kernel(correlation + 1, t + correlation, t + correlation + 1, 1, name);
    correlation += 2;
  }
  buffer.consume();
  session.finish();
  const auto compiled_by = [&](const char* name) {
    const auto k = slices_named(session.trace(), name);
    EXPECT_EQ(k.size(), 1u) << name;
    return k.empty() ? std::string("?") : k[0]["args"].value("compiled_by_id", std::string());
  };
  EXPECT_EQ(compiled_by("k110"), second_id);
  EXPECT_EQ(compiled_by("k111"), second_id);
  EXPECT_EQ(compiled_by("k112"), "");
  EXPECT_EQ(compiled_by("k113"), "");
  EXPECT_EQ(compiled_by("k114"), "");
}

TEST(CuptiCollector, WorkInsideAUnitAndItsDriverJitAreChargedToIt) {
  GpuSession session("cupti_unit");
  CompileId id;
  std::string unit_slice;
  const std::uint64_t t = monotonic_ns();
  {
    CompileUnit unit(CompileUnitOptions{.frame = "autotune"});
    id = unit.id();
    unit_slice = slice_name(unit);
    load_module(30, fake_module(0x3000));
    get_function(31, fake_function(0x3100), fake_module(0x3000));
    launch_kernel(32, fake_function(0x3100));  // benchmarking a candidate
    launch_kernel(33, fake_function(0x3100));
  }
  ActivityBuffer b;
  b.jit(30, t + 10, t + 510, CUPTI_ACTIVITY_JIT_OPERATION_COMPILE,
        static_cast<std::uint32_t>(os_tid()));
  b.jit(30, t + 520, t + 620, CUPTI_ACTIVITY_JIT_OPERATION_CACHE_STORE,
        static_cast<std::uint32_t>(os_tid()));
  for (std::uint32_t c : {32u, 33u}) {
    b.api(false, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, c, t + c * 100, t + c * 100 + 50,
          static_cast<std::uint32_t>(os_tid()));
  }
  b.kernel(32, t + 5000, t + 6000, 3, "candidate");
  b.kernel(33, t + 6000, t + 9000, 3, "candidate");
  b.consume();
  const SessionStats stats = session.finish();
  EXPECT_EQ(stats.gpu_events, 2u);
  EXPECT_EQ(stats.gpu_flows, 2u);

  for (const auto& k : slices_named(session.trace(), "candidate")) {
    EXPECT_EQ(k["args"]["compile_id"], id.str());
    EXPECT_EQ(k["args"]["compile_unit"], unit_slice);
    EXPECT_EQ(k["args"]["span"], unit_slice) << "the unit's own slice is the innermost span";
    EXPECT_EQ(k["args"]["compiled_by"], unit_slice);
  }
  const auto jit = slices_named(session.trace(), "driver JIT: compile");
  ASSERT_EQ(jit.size(), 1u);
  EXPECT_EQ(jit[0]["pid"], ::getpid());
  EXPECT_EQ(jit[0]["tid"], os_tid());
  EXPECT_EQ(jit[0]["args"]["compile_id"], id.str());
  EXPECT_EQ(jit[0]["args"]["cache_path"], "/tmp/ComputeCache");
  EXPECT_EQ(to_ns(jit[0]["dur"]), 500);
  EXPECT_EQ(slices_named(session.trace(), "driver JIT: cache store").size(), 1u);

  const nlohmann::json m = session.gpu_metrics(id.str());
  ASSERT_FALSE(m.is_null());
  EXPECT_EQ(m["gpu"]["kernels"], 2);
  EXPECT_EQ(m["gpu"]["kernel_ns"], 4000);
  EXPECT_EQ(m["gpu"]["kernel_avg_ns"], 2000);
  EXPECT_EQ(m["gpu"]["compiled_kernels"], 2);
  EXPECT_EQ(m["gpu"]["driver_jit_ops"], 2);
  EXPECT_EQ(m["gpu"]["driver_jit_ns"], 600);
  EXPECT_EQ(m["gpu"]["driver_jit_compiles"], 1);
  EXPECT_EQ(check_flows(session.trace()), 2u);
}

TEST(CuptiCollector, RecordsInAnyOrderAreJoined) {
  GpuSession session("cupti_order");
  const std::uint64_t t = monotonic_ns();
  {
    JITSCOPE_SPAN("step");
    launch_kernel(20, fake_function(0x9000));
  }
  // The kernel first, alone; its API record and external id come later, the
  // external correlation after the API record it belongs to.
  ActivityBuffer first;
  first.kernel(20, t + 2000, t + 2500, 5, "early_kernel");
  first.consume();
  std::this_thread::sleep_for(std::chrono::milliseconds(30));  // several flusher cycles
  ActivityBuffer second;
  second.api(true, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 20, t + 10, t + 90,
             static_cast<std::uint32_t>(os_tid()));
  second.external(20, 555);
  // A kernel whose records arrive before its call reached the flusher.
  second.api(false, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, 21, t + 100, t + 150,
             static_cast<std::uint32_t>(os_tid()));
  second.kernel(21, t + 3000, t + 3500, 5, "before_its_call");
  second.consume();
  {
    JITSCOPE_SPAN("late");
    launch_kernel(21, fake_function(0x9000));
  }
  const SessionStats stats = session.finish();
  EXPECT_EQ(stats.gpu_events, 2u);
  EXPECT_EQ(stats.gpu_unattributed, 0u);
  EXPECT_EQ(stats.gpu_flows, 2u);
  const auto early = slices_named(session.trace(), "early_kernel");
  ASSERT_EQ(early.size(), 1u);
  EXPECT_EQ(early[0]["args"]["span"], "step");
  EXPECT_EQ(early[0]["args"]["external_id"], 555);
  const auto late = slices_named(session.trace(), "before_its_call");
  ASSERT_EQ(late.size(), 1u);
  EXPECT_EQ(late[0]["args"]["span"], "late");
  ASSERT_EQ(slices_named(session.trace(), "cudaLaunchKernel").size(), 1u)
      << "runtime API names lose their _v7000";
  EXPECT_EQ(slices_named(session.trace(), "cudaLaunchKernel")[0]["args"]["external_id"], 555);
  EXPECT_EQ(check_flows(session.trace()), 2u);
  EXPECT_EQ(session.cupti_stats()["external_correlations"], 1);
}

// A kernel waits for its API record a grace of cycles that are each at
// least a flush interval apart: a flusher woken early (snapshots, EINTR)
// runs cycles faster than its interval. When every write was a cycle, 300
// wakes in 30 ms had it write the kernel without its API record, and so
// without its launch arrow.
TEST(CuptiCollector, AFlusherWokenEarlyStillWaitsForTheApiRecord) {
  GpuSession session("cupti_early_wakes");
  const std::uint64_t t = monotonic_ns();
  {
    JITSCOPE_SPAN("step");
    launch_kernel(30, fake_function(0x9100));
  }
  ActivityBuffer first;
  first.kernel(30, t + 2000, t + 2500, 5, "waiting_kernel");
  first.consume();
  for (int i = 0; i < 300; ++i) {  // more than the grace's 100 cycles at 5 ms
    detail::wake_flusher();
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  ActivityBuffer second;
  second.api(true, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 30, t + 10, t + 90,
             static_cast<std::uint32_t>(os_tid()));
  second.consume();
  const SessionStats stats = session.finish();
  EXPECT_EQ(stats.gpu_events, 1u);
  EXPECT_EQ(stats.gpu_unattributed, 0u);
  EXPECT_EQ(stats.gpu_flows, 1u);
  EXPECT_EQ(check_flows(session.trace()), 1u);
}

TEST(CuptiCollector, RecordsWhoseCallNeverComesAreKeptAndCounted) {
  GpuSession session("cupti_unattributed");
  const std::uint64_t t = monotonic_ns();
  ActivityBuffer b;
  b.kernel(77, t + 100, t + 400, 2, "orphan");
  // A CUDA call on a thread jitscope never saw: its own named track.
  b.api(true, CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, 78, t + 10, t + 20, 999999);
  b.consume();
  const SessionStats stats = session.finish();
  EXPECT_EQ(stats.gpu_events, 1u);
  EXPECT_EQ(stats.gpu_unattributed, 1u);
  EXPECT_EQ(stats.gpu_flows, 0u);
  const auto orphan = slices_named(session.trace(), "orphan");
  ASSERT_EQ(orphan.size(), 1u);
  EXPECT_EQ(orphan[0]["args"]["unattributed"], true);
  EXPECT_FALSE(orphan[0]["args"].contains("span"));
  EXPECT_EQ(session.cupti_stats()["unattributed"], 1);
  const auto malloc_slices = slices_named(session.trace(), "cudaMalloc");
  ASSERT_EQ(malloc_slices.size(), 1u);
  EXPECT_EQ(malloc_slices[0]["tid"], 999999);
  const nlohmann::json* name = name_metadata(session.trace(), "thread_name", ::getpid(), 999999);
  ASSERT_NE(name, nullptr);
  EXPECT_EQ((*name)["args"]["name"], "CUDA thread 999999");
  EXPECT_TRUE(events_with_ph(session.trace(), "s").empty());
}

TEST(CuptiCollector, UnknownKindsAndTruncatedBuffersAreSkippedAndCounted) {
  GpuSession session("cupti_skip");
  const std::uint64_t t = monotonic_ns();
  {
    // A kind CUPTI can step over but jitscope does not write.
    ActivityBuffer b;
    b.kernel(40, t + 100, t + 200, 1, "before_pcie");
    b.add<CUpti_ActivityPcie>(CUPTI_ACTIVITY_KIND_PCIE);
    b.memset(41, t + 300, t + 400, 1, 256);
    b.consume();
  }
  {
    // A kind CUPTI does not know: nothing after it can be walked.
    ActivityBuffer b;
    b.kernel(42, t + 500, t + 600, 1, "before_unknown");
    b.add<CUpti_ActivityAPI>(static_cast<CUpti_ActivityKind>(9999));
    b.kernel(43, t + 700, t + 800, 1, "after_unknown");
    b.consume();
  }
  {
    // The last record cut off at the end of the valid bytes.
    ActivityBuffer b;
    b.kernel(44, t + 900, t + 1000, 1, "before_cut");
    b.kernel(45, t + 1100, t + 1200, 1, "cut");
    b.consume_first(b.size() - 8);
  }
  const SessionStats stats = session.finish();
  const nlohmann::json& cs = session.cupti_stats();
  EXPECT_EQ(cs["buffers_completed"], 3);
  EXPECT_EQ(cs["records"], 4) << "before_pcie, the memset, before_unknown, before_cut";
  EXPECT_EQ(cs["records_skipped"], 1);
  EXPECT_EQ(cs["records_unreadable"], 1);
  EXPECT_EQ(cs["buffers_truncated"], 1);
  EXPECT_EQ(stats.gpu_events, 4u);
  for (const char* kept : {"before_pcie", "Memset", "before_unknown", "before_cut"}) {
    EXPECT_EQ(slices_named(session.trace(), kept).size(), 1u) << kept;
  }
  for (const char* lost : {"after_unknown", "cut"}) {
    EXPECT_TRUE(slices_named(session.trace(), lost).empty()) << lost;
  }
}

TEST(CuptiCollector, PoolExhaustionAndCuptiDropsAreReported) {
  GpuSession session("cupti_pool");
  std::uint8_t* buffers[3] = {};
  std::size_t size = 0, max_records = 99;
  for (auto& buffer : buffers) detail::cupti_buffer_requested(&buffer, &size, &max_records);
  ASSERT_NE(buffers[0], nullptr);
  ASSERT_NE(buffers[1], nullptr);
  EXPECT_EQ(buffers[2], nullptr) << "a pool of 2";
  EXPECT_EQ(size, 0u) << "no buffer: size 0, so CUPTI drops and counts";
  EXPECT_EQ(max_records, 0u);
  // A completed buffer goes back to the pool after its records are read.
  ActivityBuffer filled;
  const std::uint64_t now = monotonic_ns();  // once: argument order is unspecified
  filled.kernel(90, now, now + 10, 1, "from_the_pool");
  std::memcpy(buffers[0], filled.data(), filled.size());
  detail::cupti_buffer_completed(nullptr, 0, buffers[0], 64 * 1024, filled.size());
  detail::cupti_buffer_completed(nullptr, 0, buffers[1], 64 * 1024, 0);
  std::uint8_t* again = nullptr;
  detail::cupti_buffer_requested(&again, &size, &max_records);
  EXPECT_NE(again, nullptr);
  EXPECT_EQ(size, 64u * 1024);
  detail::cupti_buffer_completed(nullptr, 0, again, size, 0);
  detail::cupti_count_dropped(17);  // what CUPTI reports for a context/stream
  session.finish();
  const nlohmann::json& cs = session.cupti_stats();
  EXPECT_EQ(cs["buffer_pool_exhausted"], 1);
  EXPECT_EQ(cs["records_dropped_by_cupti"], 17);
  EXPECT_EQ(cs["buffers_completed"], 3);
  EXPECT_EQ(slices_named(session.trace(), "from_the_pool").size(), 1u);
}

// Out of memory inside CUPTI's callbacks loses what it was building (a
// buffer's records, one call's module), says so once, and the collector
// goes on: later buffers and loads are read and attributed.
TEST(CuptiCollector, OutOfMemoryLosesOneBufferOrOneLoadAndSaysSo) {
  GpuSession session("cupti_oom");
  copy_to_device(70);  // builds the callback's tables (first use) before memory runs out
  const std::uint64_t t = monotonic_ns();
  ActivityBuffer lost;
  lost.kernel(71, t + 100, t + 200, 1, "lost_with_its_buffer");
  bool walk_failed = false, load_failed = false;
  ::testing::internal::CaptureStderr();
  {
    FailOneAllocation fail;  // the walk's first: its records are lost
    lost.consume();
    walk_failed = FailOneAllocation::happened();
  }
  {
    CompileUnit unit(CompileUnitOptions{.frame = "short of memory"});
    FailOneAllocation fail;  // the load's exit: its module is not remembered
    load_module(72, fake_module(0x7200));
    load_failed = FailOneAllocation::happened();
  }
  const std::string said = ::testing::internal::GetCapturedStderr();
  EXPECT_TRUE(walk_failed);
  EXPECT_TRUE(load_failed);
  {
    CompileUnit unit(CompileUnitOptions{.frame = "after"});
    load_module(73, fake_module(0x7300));
  }
  get_function(74, fake_function(0x7210), fake_module(0x7200));
  get_function(75, fake_function(0x7310), fake_module(0x7300));
  launch_kernel(76, fake_function(0x7210));
  launch_kernel(77, fake_function(0x7310));
  ActivityBuffer b;
  b.kernel(76, t + 300, t + 400, 1, "from_the_forgotten_module");
  b.kernel(77, t + 500, t + 600, 1, "from_a_later_module");
  b.consume();
  session.finish();
  EXPECT_EQ(said,
            "jitscope: reading a CUPTI buffer failed: out of memory\n"
            "jitscope: correlating a CUDA call failed: out of memory\n");
  EXPECT_TRUE(slices_named(session.trace(), "lost_with_its_buffer").empty());
  const auto forgotten = slices_named(session.trace(), "from_the_forgotten_module");
  const auto later = slices_named(session.trace(), "from_a_later_module");
  ASSERT_EQ(forgotten.size(), 1u);
  ASSERT_EQ(later.size(), 1u);
  EXPECT_FALSE(forgotten[0]["args"].contains("compiled_by"));
  EXPECT_TRUE(later[0]["args"].contains("compiled_by"));
  const nlohmann::json& cs = session.cupti_stats();
  EXPECT_EQ(cs["buffers_completed"], 1) << "the lost buffer is not counted as read";
  EXPECT_EQ(cs["records"], 2);
}

TEST(CuptiCollector, AnUnloadedModuleNoLongerNamesItsUnit) {
  GpuSession session("cupti_unload");
  {
    CompileUnit unit(CompileUnitOptions{.frame = "temp"});
    load_module(50, fake_module(0x5000));
    get_function(51, fake_function(0x5100), fake_module(0x5000));
  }
  launch_kernel(52, fake_function(0x5100));
  unload_module(53, fake_module(0x5000));
  launch_kernel(54, fake_function(0x5100));  // the driver may reuse the handle
  const std::uint64_t t = monotonic_ns();
  ActivityBuffer b;
  b.kernel(52, t + 100, t + 200, 1, "while_loaded");
  b.kernel(54, t + 300, t + 400, 1, "after_unload");
  b.consume();
  session.finish();
  const auto loaded = slices_named(session.trace(), "while_loaded");
  const auto unloaded = slices_named(session.trace(), "after_unload");
  ASSERT_EQ(loaded.size(), 1u);
  ASSERT_EQ(unloaded.size(), 1u);
  EXPECT_TRUE(loaded[0]["args"].contains("compiled_by"));
  EXPECT_FALSE(unloaded[0]["args"].contains("compiled_by"));
}

TEST(CuptiCollector, AReusedHandleOrADestroyedContextForgetsTheOldUnit) {
  GpuSession session("cupti_reuse");
  {
    CompileUnit unit(CompileUnitOptions{.frame = "first"});
    load_module(55, fake_module(0x5500));
  }
  // The driver hands out the same handle again, for a module loaded outside
  // any unit (its unload was not seen).
  load_module(56, fake_module(0x5500));
  get_function(57, fake_function(0x5510), fake_module(0x5500));
  launch_kernel(58, fake_function(0x5510));
  {
    CompileUnit unit(CompileUnitOptions{.frame = "second"});
    load_module(59, fake_module(0x5600));
    get_function(60, fake_function(0x5610), fake_module(0x5600));
  }
  launch_kernel(61, fake_function(0x5610));
  destroy_context(62);  // its modules go with it
  launch_kernel(63, fake_function(0x5610));
  const std::uint64_t t = monotonic_ns();
  ActivityBuffer b;
  b.kernel(58, t + 100, t + 200, 1, "reused_handle");
  b.kernel(61, t + 300, t + 400, 1, "before_destroy");
  b.kernel(63, t + 500, t + 600, 1, "after_destroy");
  b.consume();
  session.finish();
  ASSERT_EQ(slices_named(session.trace(), "reused_handle").size(), 1u);
  EXPECT_FALSE(slices_named(session.trace(), "reused_handle")[0]["args"].contains("compiled_by"));
  ASSERT_EQ(slices_named(session.trace(), "before_destroy").size(), 1u);
  EXPECT_TRUE(slices_named(session.trace(), "before_destroy")[0]["args"].contains("compiled_by"));
  ASSERT_EQ(slices_named(session.trace(), "after_destroy").size(), 1u);
  EXPECT_FALSE(slices_named(session.trace(), "after_destroy")[0]["args"].contains("compiled_by"));
}

// What an H100 showed (CUDA 13.0, driver 580): after cuModuleUnload the
// driver hands the same function handle out for the next module's kernel,
// and CUPTI's kernel records keep the first name that handle had; the
// launch callback's symbolName is right, in a buffer CUPTI rewrites for the
// next launch. No unit is involved, so the launching thread's cache (which
// holds the handle) sees no change to the handle map: the name is checked.
TEST(CuptiCollector, AKernelIsNamedByItsLaunchAlsoWhenTheDriverReusesItsHandle) {
  GpuSession session("cupti_kernel_names");
  char symbol[32];  // CUPTI's one buffer
  std::snprintf(symbol, sizeof symbol, "%s", "alpha_kernel");
  load_module(80, fake_module(0x8000));
  get_function(81, fake_function(0x8100), fake_module(0x8000));
  launch_kernel(82, fake_function(0x8100), symbol);
  launch_kernel(83, fake_function(0x8100), symbol);  // from this thread's cache
  unload_module(84, fake_module(0x8000));
  std::snprintf(symbol, sizeof symbol, "%s", "bravo_kernel");
  load_module(85, fake_module(0x8000));
  get_function(86, fake_function(0x8100), fake_module(0x8000));
  launch_kernel(87, fake_function(0x8100), symbol);
  std::snprintf(symbol, sizeof symbol, "%s", "overwritten");  // the next launch's
  launch_kernel(88, fake_function(0x8200));                   // no symbolName: CUPTI's name
  const std::uint64_t t = monotonic_ns();
  ActivityBuffer b;
  b.kernel(82, t + 100, t + 200, 1, "alpha_kernel");
  b.kernel(83, t + 300, t + 400, 1, "alpha_kernel");
  b.kernel(87, t + 500, t + 600, 1, "alpha_kernel");  // CUPTI's stale name
  b.kernel(88, t + 700, t + 800, 1, "cupti_name");
  b.consume();
  session.finish();
  const auto alpha = slices_named(session.trace(), "alpha_kernel");
  ASSERT_EQ(alpha.size(), 2u);
  EXPECT_EQ(alpha[0]["args"]["correlation"], 82);
  EXPECT_EQ(alpha[1]["args"]["correlation"], 83);
  const auto bravo = slices_named(session.trace(), "bravo_kernel");
  ASSERT_EQ(bravo.size(), 1u);
  EXPECT_EQ(bravo[0]["args"]["correlation"], 87);
  EXPECT_EQ(bravo[0]["args"]["grid"], nlohmann::json::array({4, 1, 1})) << "the rest is CUPTI's";
  EXPECT_EQ(slices_named(session.trace(), "cupti_name").size(), 1u);
  EXPECT_TRUE(slices_named(session.trace(), "overwritten").empty());
}

// A launching thread caches what it looked up; a change made on another
// thread must reach it.
TEST(CuptiCollector, AnotherThreadsUnloadReachesALaunchingThread) {
  GpuSession session("cupti_cache");
  {
    CompileUnit unit(CompileUnitOptions{.frame = "cached"});
    load_module(70, fake_module(0x7000));
    get_function(71, fake_function(0x7100), fake_module(0x7000));
  }
  std::atomic<int> step{0};
  std::thread launcher([&step] {
    launch_kernel(72, fake_function(0x7100));  // looks the unit up, and caches it
    step = 1;
    while (step.load() != 2) std::this_thread::yield();
    launch_kernel(74, fake_function(0x7100));  // the same thread, after the unload
  });
  while (step.load() != 1) std::this_thread::yield();
  unload_module(73, fake_module(0x7000));
  step = 2;
  launcher.join();
  const std::uint64_t t = monotonic_ns();
  ActivityBuffer b;
  b.kernel(72, t + 100, t + 200, 1, "cached_launch");
  b.kernel(74, t + 300, t + 400, 1, "after_unload");
  b.consume();
  session.finish();
  ASSERT_EQ(slices_named(session.trace(), "cached_launch").size(), 1u);
  EXPECT_TRUE(slices_named(session.trace(), "cached_launch")[0]["args"].contains("compiled_by"));
  ASSERT_EQ(slices_named(session.trace(), "after_unload").size(), 1u);
  EXPECT_FALSE(slices_named(session.trace(), "after_unload")[0]["args"].contains("compiled_by"));
}

TEST(CuptiCollector, AGraphLaunchDrawsOneArrowToItsFirstKernel) {
  GpuSession session("cupti_graph");
  const std::uint64_t t = monotonic_ns();
  {
    JITSCOPE_SPAN("replay");
    launch_graph(95);
  }
  ActivityBuffer b;
  b.api(false, CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch, 95, t + 10, t + 50,
        static_cast<std::uint32_t>(os_tid()));
  for (int i = 0; i < 3; ++i) {
    b.kernel(95, t + 1000 + i * 100, t + 1050 + i * 100, 4, "graph_node");
  }
  b.consume();
  const SessionStats stats = session.finish();
  EXPECT_EQ(stats.gpu_events, 3u);
  EXPECT_EQ(stats.gpu_flows, 1u);
  EXPECT_EQ(check_flows(session.trace()), 1u);
  for (const auto& k : slices_named(session.trace(), "graph_node")) {
    EXPECT_EQ(k["args"]["span"], "replay") << "every node keeps the call's span";
  }
}

TEST(CuptiCollector, RecordsWithoutTimesOrFromBeforeTheSessionAreCountedNotWritten) {
  const std::uint64_t before = monotonic_ns();
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  GpuSession session("cupti_times");
  ActivityBuffer b;
  b.kernel(96, 0, 0, 1, "still_running");  // CUPTI's "no time" at a forced flush
  b.kernel(97, before, before + 100, 1, "from_before");
  const std::uint64_t now = monotonic_ns();  // once: argument order is unspecified
  b.kernel(98, now, now + 100, 1, "in_session");
  b.consume();
  session.finish();
  EXPECT_TRUE(slices_named(session.trace(), "still_running").empty());
  EXPECT_TRUE(slices_named(session.trace(), "from_before").empty());
  EXPECT_EQ(slices_named(session.trace(), "in_session").size(), 1u);
  EXPECT_EQ(session.cupti_stats()["records_incomplete"], 1);
  EXPECT_EQ(session.cupti_stats()["records_before_session"], 1);
  for (const auto& e : session.trace()) {
    if (e.contains("ts")) EXPECT_GT(e["ts"].get<double>(), 0.0) << e.dump();
  }
}

TEST(CuptiCollector, AFailedLoadTagsNothing) {
  GpuSession session("cupti_failed_load");
  {
    CompileUnit unit(CompileUnitOptions{.frame = "broken"});
    load_module(60, fake_module(0x6000), /*result=*/200);  // CUDA_ERROR_INVALID_IMAGE
    get_function(61, fake_function(0x6100), fake_module(0x6000));
  }
  launch_kernel(62, fake_function(0x6100));
  ActivityBuffer b;
  const std::uint64_t now = monotonic_ns();  // once: argument order is unspecified
  b.kernel(62, now, now + 100, 1, "k");
  b.consume();
  session.finish();
  const auto k = slices_named(session.trace(), "k");
  ASSERT_EQ(k.size(), 1u);
  EXPECT_FALSE(k[0]["args"].contains("compiled_by"));
}

TEST(CuptiCollector, CopiesSetsAndOverheadHaveTheirPlaces) {
  GpuSession session("cupti_copies");
  const std::uint64_t t = monotonic_ns();
  {
    JITSCOPE_SPAN("upload");
    copy_to_device(70);
  }
  ActivityBuffer b;
  b.api(false, CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoD_v2, 70, t + 10, t + 60,
        static_cast<std::uint32_t>(os_tid()));
  b.memcpy(70, t + 100, t + 900, 7, 4096);
  b.overhead(t + 1000, t + 1250);
  // A synchronization CUPTI saw: on the thread of the call that waited.
  b.api(true, CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020, 71, t + 2000, t + 2600,
        static_cast<std::uint32_t>(os_tid()));
  b.sync(71, t + 2010, t + 2590, 7);
  // One whose call CUPTI did not report: on the stream it waited for.
  b.sync(72, t + 3000, t + 3100, 7);
  b.consume();
  const SessionStats stats = session.finish();
  EXPECT_EQ(stats.gpu_flows, 1u);
  const auto copies = slices_named(session.trace(), "Memcpy HtoD");
  ASSERT_EQ(copies.size(), 1u);
  EXPECT_EQ(copies[0]["args"]["bytes"], 4096);
  EXPECT_EQ(copies[0]["args"]["span"], "upload");
  EXPECT_EQ(copies[0]["tid"], 7);
  EXPECT_EQ(slices_named(session.trace(), "cuMemcpyHtoD").size(), 1u) << "driver names lose _v2";
  EXPECT_EQ(check_flows(session.trace()), 1u);
  const auto overhead = slices_named(session.trace(), "CUPTI overhead: buffer flush");
  ASSERT_EQ(overhead.size(), 1u);
  EXPECT_EQ(overhead[0]["cat"], "cupti");
  EXPECT_EQ(overhead[0]["pid"], ::getpid());
  const nlohmann::json* track = name_metadata(session.trace(), "thread_name", ::getpid(),
                                              overhead[0]["tid"].get<long long>());
  ASSERT_NE(track, nullptr);
  EXPECT_EQ((*track)["args"]["name"], "CUPTI overhead");
  EXPECT_EQ(session.cupti_stats()["overhead_ns"], 250);
  const auto syncs = slices_named(session.trace(), "sync: stream");
  ASSERT_EQ(syncs.size(), 2u);
  EXPECT_EQ(syncs[0]["pid"], ::getpid());
  EXPECT_EQ(syncs[0]["tid"], os_tid());
  EXPECT_EQ(to_ns(syncs[0]["dur"]), 580);
  EXPECT_EQ(syncs[1]["pid"], gpu_pid());
  EXPECT_EQ(syncs[1]["tid"], 7);
}

// The OS tid of this process's thread named `comm` (/proc), or 0.
int thread_named(const std::string& comm) {
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
    std::ifstream in(task.path() / "comm");
    std::string name;
    if (std::getline(in, name) && name == comm) return std::stoi(task.path().filename().string());
  }
  return 0;
}

// CUPTI overhead recorded on jitscope's flusher thread (which calls
// cuptiActivityFlushAll) is jitscope's own: its track says so. On an H100
// CUPTI put its buffer overhead on a thread of its own instead, which stays
// "CUDA thread <tid>".
TEST(CuptiCollector, OverheadOnTheFlusherThreadIsOnATrackNamedForIt) {
  GpuSession session("cupti_flusher_track");
  const int flusher = thread_named("jitscope-flush");
  ASSERT_NE(flusher, 0) << "the flusher thread names itself";
  const std::uint64_t t = monotonic_ns();
  ActivityBuffer b;
  auto& mine = b.overhead(t + 100, t + 200);
  mine.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
  mine.objectId.pt.threadId = static_cast<std::uint32_t>(flusher);
  auto& theirs = b.overhead(t + 300, t + 400);
  theirs.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
  theirs.objectId.pt.threadId = 0x7fff0001;  // a thread jitscope never saw
  b.consume();
  session.finish();
  const auto overhead = slices_named(session.trace(), "CUPTI overhead: buffer flush");
  ASSERT_EQ(overhead.size(), 2u);
  EXPECT_EQ(overhead[0]["tid"], flusher);
  const nlohmann::json* track = name_metadata(session.trace(), "thread_name", ::getpid(), flusher);
  ASSERT_NE(track, nullptr);
  EXPECT_EQ((*track)["args"]["name"], "jitscope flusher");
  track = name_metadata(session.trace(), "thread_name", ::getpid(), 0x7fff0001);
  ASSERT_NE(track, nullptr);
  EXPECT_EQ((*track)["args"]["name"], "CUDA thread " + std::to_string(0x7fff0001));
}

TEST(CuptiCollector, LaunchesFromSeveralThreadsKeepTheirOwnSpans) {
  GpuSession session("cupti_threads");
  const std::uint64_t t = monotonic_ns();
  struct Launch {
    std::uint32_t correlation;
    int tid;
  };
  std::vector<Launch> launches(6);
  std::vector<std::thread> threads;
  for (int w = 0; w < 2; ++w) {
    threads.emplace_back([w, &launches] {
      set_thread_name("launcher-" + std::to_string(w));
      Span span(w == 0 ? "worker_zero" : "worker_one");
      for (int i = 0; i < 3; ++i) {
        const auto c = static_cast<std::uint32_t>(100 + w * 10 + i);
        launch_kernel(c, fake_function(0xA000));
        launches[static_cast<std::size_t>(w * 3 + i)] = {c, os_tid()};
      }
    });
  }
  for (auto& th : threads) th.join();
  ActivityBuffer b;
  std::uint64_t at = t;
  for (const Launch& l : launches) {
    b.api(false, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, l.correlation, at, at + 10,
          static_cast<std::uint32_t>(l.tid));
    b.kernel(l.correlation, at + 100, at + 150, l.correlation / 10, "threaded");
    at += 1000;
  }
  b.consume();
  const SessionStats stats = session.finish();
  EXPECT_EQ(stats.gpu_events, 6u);
  EXPECT_EQ(check_flows(session.trace()), 6u);
  for (const auto& k : slices_named(session.trace(), "threaded")) {
    const int c = k["args"]["correlation"];
    EXPECT_EQ(k["args"]["span"], c < 110 ? "worker_zero" : "worker_one") << c;
  }
  for (const auto& api : slices_named(session.trace(), "cuLaunchKernel")) {
    const auto& l = *std::find_if(launches.begin(), launches.end(), [&](const Launch& x) {
      return x.correlation == api["args"]["correlation"].get<std::uint32_t>();
    });
    EXPECT_EQ(api["tid"], l.tid) << "on the thread that launched it";
  }
}

TEST(CuptiCollector, OffMeansNoCallsAndNoGpuTracks) {
  GpuSession session("cupti_off", CuptiMode::kOff);
  {
    JITSCOPE_SPAN("run");
    launch_kernel(5, fake_function(0xB000));
  }
  ActivityBuffer b;
  const std::uint64_t now = monotonic_ns();  // once: argument order is unspecified
  b.kernel(5, now, now + 10, 1, "not_collected");
  b.consume();  // nothing takes it: the session's collector is off
  const SessionStats stats = session.finish();
  EXPECT_FALSE(stats.cupti_on);
  EXPECT_NE(stats.cupti_off_reason.find("JITSCOPE_CUPTI=off"), std::string::npos);
  EXPECT_EQ(stats.gpu_events, 0u);
  EXPECT_EQ(session.cupti_stats()["state"], "off");
  EXPECT_EQ(session.cupti_stats()["calls_correlated"], 0);
  EXPECT_TRUE(slices_named(session.trace(), "not_collected").empty());
  EXPECT_EQ((*metadata(session.trace(), "jitscope_session"))["args"]["cupti"]["state"], "off");
}

TEST(CuptiCollector, RecordsLeftByAStoppedSessionDoNotReachTheNext) {
  {
    GpuSession first("cupti_first");
    first.finish();
  }
  ActivityBuffer late;
  const std::uint64_t now = monotonic_ns();  // once: argument order is unspecified
  late.kernel(8, now, now + 10, 1, "after_stop");
  late.consume();  // CUPTI may deliver a buffer after stop
  GpuSession second("cupti_second");
  second.finish();
  EXPECT_TRUE(slices_named(second.trace(), "after_stop").empty());
  const nlohmann::json& meta = (*metadata(second.trace(), "jitscope_session"))["args"]["cupti"];
  EXPECT_EQ(meta["timestamps"], "timestamp_callback");
  EXPECT_EQ(meta["kinds"].size(), 9u);
  EXPECT_EQ(meta["kinds"][0], "CONCURRENT_KERNEL");
}

TEST(CuptiCollector, ApiNamesAreClassifiedByWhatTheCollectorDoesWithThem) {
  using detail::ApiWatch;
  using detail::classify_api;
  EXPECT_EQ(classify_api("cuLaunchKernel"), ApiWatch::kLaunch);
  EXPECT_EQ(classify_api("cuLaunchKernel_ptsz"), ApiWatch::kLaunch);
  EXPECT_EQ(classify_api("cudaLaunchKernel_v7000"), ApiWatch::kLaunch);
  EXPECT_EQ(classify_api("cudaLaunchCooperativeKernel_ptsz_v9000"), ApiWatch::kLaunch);
  EXPECT_EQ(classify_api("cuLaunchKernelEx"), ApiWatch::kLaunchSecond);
  EXPECT_EQ(classify_api("cudaLaunchKernelExC_v11060"), ApiWatch::kLaunchSecond);
  EXPECT_EQ(classify_api("cuModuleLoadData"), ApiWatch::kLoad);
  EXPECT_EQ(classify_api("cuLibraryLoadData"), ApiWatch::kLoad);
  EXPECT_EQ(classify_api("cudaLibraryLoadFromFile_v12060"), ApiWatch::kLoad);
  EXPECT_EQ(classify_api("cuModuleGetFunction"), ApiWatch::kDerive);
  EXPECT_EQ(classify_api("cuKernelGetFunction"), ApiWatch::kDerive);
  EXPECT_EQ(classify_api("cuModuleUnload"), ApiWatch::kUnload);
  EXPECT_EQ(classify_api("cuMemcpyHtoDAsync_v2"), ApiWatch::kCopyOrSet);
  EXPECT_EQ(classify_api("cudaMemsetAsync_v3020"), ApiWatch::kCopyOrSet);
  EXPECT_EQ(classify_api("cudaGraphLaunch_v10000"), ApiWatch::kGraphLaunch);
  EXPECT_EQ(classify_api("cuGraphLaunch_ptsz"), ApiWatch::kGraphLaunch);
  EXPECT_EQ(classify_api("cuCtxDestroy_v2"), ApiWatch::kForgetAll);
  EXPECT_EQ(classify_api("cudaDeviceReset_v3020"), ApiWatch::kForgetAll);
  EXPECT_EQ(classify_api("cuLaunchHostFunc"), ApiWatch::kNone);
  EXPECT_EQ(classify_api("cuModuleGetFunctionCount"), ApiWatch::kNone);
  EXPECT_EQ(classify_api("cudaMalloc_v3020"), ApiWatch::kNone);
  EXPECT_EQ(classify_api(""), ApiWatch::kNone);
}

}  // namespace
}  // namespace jitscope::testing
