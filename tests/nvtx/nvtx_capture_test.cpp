// NVTX capture through the injection library: ctest runs this with
// NVTX_INJECTION64_PATH=libjitscope_nvtx.so, so both the vendor library's
// NVTX copy and this executable's own are captured by the jitscope runtime
// linked (statically) into this executable.
//
// Not covered here: the static form without the variable
// (nvtx_static_capture_test), emission (nvtx_emit_test), a program without
// jitscope loading libjitscope.so through the injection library
// (nvtx_injection_standalone), Nsight itself.
#include "flush/perfetto_wire.hpp"
#include "nvtx/vendor_lib.h"
#include "sanitizers.hpp"
#include "trace_support.hpp"

#include <jitscope/compile.hpp>
#include <jitscope/nvtx.hpp>

#include <nvtx3/nvToolsExt.h>

#include <dlfcn.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <thread>
#include <vector>

namespace {

using jitscope::testing::load_trace;
using jitscope::testing::ScopedSession;
using jitscope::testing::test_config;
using nlohmann::json;

long gettid_now() { return static_cast<long>(::syscall(SYS_gettid)); }

std::vector<json> events(const json& trace, const std::string& ph, const std::string& cat,
                         const std::string& name = "") {
  std::vector<json> out;
  for (const auto& e : trace) {
    if (e.value("ph", "") == ph && e.value("cat", "") == cat &&
        (name.empty() || e.value("name", "") == name)) {
      out.push_back(e);
    }
  }
  return out;
}

bool inside(const json& inner, const json& outer) {
  const long long b = jitscope::testing::to_ns(inner["ts"]);
  const long long ob = jitscope::testing::to_ns(outer["ts"]);
  const long long e = b + (inner.contains("dur") ? jitscope::testing::to_ns(inner["dur"]) : 0);
  const long long oe = ob + jitscope::testing::to_ns(outer["dur"]);
  return inner["tid"] == outer["tid"] && b >= ob && e <= oe;
}

const json& capture_stats(const json& trace) {
  const json* stats = jitscope::testing::metadata(trace, "jitscope_stats");
  EXPECT_NE(stats, nullptr);
  static const json empty = json::object();
  return stats != nullptr ? (*stats)["args"]["nvtx_capture"] : empty;
}

// Every test needs the variable (ctest sets it): without it each one fails
// (a fixture's SetUp, not a global environment, whose failure gtest reports
// as skipped).
class NvtxCapture : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* v = std::getenv("NVTX_INJECTION64_PATH");
    ASSERT_NE(v, nullptr) << "run with NVTX_INJECTION64_PATH=" << JITSCOPE_NVTX_INJECTION;
    ASSERT_STREQ(v, JITSCOPE_NVTX_INJECTION);
    // Both NVTX copies (this executable's, the vendor library's) initialize
    // here, on one thread. NVTX's lazy init swaps plain function pointers
    // while other threads may read them (by its design: either value is
    // valid), which ThreadSanitizer reports; tests with threads start after.
    nvtxMarkA("test.init");
    vendor_mark("test.init");
  }
};

TEST_F(NvtxCapture, PushPopRangesNestOnTheCallingThread) {
  ScopedSession s(test_config("nvtx_push_pop"));
  ASSERT_TRUE(s.status().ok());
  vendor_push_pop(3);
  const auto stats = s.finish();
  EXPECT_EQ(stats.nvtx_captured, 6u);
  const json trace = load_trace(s.path());
  const auto outer = events(trace, "X", "nvtx", "vendor.outer");
  const auto inner = events(trace, "X", "nvtx", "vendor.inner");
  ASSERT_EQ(outer.size(), 3u);
  ASSERT_EQ(inner.size(), 3u);
  for (const auto& i : inner) {
    EXPECT_EQ(i["tid"].get<long>(), gettid_now());
    EXPECT_EQ(
        std::count_if(outer.begin(), outer.end(), [&](const json& o) { return inside(i, o); }), 1);
  }
  EXPECT_EQ(capture_stats(trace)["ranges"], 6);
}

TEST_F(NvtxCapture, DomainRangesCarryRegisteredNamesPayloadAndCategory) {
  ScopedSession s(test_config("nvtx_domain"));
  ASSERT_TRUE(s.status().ok());
  vendor_domain_ranges();
  s.finish();
  const json trace = load_trace(s.path());
  const auto gemm = events(trace, "X", "vendorlib", "vendor.gemm");
  const auto epilogue = events(trace, "X", "vendorlib", "vendor.epilogue");
  const auto mark = events(trace, "I", "vendorlib", "vendor.mark");
  ASSERT_EQ(gemm.size(), 1u);
  ASSERT_EQ(epilogue.size(), 1u);
  ASSERT_EQ(mark.size(), 1u);
  EXPECT_EQ(gemm[0]["args"]["payload"], -42);
  EXPECT_EQ(gemm[0]["args"]["category"], "kernels");
  EXPECT_EQ(epilogue[0]["args"]["payload"], 2.5);
  EXPECT_FALSE(epilogue[0]["args"].contains("category"));
  EXPECT_TRUE(inside(epilogue[0], gemm[0]));
  EXPECT_TRUE(inside(mark[0], gemm[0]));
}

TEST_F(NvtxCapture, Nvtx3ScopedRangesInTheDefaultAndANamedDomain) {
  ScopedSession s(test_config("nvtx_scoped"));
  ASSERT_TRUE(s.status().ok());
  vendor_scoped_ranges();
  s.finish();
  const json trace = load_trace(s.path());
  const auto outer = events(trace, "X", "nvtx", "vendor.scoped");
  const auto inner = events(trace, "X", "vendorlib", "vendor.scoped_in_domain");
  ASSERT_EQ(outer.size(), 1u);
  ASSERT_EQ(inner.size(), 1u);
  EXPECT_TRUE(inside(inner[0], outer[0]));
}

TEST_F(NvtxCapture, StartEndAcrossThreadsIsOneAsyncSlice) {
  ScopedSession s(test_config("nvtx_start_end"));
  ASSERT_TRUE(s.status().ok());
  const std::uint64_t id = vendor_range_start("vendor.transfer");
  constexpr auto kHeld = std::chrono::milliseconds(20);
  std::this_thread::sleep_for(kHeld);
  long ender = 0;
  std::thread([&] {
    ender = gettid_now();
    vendor_range_end(id);
  }).join();
  s.finish();
  const json trace = load_trace(s.path());
  const auto b = events(trace, "b", "nvtx", "vendor.transfer");
  const auto e = events(trace, "e", "nvtx", "vendor.transfer");
  ASSERT_EQ(b.size(), 1u);
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(b[0]["id"], e[0]["id"]);
  EXPECT_LT(b[0]["id"].get<std::uint64_t>(), std::uint64_t{1} << 53);  // exact as a double
  EXPECT_EQ(b[0]["tid"].get<long>(), gettid_now());                    // the thread that started it
  EXPECT_NE(ender, gettid_now());
  // A lower bound only: it was held open at least kHeld.
  EXPECT_GE(jitscope::testing::to_ns(e[0]["ts"]) - jitscope::testing::to_ns(b[0]["ts"]),
            std::chrono::nanoseconds(kHeld).count());
  EXPECT_EQ(capture_stats(trace)["async_ranges"], 1);
}

// A forked child's thread writes its own tid for an async range, not the
// one its parent's thread cached when it captured one before the fork.
TEST_F(NvtxCapture, AForkedChildsAsyncRangesCarryItsOwnThreadId) {
  // The child starts a session, a new thread after fork(), which
  // ThreadSanitizer does not support in a child of a threaded process.
  if (jitscope::testing::kTsan) GTEST_SKIP() << "a session in a forked child, under TSan";
  {
    ScopedSession parent(test_config("nvtx_fork_parent"));
    ASSERT_TRUE(parent.status().ok());
    vendor_range_end(vendor_range_start("vendor.parent"));
  }
  const jitscope::Config child_cfg = test_config("nvtx_fork_child");
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    bool ok = jitscope::start(child_cfg).ok();
    vendor_range_end(vendor_range_start("vendor.child"));
    ok = ok && jitscope::stop().ok();
    ::_exit(ok ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  const auto b = events(load_trace(child_cfg.output_path), "b", "nvtx", "vendor.child");
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(b[0]["tid"].get<long>(), static_cast<long>(child));
}

// Every kind of captured event in the protobuf form: push/pop ranges on
// the thread, a named domain's ranges and mark on the domain's child track,
// and an async range across threads on a track of its own. The file is kept
// for ctest's pftrace.nvtx_capture_test.* conformance check.
TEST_F(NvtxCapture, EveryKindInTheProtobufForm) {
  jitscope::Config cfg = test_config("nvtx_pf");
  const char* dir = std::getenv("TEST_TMPDIR_FOR_JITSCOPE");
  cfg.output_path = std::string(dir != nullptr ? dir : "/tmp") + "/nvtx_capture.every_kind.pftrace";
  ScopedSession s(cfg);
  ASSERT_TRUE(s.status().ok());
  vendor_push_pop(1);
  vendor_domain_ranges();
  const std::uint64_t id = vendor_range_start("vendor.transfer");
  std::thread([&] { vendor_range_end(id); }).join();
  s.finish();
  jitscope::testing::pfwire::Reader pf;
  pf.read(jitscope::testing::read_file(cfg.output_path));
  EXPECT_TRUE(pf.errors.empty()) << pf.errors.front();
  std::map<std::string, int> names;
  for (const json& e : pf.events) ++names[e.value("name", "")];
  for (const char* n : {"vendor.outer", "vendor.inner", "vendor.gemm", "vendor.epilogue",
                        "vendor.mark", "vendor.transfer"}) {
    EXPECT_EQ(names[n], 1) << n;
  }
  int domain_tracks = 0, async_tracks = 0;
  for (const auto& [uuid, t] : pf.tracks) {
    if (t.thread || t.counter || t.parent == 0) continue;
    const auto parent = pf.tracks.find(t.parent);
    ASSERT_NE(parent, pf.tracks.end());
    domain_tracks += t.name == "vendorlib" && parent->second.thread;
    async_tracks += t.name == "nvtx" && !parent->second.thread;  // under the process
  }
  EXPECT_EQ(domain_tracks, 1);
  EXPECT_EQ(async_tracks, 1);
}

TEST_F(NvtxCapture, MarksAndWideStrings) {
  ScopedSession s(test_config("nvtx_marks"));
  ASSERT_TRUE(s.status().ok());
  for (int i = 0; i < 5; ++i) vendor_mark("vendor.tick");
  vendor_push_pop_wide(L"wide \u00fc \u96ea");
  s.finish();
  const json trace = load_trace(s.path());
  EXPECT_EQ(events(trace, "I", "nvtx", "vendor.tick").size(), 5u);
  EXPECT_EQ(events(trace, "X", "nvtx", "wide \u00fc \u96ea").size(), 1u);
}

TEST_F(NvtxCapture, UnbalancedPopsAndUnknownEndsAreCountedAndLeaveSpansAlone) {
  ScopedSession s(test_config("nvtx_unbalanced"));
  ASSERT_TRUE(s.status().ok());
  {
    JITSCOPE_SPAN("host.outer");
    EXPECT_LT(vendor_unbalanced_pop(), 0);
    EXPECT_LT(vendor_unbalanced_pop(), 0);
    EXPECT_LT(vendor_unbalanced_domain_pop(), 0);
    vendor_range_end(123456789);
    vendor_range_end(987654321);
    JITSCOPE_SPAN("host.inner");
  }
  const auto stats = s.finish();
  EXPECT_EQ(stats.nvtx_unmatched, 5u);
  EXPECT_EQ(stats.nvtx_captured, 0u);
  const json trace = load_trace(s.path());
  EXPECT_EQ(capture_stats(trace)["unbalanced_pops"], 3);
  EXPECT_EQ(capture_stats(trace)["unknown_range_ends"], 2);
  // The pops did not close jitscope's spans: both are there, nested, complete.
  const auto outer = events(trace, "X", "jitscope", "host.outer");
  const auto inner = events(trace, "X", "jitscope", "host.inner");
  ASSERT_EQ(outer.size(), 1u);
  ASSERT_EQ(inner.size(), 1u);
  EXPECT_TRUE(inside(inner[0], outer[0]));
  EXPECT_FALSE(outer[0].contains("args") && outer[0]["args"].contains("incomplete"));
}

TEST_F(NvtxCapture, DomainsNestSeparately) {
  ScopedSession s(test_config("nvtx_cross_domain"));
  ASSERT_TRUE(s.status().ok());
  vendor_cross_domain();  // push A (vendorlib), push B (default), pop A, pop B
  const auto stats = s.finish();
  EXPECT_EQ(stats.nvtx_unmatched, 0u);
  const json trace = load_trace(s.path());
  const auto a = events(trace, "X", "vendorlib", "vendor.cross_a");
  const auto b = events(trace, "X", "nvtx", "vendor.cross_b");
  ASSERT_EQ(a.size(), 1u);
  ASSERT_EQ(b.size(), 1u);
  EXPECT_LT(jitscope::testing::to_ns(a[0]["ts"]), jitscope::testing::to_ns(b[0]["ts"]));
}

TEST_F(NvtxCapture, RangesInsideACompileUnitCarryItsId) {
  ScopedSession s(test_config("nvtx_unit"));
  ASSERT_TRUE(s.status().ok());
  std::string id;
  {
    jitscope::CompileUnit unit({.frame = "nvtx_capture_test.unit"});
    id = unit.id().str();
    vendor_push_pop(1);
    vendor_mark("vendor.in_unit");
  }
  vendor_mark("vendor.after_unit");
  s.finish();
  const json trace = load_trace(s.path());
  const auto outer = events(trace, "X", "nvtx", "vendor.outer");
  ASSERT_EQ(outer.size(), 1u);
  EXPECT_EQ(outer[0]["args"]["compile_id"], id);
  const auto in = events(trace, "I", "nvtx", "vendor.in_unit");
  ASSERT_EQ(in.size(), 1u);
  EXPECT_EQ(in[0]["args"]["compile_id"], id);
  const auto after = events(trace, "I", "nvtx", "vendor.after_unit");
  ASSERT_EQ(after.size(), 1u);
  EXPECT_FALSE(after[0].contains("args") && after[0]["args"].contains("compile_id"));
}

TEST_F(NvtxCapture, RangesAcrossASessionEdgeAreDroppedNotMiscounted) {
  vendor_push("vendor.before_session");
  const std::uint64_t started_before = vendor_range_start("vendor.async_before_session");
  ScopedSession s(test_config("nvtx_edges"));
  ASSERT_TRUE(s.status().ok());
  vendor_pop();
  vendor_range_end(started_before);
  vendor_push_pop(1);
  const auto stats = s.finish();
  EXPECT_EQ(stats.nvtx_unmatched, 0u);
  EXPECT_EQ(stats.nvtx_captured, 2u);
  const json trace = load_trace(s.path());
  EXPECT_EQ(capture_stats(trace)["dropped"], 1);  // the push from before the session
  EXPECT_EQ(events(trace, "X", "nvtx", "vendor.before_session").size(), 0u);
}

TEST_F(NvtxCapture, OffByConfig) {
  auto cfg = test_config("nvtx_off");
  cfg.nvtx_capture = false;
  ScopedSession s(cfg);
  ASSERT_TRUE(s.status().ok());
  vendor_push_pop(2);
  vendor_mark("vendor.tick");
  long worker = 0;
  std::thread([&] {
    worker = gettid_now();
    jitscope::set_thread_name("jitscope-named");
    vendor_name_thread(static_cast<std::uint32_t>(worker), "renamed-by-vendor");
    JITSCOPE_SPAN("host.after_rename");
  }).join();
  const auto stats = s.finish();
  EXPECT_EQ(stats.nvtx_captured, 0u);
  const json trace = load_trace(s.path());
  EXPECT_EQ(events(trace, "X", "nvtx").size(), 0u);
  EXPECT_EQ(events(trace, "I", "nvtx").size(), 0u);
  // Capture off: other code does not rename jitscope's threads either.
  EXPECT_EQ(jitscope::testing::thread_names(trace).at(worker), "jitscope-named");
}

TEST_F(NvtxCapture, TheJitscopeDomainIsJitscopesOwnAndNotCapturedAgain) {
  ScopedSession s(test_config("nvtx_self_domain"));
  ASSERT_TRUE(s.status().ok());
  nvtxDomainHandle_t self = nvtxDomainCreateA("jitscope");
  nvtxEventAttributes_t a{};
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.messageType = NVTX_MESSAGE_TYPE_ASCII;
  a.message.ascii = "self.range";
  nvtxDomainRangePushEx(self, &a);
  nvtxDomainMarkEx(self, &a);
  nvtxDomainRangePop(self);
  const auto stats = s.finish();
  EXPECT_EQ(stats.nvtx_captured, 0u);
  EXPECT_EQ(stats.nvtx_unmatched, 0u);
  EXPECT_EQ(events(load_trace(s.path()), "X", "jitscope", "self.range").size(), 0u);
}

// NVTX calls from a thread's teardown, after the capture's per-thread state
// is gone (a thread_local built before it is destroyed after it): ignored,
// never a use of freed memory (ASan would say), never counted as unbalanced.
struct LateNvtxCaller {
  ~LateNvtxCaller() {
    nvtxRangePushA("thread.teardown");
    nvtxRangePop();
    nvtxRangePop();
  }
};

TEST_F(NvtxCapture, NvtxCallsDuringThreadTeardownAreIgnored) {
  ScopedSession s(test_config("nvtx_teardown"));
  ASSERT_TRUE(s.status().ok());
  std::thread([] {
    static thread_local LateNvtxCaller late;  // built first, so destroyed last
    (void)late;
    vendor_push_pop(1);  // builds the capture's state after it
  }).join();
  const auto stats = s.finish();
  EXPECT_EQ(stats.nvtx_captured, 2u);
  EXPECT_EQ(stats.nvtx_unmatched, 0u);
  EXPECT_EQ(events(load_trace(s.path()), "X", "nvtx", "thread.teardown").size(), 0u);
}

TEST_F(NvtxCapture, ThreadNamesFromNvtx) {
  ScopedSession s(test_config("nvtx_names"));
  ASSERT_TRUE(s.status().ok());
  long worker = 0;
  std::thread([&] {
    worker = gettid_now();
    vendor_name_thread(static_cast<std::uint32_t>(worker), "vendor-worker");
    vendor_push_pop(1);
  }).join();
  vendor_name_thread(4000000, "vendor-ghost");  // another thread, by id
  s.finish();
  const json trace = load_trace(s.path());
  const auto names = jitscope::testing::thread_names(trace);
  ASSERT_TRUE(names.contains(worker));
  EXPECT_EQ(names.at(worker), "vendor-worker");
  ASSERT_TRUE(names.contains(4000000));
  EXPECT_EQ(names.at(4000000), "vendor-ghost");
  EXPECT_EQ(capture_stats(trace)["thread_names"], 2);
}

TEST_F(NvtxCapture, ManyThreadsExactCounts) {
  auto cfg = test_config("nvtx_threads");
  cfg.overflow = jitscope::OverflowPolicy::kBlock;
  ScopedSession s(cfg);
  ASSERT_TRUE(s.status().ok());
  constexpr int kThreads = 4, kTimes = 1000;
  std::vector<long> tids(kThreads);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      tids[i] = gettid_now();
      vendor_push_pop(kTimes);
    });
  }
  for (auto& t : threads) t.join();
  const auto stats = s.finish();
  EXPECT_EQ(stats.nvtx_captured, 2u * kThreads * kTimes);
  const json trace = load_trace(s.path());
  for (long tid : tids) {
    long n = 0;
    for (const auto& e : events(trace, "X", "nvtx")) n += e["tid"].get<long>() == tid;
    EXPECT_EQ(n, 2 * kTimes) << "tid " << tid;
  }
}

TEST_F(NvtxCapture, BothNvtxCopiesAreAttached) {
  vendor_mark("vendor.init");  // the vendor library's NVTX copy initializes on first use
  nvtxMarkA("test.init");      // and this executable's
  EXPECT_GE(jitscope::nvtx_status().captured_instances, 2u);
  ScopedSession s(test_config("nvtx_own"));
  ASSERT_TRUE(s.status().ok());
  nvtxRangePushA("test.own_range");
  nvtxRangePop();
  s.finish();
  EXPECT_EQ(events(load_trace(s.path()), "X", "nvtx", "test.own_range").size(), 1u);
}

// A fake NVTX copy: tables of slots, handed out the way nvtxImpl.h does.
struct FakeNvtx {
  NvtxFunctionPointer core[NVTX_CBID_CORE_SIZE] = {};
  NvtxFunctionPointer core2[NVTX_CBID_CORE2_SIZE] = {};
  NvtxFunctionPointer* core_table[NVTX_CBID_CORE_SIZE + 1] = {};
  NvtxFunctionPointer* core2_table[NVTX_CBID_CORE2_SIZE + 1] = {};
  NvtxExportTableCallbacks callbacks{sizeof(NvtxExportTableCallbacks), &get_module};
  FakeNvtx() {
    for (unsigned i = 1; i < NVTX_CBID_CORE_SIZE; ++i) core_table[i] = &core[i];
    for (unsigned i = 1; i < NVTX_CBID_CORE2_SIZE; ++i) core2_table[i] = &core2[i];
  }
  static int get_module(NvtxCallbackModule module, NvtxFunctionTable* out, unsigned* size) {
    if (module == NVTX_CB_MODULE_CORE) {
      *out = instance().core_table;
      *size = NVTX_CBID_CORE_SIZE;
      return 1;
    }
    if (module == NVTX_CB_MODULE_CORE2) {
      *out = instance().core2_table;
      *size = NVTX_CBID_CORE2_SIZE;
      return 1;
    }
    return 0;
  }
  static const void* get_export_table(std::uint32_t id) {
    return id == NVTX_ETID_CALLBACKS ? &instance().callbacks : nullptr;
  }
  static FakeNvtx& instance() {
    static FakeNvtx fake;
    return fake;
  }
};

const void* no_tables(std::uint32_t) { return nullptr; }

TEST_F(NvtxCapture, AttachIsIdempotentAndPatchesEverySlot) {
  FakeNvtx& fake = FakeNvtx::instance();
  const std::size_t before = jitscope::nvtx_status().captured_instances;
  // Through the injection library, as the NVTX loader calls it.
  void* lib = ::dlopen(JITSCOPE_NVTX_INJECTION, RTLD_NOW | RTLD_NOLOAD);
  ASSERT_NE(lib, nullptr) << "the NVTX loader should have loaded " << JITSCOPE_NVTX_INJECTION;
  using Init = int (*)(const void* (*)(std::uint32_t));
  auto init = reinterpret_cast<Init>(::dlsym(lib, "InitializeInjectionNvtx2"));
  ASSERT_NE(init, nullptr);
  ASSERT_EQ(init(&FakeNvtx::get_export_table), 1);
  for (unsigned i = 1; i < NVTX_CBID_CORE_SIZE; ++i) EXPECT_NE(fake.core[i], nullptr) << i;
  for (unsigned i = 1; i < NVTX_CBID_CORE2_SIZE; ++i) EXPECT_NE(fake.core2[i], nullptr) << i;
  std::vector<NvtxFunctionPointer> first(std::begin(fake.core), std::end(fake.core));
  ASSERT_EQ(init(&FakeNvtx::get_export_table), 1);  // again: harmless
  EXPECT_TRUE(std::equal(first.begin(), first.end(), std::begin(fake.core)));
  EXPECT_EQ(jitscope::nvtx_status().captured_instances, before + 1);
  EXPECT_EQ(init(&no_tables), 0);  // an instance without tables is declined, not a crash
  ::dlclose(lib);

  // The slots are the capture's: a push/pop through them lands in the trace.
  ScopedSession s(test_config("nvtx_fake"));
  ASSERT_TRUE(s.status().ok());
  reinterpret_cast<int (*)(const char*)>(fake.core[NVTX_CBID_CORE_RangePushA])("fake.range");
  reinterpret_cast<int (*)()>(fake.core[NVTX_CBID_CORE_RangePop])();
  s.finish();
  EXPECT_EQ(events(load_trace(s.path()), "X", "nvtx", "fake.range").size(), 1u);
}

}  // namespace
