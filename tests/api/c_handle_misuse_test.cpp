// Every C handle (phase, unit, attachment, unit ref, load scope, span) driven
// through the wrong sequences callback code produces: ended twice, ended
// after its unit closed, after stop(), from another thread, through a stale
// copy whose slot a new handle took, and NULL; with and without a session.
// None may crash (the old heap handles were freed at the first end: a second
// end was a use-after-free), a stale handle is refused with one `jitscope:`
// line, and an end refused on the wrong thread leaves the handle for its own
// thread to end.
// Not covered: the C API's normal use (c_compile_api_test), hostile names
// and values (c_api_hostile_test).
#include "trace_support.hpp"

#include <jitscope/compile.h>
#include <jitscope/jitscope.h>
#include <jitscope/compile.hpp>

#include <future>
#include <thread>

extern "C" int jitscope_c_handle_misuse(void);

namespace jitscope::testing {
namespace {

using namespace std::chrono_literals;

std::size_t count_of(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) {
    ++n;
  }
  return n;
}

// Log lines are deduplicated per process: a line said by an earlier test in
// the same process is not said again. ctest runs each test alone, where the
// line must be there exactly once; run together, at most once.
void expect_said_once(const std::string& text, const std::string& line) {
  const std::size_t n = count_of(text, line);
  if (::testing::UnitTest::GetInstance()->test_to_run_count() == 1) {
    EXPECT_EQ(n, 1u) << line << " in:\n" << text;
  } else {
    EXPECT_LE(n, 1u) << line << " in:\n" << text;
  }
}

const CompileRecord* record_of(const std::vector<CompileRecord>& records, const char* frame) {
  for (const CompileRecord& r : records) {
    if (r.frame == frame) return &r;
  }
  return nullptr;
}

class CHandleMisuse : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    reset_compile_state();
    if (GetParam()) {
      Config cfg = test_config("c_handle_misuse");
      cfg.metrics_path = temp_path("c_handle_misuse.metrics");
      session_.emplace(cfg);
      ASSERT_TRUE(session_->status().ok()) << session_->status().message();
    }
  }
  std::optional<ScopedSession> session_;
};

TEST_P(CHandleMisuse, EndsTwiceAfterCloseAndThroughStaleCopiesCrashNothing) {
  StderrCapture err;
  ASSERT_EQ(jitscope_c_handle_misuse(), 0);
  const std::string text = err.text();
  // Said once each, however often (log lines are deduplicated).
  expect_said_once(text, "jitscope: jitscope_phase_end: the handle is not open");
  expect_said_once(text, "jitscope: jitscope_unit_close: the handle is not open");
  expect_said_once(text, "jitscope: jitscope_attachment_detach: the handle is not open");
  expect_said_once(text, "jitscope: jitscope_load_end: the handle is not open");
  expect_said_once(text, "jitscope: jitscope_unit_ref_free: the handle is not open");
  const std::vector<CompileRecord> records = recent_compile_records();
  ASSERT_EQ(records.size(), 2u);
  // The first unit has its phases, the late one ended with it; nothing that
  // came after its close reached it.
  EXPECT_EQ(records[0].unit_key, "c_misuse_key");
  EXPECT_EQ(records[0].columns.count("c_misuse_us"), 1u);
  EXPECT_FALSE(records[0].failed);
  EXPECT_EQ(records[0].fields.count("after_close"), 0u);
  EXPECT_EQ(records[1].fields.count("still_open"), 1u) << "a stale close ended the new unit";
  EXPECT_EQ(runtime_record().columns.count("c_misuse_us"), 0u);
  if (session_) {
    // One: the scenario attaches the unit to its own thread and closes the
    // unit before it detaches, so the unit's slice ends around the open
    // attachment's. The phases end inside it, in order.
    const SessionStats stats = session_->finish();
    EXPECT_EQ(stats.spans_ended_out_of_order, 1u);
  }
}

TEST_P(CHandleMisuse, AnEndAfterStopIsHarmless) {
  const jitscope_phase_key* key = jitscope_phase_key_get("c_after_stop", nullptr, 0);
  jitscope_unit* unit = jitscope_unit_open(nullptr);
  jitscope_phase* phase = jitscope_phase_begin(key);
  jitscope_span span = jitscope_span_open("c_after_stop_span");
  jitscope_span copy = span;
  if (session_) (void)session_->finish();
  jitscope_span_close(&span);
  jitscope_span_close(&copy);  // a copy closed too
  jitscope_phase_end(phase);
  jitscope_phase_end(phase);
  jitscope_unit_close(unit);
  jitscope_unit_close(unit);
  EXPECT_EQ(recent_compile_records().size(), 1u);
}

// Ended on the wrong thread: refused, and the owner's own end still ends
// it (the phase's time reaches its unit's record).
TEST_P(CHandleMisuse, AnEndFromAnotherThreadIsRefusedAndTheOwnerStillEndsIt) {
  StderrCapture err;
  const jitscope_phase_key* key = jitscope_phase_key_get("c_other_thread", "c_other_us", 0);
  std::promise<jitscope_phase*> begun;
  std::promise<jitscope_unit*> unit_open;
  std::promise<void> tried;
  std::thread owner([&] {
    jitscope_unit_options o;
    jitscope_unit_options_init(&o);
    o.frame = "c_other_thread";
    jitscope_unit* unit = jitscope_unit_open(&o);
    jitscope_phase* phase = jitscope_phase_begin(key);
    begun.set_value(phase);
    unit_open.set_value(unit);
    tried.get_future().wait();
    std::this_thread::sleep_for(2ms);
    jitscope_phase_end(phase);
    jitscope_phase_end(phase);  // and once more: refused, harmless
    jitscope_unit_close(unit);
  });
  jitscope_phase* phase = begun.get_future().get();
  jitscope_unit* unit = unit_open.get_future().get();
  jitscope_phase_end(phase);  // not this thread's
  jitscope_unit_close(unit);  // not this thread's
  tried.set_value();
  owner.join();
  jitscope_phase_end(phase);  // stale by now
  expect_said_once(err.text(),
                   "jitscope: ending a phase on a thread other than the one that opened it");
  const std::vector<CompileRecord> records = recent_compile_records();
  const CompileRecord* r = record_of(records, "c_other_thread");
  ASSERT_NE(r, nullptr);
  ASSERT_EQ(r->columns.count("c_other_us"), 1u) << r->to_json();
  EXPECT_GE(r->columns.at("c_other_us"), 2000u);
}

TEST_P(CHandleMisuse, AnAttachmentDetachedFromAnotherThreadStaysForItsOwnThread) {
  jitscope_unit* unit = jitscope_unit_open(nullptr);
  std::promise<jitscope_attachment*> attached;
  std::promise<void> tried;
  std::thread worker([&] {
    jitscope_attachment* a = jitscope_unit_attach(unit);
    attached.set_value(a);
    tried.get_future().wait();
    CompileId id;
    EXPECT_TRUE(current_compile_id(&id)) << "a refused detach detached the worker";
    jitscope_attachment_detach(a);
    EXPECT_FALSE(current_compile_id(&id));
    jitscope_attachment_detach(a);
  });
  jitscope_attachment* a = attached.get_future().get();
  jitscope_attachment_detach(a);  // not this thread's
  tried.set_value();
  worker.join();
  jitscope_unit_close(unit);
}

// A span handle (a value) closed twice, through a copy, and from another
// thread: each span ends once.
TEST_P(CHandleMisuse, SpanHandlesClosedTwiceOrElsewhereEndTheirSpanOnce) {
  jitscope_span outer = jitscope_span_open("c_misuse_outer");
  jitscope_span inner = jitscope_span_open("c_misuse_inner");
  jitscope_span inner_copy = inner;
  std::thread([&] { jitscope_span_close(&inner_copy); }).join();  // not its thread
  jitscope_span_close(&inner);
  jitscope_span_close(&inner);
  jitscope_span_close(&inner_copy);
  jitscope_span_close(&outer);
  jitscope_span_close(nullptr);
  if (!session_) return;
  const SessionStats stats = session_->finish();
  EXPECT_EQ(stats.spans_ended_out_of_order, 0u);
  std::size_t inner_slices = 0, outer_slices = 0;
  for (const auto& e : events_with_ph(load_trace(session_->path()), "X")) {
    inner_slices += e["name"] == "c_misuse_inner";
    outer_slices += e["name"] == "c_misuse_outer";
  }
  EXPECT_EQ(inner_slices, 1u);
  EXPECT_EQ(outer_slices, 1u);
}

INSTANTIATE_TEST_SUITE_P(SessionOnAndOff, CHandleMisuse, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? "Session" : "NoSession";
                         });

}  // namespace
}  // namespace jitscope::testing
