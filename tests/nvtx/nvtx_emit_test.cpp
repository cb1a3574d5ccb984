// NVTX emission (Config::nvtx_emit), checked call by call with a recording
// NVTX tool (tests/nvtx/recorder_tool.cpp) as the process's NVTX tool:
// ctest sets NVTX_INJECTION64_PATH to it (tests/nvtx/nvtx_emit.cmake); run by
// hand, the static initializer below sets it unless it is already set. NVTX
// reads the variable once, at the process's first NVTX call, i.e. at the
// first session that has nvtx_emit on.
//
// Covered: the push/pop sequence of nested static spans, REGISTERED messages
// and one registration per static name (across calls, threads and
// sessions), ASCII messages for dynamic names, compile units (their range's
// message, their named category, the category and uint64 payload on
// everything nested, nested units and recompiles, nothing after the unit
// closes), instants as marks, thread names (set in a session, and set before
// it), nvtx_emit=false, SessionStats::nvtx_emitted / nvtx_status(), push/pop
// balance per thread after every test (spans open at stop() included), and
// the once-per-process "belongs to another tool" line.
//
// Not covered: what Nsight Systems itself shows; NVTX copies in other
// libraries (that is capture, nvtx_capture_test); jitscope's own capture as
// the tool (emission then switches off; nvtx_static_capture_test); a process
// with no NVTX tool at all; names longer than 255 bytes (NVTX gets a cut
// copy); units nested more than 64 deep; UnitScope on other threads;
// concurrency beyond two threads; the cost of emission (bench/).
// The last three tests pin bugs found while writing these: the C API's NVTX
// imbalance across a session edge (two), and a thread name sent twice.
#include "nvtx/recorded_event.hpp"
#include "trace_support.hpp"

#include <jitscope/jitscope.h>
#include <jitscope/compile.hpp>
#include <jitscope/jitscope.hpp>
#include <jitscope/nvtx.hpp>

#include <gtest/gtest.h>

#include <dlfcn.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <barrier>
#include <cstdint>
#include <cstdlib>
#include <latch>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace {

using jitscope::testing::ScopedSession;
using jitscope::testing::StderrCapture;
using jitscope::testing::test_config;

// Run by hand (not through ctest): point NVTX at the recorder built next to
// this test. Before main, so before any NVTX call; an explicit setting wins.
const bool g_injection_env_set = [] {
  return ::setenv("NVTX_INJECTION64_PATH", JITSCOPE_NVTX_RECORDER, /*overwrite=*/0) == 0;
}();

constexpr int kAscii = 1;          // NVTX_MESSAGE_TYPE_ASCII
constexpr int kRegistered = 3;     // NVTX_MESSAGE_TYPE_REGISTERED
constexpr int kPayloadNone = 0;    // NVTX_PAYLOAD_UNKNOWN
constexpr int kPayloadUint64 = 1;  // NVTX_PAYLOAD_TYPE_UNSIGNED_INT64

// One line of the recorder's dump.
using Ev = nvtx_recorder::Event;

struct Recorder {
  std::size_t (*dump)(char*, std::size_t) = nullptr;
  void (*clear)() = nullptr;
  std::uint64_t (*registrations)(const char*) = nullptr;
  std::uint64_t (*domain_creates)(const char*) = nullptr;
  std::uint64_t (*inits)() = nullptr;

  std::vector<Ev> events() const {
    std::string text;
    for (std::size_t want = 1 << 16;;) {
      text.resize(want);
      const std::size_t n = dump(text.data(), text.size());
      if (n <= text.size()) {
        text.resize(n);
        break;
      }
      want = n + 4096;  // more came in between: ask again
    }
    std::vector<Ev> out;
    std::istringstream lines(text);
    std::string line;
    while (std::getline(lines, line)) {
      out.push_back(nvtx_recorder::parse_line(line));
    }
    return out;
  }
};

// The recorder as loaded by NVTX (same path: dlopen gives the same handle),
// or nullptr when NVTX has not loaded it.
const Recorder* find_recorder() {
  static Recorder r;
  if (r.dump != nullptr) return &r;
  const char* path = std::getenv("NVTX_INJECTION64_PATH");
  if (path == nullptr) return nullptr;
  void* h = ::dlopen(path, RTLD_NOLOAD | RTLD_NOW);
  if (h == nullptr) return nullptr;
  r.clear = reinterpret_cast<void (*)()>(::dlsym(h, "recorder_clear"));
  r.registrations =
      reinterpret_cast<std::uint64_t (*)(const char*)>(::dlsym(h, "recorder_registrations"));
  r.domain_creates =
      reinterpret_cast<std::uint64_t (*)(const char*)>(::dlsym(h, "recorder_domain_creates"));
  r.inits = reinterpret_cast<std::uint64_t (*)()>(::dlsym(h, "recorder_inits"));
  auto* dump = reinterpret_cast<std::size_t (*)(char*, std::size_t)>(::dlsym(h, "recorder_dump"));
  ::dlclose(h);  // NVTX keeps its own reference
  if (r.clear == nullptr || r.registrations == nullptr || r.domain_creates == nullptr ||
      r.inits == nullptr || dump == nullptr) {
    return nullptr;
  }
  r.dump = dump;
  return &r;
}

long gettid_now() { return static_cast<long>(::syscall(SYS_gettid)); }

bool is_range_event(const Ev& e) { return e.kind == "push" || e.kind == "pop" || e.kind == "mark"; }

// Push/pop/mark events of `tid`, in order.
std::vector<Ev> ranges_on(const std::vector<Ev>& all, long tid) {
  std::vector<Ev> out;
  for (const Ev& e : all) {
    if (is_range_event(e) && e.tid == tid) out.push_back(e);
  }
  return out;
}

std::vector<Ev> of_kind(const std::vector<Ev>& all, const std::string& kind) {
  std::vector<Ev> out;
  for (const Ev& e : all) {
    if (e.kind == kind) out.push_back(e);
  }
  return out;
}

// "push:text", "pop", "mark:text": a sequence readable in a failure message.
std::vector<std::string> shape(const std::vector<Ev>& evs) {
  std::vector<std::string> out;
  for (const Ev& e : evs) out.push_back(e.kind == "pop" ? "pop" : e.kind + ":" + e.text);
  return out;
}

void expect_plain(const Ev& e, const char* what) {
  EXPECT_EQ(e.category, 0u) << what << ": " << e.text;
  EXPECT_EQ(e.payload_type, kPayloadNone) << what << ": " << e.text;
  EXPECT_EQ(e.payload, 0u) << what << ": " << e.text;
}

void expect_in_unit(const Ev& e, std::uint32_t category, std::uint64_t packed) {
  EXPECT_EQ(e.category, category) << e.kind << " " << e.text;
  EXPECT_EQ(e.payload_type, kPayloadUint64) << e.kind << " " << e.text;
  EXPECT_EQ(e.payload, packed) << e.kind << " " << e.text;
}

std::uint64_t packed_id(const jitscope::CompileId& id) {
  return (std::uint64_t{id.frame} << 32) | id.attempt;
}

class NvtxEmit : public ::testing::Test {
 protected:
  void SetUp() override {
    // The first session with nvtx_emit initializes NVTX, which loads the tool.
    if (find_recorder() == nullptr) {
      ScopedSession warm(test_config("nvtx_emit_warmup"));
      ASSERT_TRUE(warm.status().ok()) << warm.status().message();
      warm.finish();
    }
    rec_ = find_recorder();
    const char* path = std::getenv("NVTX_INJECTION64_PATH");
    ASSERT_NE(rec_, nullptr) << "NVTX did not load the recorder; NVTX_INJECTION64_PATH="
                             << (path != nullptr ? path : "(unset)");
    rec_->clear();
  }

  // Every test leaves each thread balanced: in domain "jitscope", pops never
  // outnumber pushes at any point, and both counts match at the end.
  void TearDown() override {
    if (rec_ == nullptr) return;
    std::map<long, long> depth;
    for (const Ev& e : rec_->events()) {
      if (!is_range_event(e)) continue;
      EXPECT_EQ(e.domain, "jitscope") << e.kind << " " << e.text;
      if (e.kind == "push") ++depth[e.tid];
      if (e.kind == "pop") {
        EXPECT_GT(depth[e.tid], 0) << "a pop with nothing pushed on thread " << e.tid;
        --depth[e.tid];
      }
    }
    for (const auto& [tid, d] : depth) EXPECT_EQ(d, 0) << "ranges left open on thread " << tid;
  }

  const Recorder* rec_ = nullptr;
};

TEST_F(NvtxEmit, SessionsEmitIntoOneJitscopeDomainCreatedOnce) {
  for (int i = 0; i < 2; ++i) {
    ScopedSession session(test_config("nvtx_emit_domain"));
    ASSERT_TRUE(session.status().ok()) << session.status().message();
    const jitscope::NvtxStatus st = jitscope::nvtx_status();
    EXPECT_TRUE(st.compiled_in);
    EXPECT_TRUE(st.emitting);
    EXPECT_EQ(st.captured_instances, 0u);  // the recorder owns NVTX, not jitscope's capture
    { JITSCOPE_SPAN("nvtx_emit.domain"); }
    EXPECT_TRUE(session.finish().nvtx_emitted);
    EXPECT_FALSE(jitscope::nvtx_status().emitting);
  }
  EXPECT_EQ(rec_->inits(), 1u);
  EXPECT_EQ(rec_->domain_creates("jitscope"), 1u);
  EXPECT_TRUE(of_kind(rec_->events(), "domain_create").empty());  // not again in these sessions
  EXPECT_EQ(ranges_on(rec_->events(), gettid_now()).size(), 4u);
}

TEST_F(NvtxEmit, NestedStaticSpansPushAndPopInOrder) {
  constexpr int kIterations = 25;
  ScopedSession session(test_config("nvtx_emit_nested"));
  ASSERT_TRUE(session.status().ok());
  for (int i = 0; i < kIterations; ++i) {
    JITSCOPE_SPAN("nvtx_emit.outer");
    { JITSCOPE_SPAN("nvtx_emit.inner"); }
  }
  const jitscope::SessionStats stats = session.finish();
  EXPECT_TRUE(stats.nvtx_emitted);

  const std::vector<Ev> evs = ranges_on(rec_->events(), gettid_now());
  ASSERT_EQ(evs.size(), 4u * kIterations) << ::testing::PrintToString(shape(evs));
  std::uint64_t outer_handle = 0, inner_handle = 0;
  for (int i = 0; i < kIterations; ++i) {
    const Ev* e = &evs[4 * i];
    EXPECT_EQ(e[0].kind, "push");
    EXPECT_EQ(e[0].text, "nvtx_emit.outer");
    EXPECT_EQ(e[1].kind, "push");
    EXPECT_EQ(e[1].text, "nvtx_emit.inner");
    EXPECT_EQ(e[2].kind, "pop");
    EXPECT_EQ(e[3].kind, "pop");
    for (int k = 0; k < 2; ++k) {
      EXPECT_EQ(e[k].domain, "jitscope");
      EXPECT_EQ(e[k].msg_type, kRegistered) << e[k].text;
      expect_plain(e[k], "span outside a unit");
    }
    if (i == 0) {
      outer_handle = e[0].id;
      inner_handle = e[1].id;
      EXPECT_NE(outer_handle, 0u);
      EXPECT_NE(inner_handle, outer_handle);
    }
    EXPECT_EQ(e[0].id, outer_handle);  // the same registered handle every time
    EXPECT_EQ(e[1].id, inner_handle);
  }
  EXPECT_EQ(rec_->registrations("nvtx_emit.outer"), 1u);
  EXPECT_EQ(rec_->registrations("nvtx_emit.inner"), 1u);

  // The trace has the same spans.
  int outer = 0, inner = 0;
  for (const auto& e :
       jitscope::testing::events_with_ph(jitscope::testing::load_trace(session.path()), "X")) {
    outer += e["name"] == "nvtx_emit.outer";
    inner += e["name"] == "nvtx_emit.inner";
  }
  EXPECT_EQ(outer, kIterations);
  EXPECT_EQ(inner, kIterations);
}

// Both threads run these same two literals (one pointer each).
void registered_pair() {
  JITSCOPE_SPAN("nvtx_emit.reg_a");
  JITSCOPE_SPAN("nvtx_emit.reg_b");
}

TEST_F(NvtxEmit, StaticNamesRegisterOnceAcrossCallsThreadsAndSessions) {
  constexpr int kCalls = 500;
  std::map<long, int> pushes_by_thread;
  {
    ScopedSession session(test_config("nvtx_emit_register"));
    ASSERT_TRUE(session.status().ok());
    for (int i = 0; i < 10; ++i) registered_pair();
    // Two threads, both alive at once (distinct tids), each missing its own
    // per-thread cache on its first call.
    std::barrier sync(2);
    auto work = [&] {
      sync.arrive_and_wait();
      for (int i = 0; i < kCalls; ++i) registered_pair();
      sync.arrive_and_wait();
    };
    std::thread a(work), b(work);
    a.join();
    b.join();
    EXPECT_TRUE(session.finish().nvtx_emitted);
  }
  {
    ScopedSession again(test_config("nvtx_emit_register2"));
    ASSERT_TRUE(again.status().ok());
    registered_pair();
    again.finish();
  }
  EXPECT_EQ(rec_->registrations("nvtx_emit.reg_a"), 1u);
  EXPECT_EQ(rec_->registrations("nvtx_emit.reg_b"), 1u);

  // Every push of a name carries the handle its one registration returned
  // (logged here unless this process ran the test before: --gtest_repeat).
  const std::vector<Ev> all = rec_->events();
  std::map<std::string, std::uint64_t> handle;
  for (const Ev& e : of_kind(all, "push")) {
    EXPECT_EQ(e.msg_type, kRegistered);
    EXPECT_NE(e.id, 0u) << e.text;
    if (!handle.count(e.text)) handle[e.text] = e.id;
    EXPECT_EQ(e.id, handle[e.text]) << e.text;
    ++pushes_by_thread[e.tid];
  }
  EXPECT_EQ(handle.size(), 2u);
  EXPECT_NE(handle["nvtx_emit.reg_a"], handle["nvtx_emit.reg_b"]);
  for (const Ev& r : of_kind(all, "register")) EXPECT_EQ(r.id, handle[r.text]) << r.text;
  // Main thread: 10 + 1 calls; each worker kCalls; two spans a call.
  ASSERT_EQ(pushes_by_thread.size(), 3u);
  EXPECT_EQ(pushes_by_thread[gettid_now()], 2 * 11);
  for (const auto& [tid, n] : pushes_by_thread) {
    if (tid != gettid_now()) EXPECT_EQ(n, 2 * kCalls) << tid;
  }
}

TEST_F(NvtxEmit, DynamicNamesAreAsciiMessagesAndNeverRegistered) {
  const std::string first = "nvtx_emit.dyn." + std::to_string(41 + 1);
  const std::string second = "nvtx_emit.dyn.second";
  ScopedSession session(test_config("nvtx_emit_dynamic"));
  ASSERT_TRUE(session.status().ok());
  {
    JITSCOPE_SPAN_DYN(first);
    JITSCOPE_SPAN_DYN(second);
  }
  session.finish();
  const std::vector<Ev> evs = ranges_on(rec_->events(), gettid_now());
  ASSERT_EQ(shape(evs),
            (std::vector<std::string>{"push:" + first, "push:" + second, "pop", "pop"}));
  for (int k = 0; k < 2; ++k) {
    EXPECT_EQ(evs[k].msg_type, kAscii);
    expect_plain(evs[k], "dynamic span");
  }
  EXPECT_EQ(rec_->registrations(first.c_str()), 0u);
  EXPECT_TRUE(of_kind(rec_->events(), "register").empty());
}

TEST_F(NvtxEmit, CompileUnitTagsItsRangeAndEverythingInsideWithItsId) {
  std::string display;
  jitscope::CompileId id;
  ScopedSession session(test_config("nvtx_emit_unit"));
  ASSERT_TRUE(session.status().ok());
  {
    jitscope::CompileUnit unit({.frame = "nvtx_emit.frame.unit"});
    id = unit.id();
    display = id.display() + " " + unit.name();
    JITSCOPE_PHASE("nvtx_emit.phase");
    {
      JITSCOPE_SPAN("nvtx_emit.in_unit");
      JITSCOPE_INSTANT("nvtx_emit.unit_mark");
    }
  }
  { JITSCOPE_SPAN("nvtx_emit.after_unit"); }
  JITSCOPE_INSTANT("nvtx_emit.after_mark");
  session.finish();

  // The display compile.hpp documents: "[frame/attempt] name".
  EXPECT_EQ(
      display.rfind("[" + std::to_string(id.frame) + "/" + std::to_string(id.attempt) + "] ", 0),
      0u)
      << display;
  const std::uint64_t packed = packed_id(id);

  const std::vector<Ev> all = rec_->events();
  const std::vector<Ev> cats = of_kind(all, "name_category");
  ASSERT_EQ(cats.size(), 1u);
  EXPECT_EQ(cats[0].domain, "jitscope");
  EXPECT_EQ(cats[0].text, display);
  const auto category = static_cast<std::uint32_t>(cats[0].id);
  EXPECT_NE(category, 0u);

  const std::vector<Ev> evs = ranges_on(all, gettid_now());
  ASSERT_EQ(shape(evs), (std::vector<std::string>{
                            "push:" + display, "push:nvtx_emit.phase", "push:nvtx_emit.in_unit",
                            "mark:nvtx_emit.unit_mark", "pop", "pop", "pop",
                            "push:nvtx_emit.after_unit", "pop", "mark:nvtx_emit.after_mark"}));
  EXPECT_EQ(evs[0].msg_type, kAscii);  // a unit's name is built at run time
  for (int k = 1; k < 4; ++k) EXPECT_EQ(evs[k].msg_type, kRegistered) << evs[k].text;
  for (int k = 0; k < 4; ++k) expect_in_unit(evs[k], category, packed);
  expect_plain(evs[7], "span after the unit");
  expect_plain(evs[9], "mark after the unit");

  // The trace's unit slice has the same name.
  bool found = false;
  for (const auto& e :
       jitscope::testing::events_with_ph(jitscope::testing::load_trace(session.path()), "X")) {
    found = found || e["name"] == display;
  }
  EXPECT_TRUE(found) << display;
}

TEST_F(NvtxEmit, NestedUnitsAndRecompilesTagWithTheInnermostUnit) {
  jitscope::CompileId outer_id, inner_id, again_id;
  std::string outer_display, inner_display, again_display;
  ScopedSession session(test_config("nvtx_emit_units"));
  ASSERT_TRUE(session.status().ok());
  {
    jitscope::CompileUnit outer({.frame = "nvtx_emit.frame.outer"});
    outer_id = outer.id();
    outer_display = outer_id.display() + " " + outer.name();
    {
      jitscope::CompileUnit inner({.frame = "nvtx_emit.frame.inner"});
      inner_id = inner.id();
      inner_display = inner_id.display() + " " + inner.name();
      JITSCOPE_SPAN("nvtx_emit.in_inner");
    }
    JITSCOPE_SPAN("nvtx_emit.back_in_outer");
  }
  {
    jitscope::CompileUnit again({.frame = "nvtx_emit.frame.inner"});  // a recompile
    again_id = again.id();
    again_display = again_id.display() + " " + again.name();
    JITSCOPE_SPAN("nvtx_emit.in_recompile");
  }
  session.finish();
  EXPECT_EQ(again_id.frame, inner_id.frame);
  EXPECT_EQ(again_id.attempt, inner_id.attempt + 1);

  const std::vector<Ev> all = rec_->events();
  std::map<std::string, std::uint32_t> category;  // display -> category id
  for (const Ev& c : of_kind(all, "name_category")) {
    EXPECT_EQ(category.count(c.text), 0u) << "named twice: " << c.text;
    category[c.text] = static_cast<std::uint32_t>(c.id);
  }
  ASSERT_EQ(category.size(), 3u);
  ASSERT_TRUE(category.count(outer_display) && category.count(inner_display) &&
              category.count(again_display));
  EXPECT_NE(category[outer_display], category[inner_display]);
  EXPECT_NE(category[inner_display], category[again_display]);
  EXPECT_NE(category[outer_display], category[again_display]);

  const std::vector<Ev> evs = ranges_on(all, gettid_now());
  ASSERT_EQ(shape(evs),
            (std::vector<std::string>{
                "push:" + outer_display, "push:" + inner_display, "push:nvtx_emit.in_inner", "pop",
                "pop", "push:nvtx_emit.back_in_outer", "pop", "pop", "push:" + again_display,
                "push:nvtx_emit.in_recompile", "pop", "pop"}));
  expect_in_unit(evs[0], category[outer_display], packed_id(outer_id));
  expect_in_unit(evs[1], category[inner_display], packed_id(inner_id));
  expect_in_unit(evs[2], category[inner_display], packed_id(inner_id));
  expect_in_unit(evs[5], category[outer_display], packed_id(outer_id));
  expect_in_unit(evs[8], category[again_display], packed_id(again_id));
  expect_in_unit(evs[9], category[again_display], packed_id(again_id));
}

TEST_F(NvtxEmit, InstantsAreOneMarkEachAndCountersNothing) {
  ScopedSession session(test_config("nvtx_emit_instant"));
  ASSERT_TRUE(session.status().ok());
  JITSCOPE_INSTANT("nvtx_emit.instant");
  JITSCOPE_INSTANT("nvtx_emit.instant_args", {"k", 7});
  JITSCOPE_COUNTER("nvtx_emit.counter", 3);
  session.finish();
  const std::vector<Ev> evs = ranges_on(rec_->events(), gettid_now());
  ASSERT_EQ(shape(evs),
            (std::vector<std::string>{"mark:nvtx_emit.instant", "mark:nvtx_emit.instant_args"}));
  for (const Ev& e : evs) {
    EXPECT_EQ(e.msg_type, kRegistered);
    expect_plain(e, "instant");
  }
  EXPECT_EQ(rec_->registrations("nvtx_emit.counter"), 0u);
}

// The names nvtxNameOsThreadA got (all for `tid`, from `tid`), in order.
std::vector<std::string> os_thread_names(const std::vector<Ev>& all, long tid) {
  std::vector<std::string> names;
  for (const Ev& e : of_kind(all, "name_thread")) {
    EXPECT_EQ(e.domain, "(core)");  // nvtxNameOsThreadA has no domain
    EXPECT_EQ(static_cast<long>(e.id), tid) << e.text;
    EXPECT_EQ(e.tid, tid) << e.text;
    names.push_back(e.text);
  }
  return names;
}

TEST_F(NvtxEmit, SetThreadNameInASessionNamesTheOsThreadOncePerCall) {
  ScopedSession session(test_config("nvtx_emit_thread_name"));
  ASSERT_TRUE(session.status().ok());
  long tid = 0;
  std::thread worker([&] {
    tid = gettid_now();
    { JITSCOPE_SPAN("nvtx_emit.named_worker"); }  // registers the thread, unnamed
    jitscope::set_thread_name("nvtx-emit-first");
    { JITSCOPE_SPAN("nvtx_emit.named_worker"); }
    jitscope::set_thread_name("nvtx-emit-renamed");
  });
  worker.join();
  session.finish();
  EXPECT_EQ(os_thread_names(rec_->events(), tid),
            (std::vector<std::string>{"nvtx-emit-first", "nvtx-emit-renamed"}));
  // The trace names the thread too (last name wins).
  EXPECT_EQ(jitscope::testing::thread_names(jitscope::testing::load_trace(session.path()))[tid],
            "nvtx-emit-renamed");
}

// Was a bug: when set_thread_name is a thread's first event in an
// emitting session, the name went to NVTX twice: once from set_thread_name,
// once more from the thread's registration (which passes a remembered name).
TEST_F(NvtxEmit, SetThreadNameAsTheFirstEventNamesTheOsThreadOnce) {
  ScopedSession session(test_config("nvtx_emit_thread_name_first"));
  ASSERT_TRUE(session.status().ok());
  long tid = 0;
  std::thread worker([&] {
    tid = gettid_now();
    jitscope::set_thread_name("nvtx-emit-first");  // the thread's first event
    { JITSCOPE_SPAN("nvtx_emit.named_worker"); }
  });
  worker.join();
  session.finish();
  EXPECT_EQ(os_thread_names(rec_->events(), tid), (std::vector<std::string>{"nvtx-emit-first"}));
}

TEST_F(NvtxEmit, ThreadNamedBeforeTheSessionPassesItsNameWhenItRegisters) {
  long tid = 0;
  std::latch named(1), started(1), done(1);
  std::thread worker([&] {
    tid = gettid_now();
    jitscope::set_thread_name("nvtx-emit-early");  // no session yet: NVTX hears nothing
    named.count_down();
    started.wait();
    { JITSCOPE_SPAN("nvtx_emit.early_worker"); }  // registers: name, then the range
    { JITSCOPE_SPAN("nvtx_emit.early_worker"); }
    done.count_down();
  });
  named.wait();
  const bool quiet_before = rec_->events().empty();
  ScopedSession session(test_config("nvtx_emit_early_name"));
  ASSERT_TRUE(session.status().ok());
  started.count_down();
  done.wait();
  worker.join();
  session.finish();
  EXPECT_TRUE(quiet_before);

  std::vector<std::string> on_worker;
  for (const Ev& e : rec_->events()) {
    if (e.tid != tid || e.kind == "register") continue;
    on_worker.push_back(e.kind + ":" + e.text);
    if (e.kind == "name_thread") EXPECT_EQ(static_cast<long>(e.id), tid);
  }
  EXPECT_EQ(on_worker,
            (std::vector<std::string>{"name_thread:nvtx-emit-early", "push:nvtx_emit.early_worker",
                                      "pop:", "push:nvtx_emit.early_worker", "pop:"}));
}

TEST_F(NvtxEmit, NvtxEmitOffEmitsNothingAndOnEmitsAgain) {
  jitscope::Config off = test_config("nvtx_emit_off");
  off.nvtx_emit = false;
  {
    ScopedSession session(off);
    ASSERT_TRUE(session.status().ok());
    EXPECT_FALSE(jitscope::nvtx_status().emitting);
    {
      JITSCOPE_SPAN("nvtx_emit.off_static");
      JITSCOPE_SPAN_DYN(std::string("nvtx_emit.off_dynamic"));
      JITSCOPE_INSTANT("nvtx_emit.off_instant");
      jitscope::CompileUnit unit({.frame = "nvtx_emit.frame.off"});
      std::thread([] { jitscope::set_thread_name("nvtx-emit-off"); }).join();
    }
    const jitscope::SessionStats stats = session.finish();
    EXPECT_FALSE(stats.nvtx_emitted);
    EXPECT_GT(stats.events_written, 0u);  // the trace still has them
  }
  EXPECT_EQ(::testing::PrintToString(shape(rec_->events())), "{}");
  EXPECT_EQ(rec_->registrations("nvtx_emit.off_static"), 0u);

  {
    ScopedSession session(test_config("nvtx_emit_on_again"));
    ASSERT_TRUE(session.status().ok());
    EXPECT_TRUE(jitscope::nvtx_status().emitting);
    { JITSCOPE_SPAN("nvtx_emit.on_again"); }
    EXPECT_TRUE(session.finish().nvtx_emitted);
  }
  EXPECT_EQ(shape(ranges_on(rec_->events(), gettid_now())),
            (std::vector<std::string>{"push:nvtx_emit.on_again", "pop"}));
}

TEST_F(NvtxEmit, RangesOpenAtStopPopWhenTheyEnd) {
  std::optional<jitscope::Span> span;
  std::optional<jitscope::CompileUnit> unit;
  {
    ScopedSession session(test_config("nvtx_emit_open_at_stop"));
    ASSERT_TRUE(session.status().ok());
    span.emplace("nvtx_emit.open_at_stop");
    unit.emplace(jitscope::CompileUnitOptions{.frame = "nvtx_emit.frame.open_at_stop"});
    session.finish();
  }
  const long me = gettid_now();
  ASSERT_EQ(ranges_on(rec_->events(), me).size(), 2u);  // two pushes, nothing popped yet
  unit.reset();
  EXPECT_EQ(shape(ranges_on(rec_->events(), me)).back(), "pop");

  // The span ends during a later session that does not emit: its pop still comes.
  jitscope::Config off = test_config("nvtx_emit_off_after_stop");
  off.nvtx_emit = false;
  {
    ScopedSession session(off);
    ASSERT_TRUE(session.status().ok());
    span.reset();
    session.finish();
  }
  std::vector<Ev> evs = ranges_on(rec_->events(), me);
  ASSERT_EQ(evs.size(), 4u);
  EXPECT_EQ(shape(evs)[3], "pop");

  // Nothing of the closed unit sticks to this thread's next ranges.
  {
    ScopedSession session(test_config("nvtx_emit_after_open"));
    ASSERT_TRUE(session.status().ok());
    { JITSCOPE_SPAN("nvtx_emit.after_open"); }
    session.finish();
  }
  evs = ranges_on(rec_->events(), me);
  ASSERT_EQ(evs.size(), 6u);
  EXPECT_EQ(evs[4].text, "nvtx_emit.after_open");
  expect_plain(evs[4], "span after a unit that closed after stop()");
}

// Was a bug: the C API ended a span with the session word current
// at the end, not the one it began in. A span begun in an emitting session
// and ended after stop() never popped; one begun with no session and ended in
// an emitting session popped a range jitscope never pushed.
TEST_F(NvtxEmit, CApiSpanOpenAtStopPops) {
  {
    ScopedSession session(test_config("nvtx_emit_c_open"));
    ASSERT_TRUE(session.status().ok());
    jitscope_span_begin("nvtx_emit.c_open");
    session.finish();
  }
  jitscope_span_end();
  EXPECT_EQ(shape(ranges_on(rec_->events(), gettid_now())),
            (std::vector<std::string>{"push:nvtx_emit.c_open", "pop"}));
}

TEST_F(NvtxEmit, CApiSpanBegunBeforeTheSessionPopsNothing) {
  jitscope_span_begin("nvtx_emit.c_before");  // no session: nothing begins
  {
    ScopedSession session(test_config("nvtx_emit_c_before"));
    ASSERT_TRUE(session.status().ok());
    { JITSCOPE_SPAN("nvtx_emit.c_touch"); }  // registers the thread
    jitscope_span_end();
    session.finish();
  }
  EXPECT_EQ(shape(ranges_on(rec_->events(), gettid_now())),
            (std::vector<std::string>{"push:nvtx_emit.c_touch", "pop"}));
}

// The "belongs to another tool" line is once per process, so an earlier test
// in the same process may already have printed it. To be independent of test
// order and filters, this test runs itself again in a fresh process (this
// binary, only this test, JITSCOPE_NVTX_EMIT_STDERR_CHILD=1) where its two
// sessions are the process's first; the child checks the stderr text and
// reports through its exit status.
TEST(NvtxEmitStderr, ForeignToolLineAppearsOnceAcrossTwoSessions) {
  const char* kChildVar = "JITSCOPE_NVTX_EMIT_STDERR_CHILD";
  if (std::getenv(kChildVar) != nullptr) {
    const std::string path = std::getenv("NVTX_INJECTION64_PATH");
    const std::string expected =
        "jitscope: NVTX capture off: NVTX_INJECTION64_PATH=" + path + " belongs to another tool";
    std::string first, second;
    {
      StderrCapture capture;
      ScopedSession session(test_config("nvtx_emit_stderr1"));
      first = capture.text();
      ASSERT_TRUE(session.status().ok());
      EXPECT_TRUE(session.finish().nvtx_emitted);  // emission still works
    }
    {
      StderrCapture capture;
      ScopedSession session(test_config("nvtx_emit_stderr2"));
      second = capture.text();
      ASSERT_TRUE(session.status().ok());
      EXPECT_TRUE(session.finish().nvtx_emitted);
    }
    auto count = [&](const std::string& text) {
      int n = 0;
      for (std::size_t at = text.find(expected); at != std::string::npos;
           at = text.find(expected, at + 1)) {
        ++n;
      }
      return n;
    };
    EXPECT_EQ(count(first), 1) << first;
    EXPECT_EQ(count(second), 0) << second;
    return;
  }

  const std::string filter =
      "--gtest_filter=NvtxEmitStderr.ForeignToolLineAppearsOnceAcrossTwoSessions";
  std::vector<std::string> env_strings;
  for (char** e = environ; *e != nullptr; ++e) env_strings.emplace_back(*e);
  env_strings.push_back(std::string(kChildVar) + "=1");
  std::vector<char*> envp;
  for (std::string& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::string exe = "/proc/self/exe";
  std::string arg0 = "nvtx_emit_test";
  std::string arg1 = filter;
  char* argv[] = {arg0.data(), arg1.data(), nullptr};
  pid_t pid = 0;
  ASSERT_EQ(::posix_spawn(&pid, exe.c_str(), nullptr, nullptr, argv, envp.data()), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << "child status " << status;
  EXPECT_EQ(WEXITSTATUS(status), 0) << "the child's failures are printed above";
}

}  // namespace
