// StepLogger numbering and sinks, the default stderr sink's level filter,
// "step" instants in a trace, and CompileProgress on a pipe and on a
// pseudo-terminal (enabled and disabled, one active bar, clamping).
// Not covered here: reading JITSCOPE_PROGRESS from the real environment (it
// is read once per process; parse_progress_env is tested instead), terminal
// width truncation, and the out-of-memory paths (compile_boundary_test).
#include <jitscope/step_log.hpp>

#include "compile/step_log_internal.hpp"
#include "trace_support.hpp"

#include <fcntl.h>
#include <poll.h>
#include <termios.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace jitscope::testing {
namespace {

using nlohmann::json;

// Captures what a sink receives.
struct Captured {
  std::mutex mu;
  std::vector<std::pair<LogLevel, std::string>> lines;
  StepSink sink() {
    return [this](LogLevel level, std::string_view line) {
      std::lock_guard<std::mutex> lock(mu);
      lines.emplace_back(level, std::string(line));
    };
  }
};

// A pseudo-terminal in raw mode: the bar writes to slave(), the test reads
// exactly those bytes from the master.
class PseudoTerminal {
 public:
  PseudoTerminal() {
    master_ = ::posix_openpt(O_RDWR | O_NOCTTY);
    if (master_ < 0 || ::grantpt(master_) != 0 || ::unlockpt(master_) != 0) return;
    const char* name = ::ptsname(master_);
    if (name == nullptr) return;
    slave_ = ::open(name, O_RDWR | O_NOCTTY);
    if (slave_ < 0) return;
    termios t{};
    if (::tcgetattr(slave_, &t) == 0) {
      ::cfmakeraw(&t);  // no "\n" -> "\r\n"
      ::tcsetattr(slave_, TCSANOW, &t);
    }
  }
  ~PseudoTerminal() {
    if (slave_ >= 0) ::close(slave_);
    if (master_ >= 0) ::close(master_);
  }
  bool ok() const { return master_ >= 0 && slave_ >= 0; }
  int slave() const { return slave_; }

  // Reads what has arrived, waiting up to `quiet` for more after each chunk.
  std::string drain(std::chrono::milliseconds quiet = std::chrono::milliseconds(200)) {
    std::string out;
    char buf[4096];
    for (;;) {
      pollfd p{master_, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(quiet.count())) <= 0 || (p.revents & POLLIN) == 0) break;
      const ssize_t n = ::read(master_, buf, sizeof(buf));
      if (n <= 0) break;
      out.append(buf, static_cast<std::size_t>(n));
    }
    return out;
  }

 private:
  int master_ = -1;
  int slave_ = -1;
};

bool contains(const std::string& hay, const std::string& needle) {
  return hay.find(needle) != std::string::npos;
}

class StepLog : public ::testing::Test {
 protected:
  void SetUp() override { restore(); }
  void TearDown() override { restore(); }
  static void restore() {
    set_step_sink({});
    reset_steps();
    set_progress_enabled(false);
    detail::set_progress_fd(STDERR_FILENO);
  }
};

TEST_F(StepLog, StepsCountFromOneAndPrefixEveryLine) {
  Captured cap;
  set_step_sink(cap.sink());
  StepLogger parse("parse");
  StepLogger lower("lower");
  StepLogger codegen;
  EXPECT_EQ(parse.step(), 1);
  EXPECT_EQ(lower.step(), 2);
  EXPECT_EQ(codegen.step(), 3);
  EXPECT_EQ(parse.stage(), "parse");
  EXPECT_EQ(codegen.stage(), "");
  parse.log("parse");
  lower.log("lower", LogLevel::kWarning);
  codegen.log("codegen", LogLevel::kDebug);  // a custom sink sees every level
  parse.log("again");
  ASSERT_EQ(cap.lines.size(), 4u);
  EXPECT_EQ(cap.lines[0].second, "Step 1: parse");
  EXPECT_EQ(cap.lines[0].first, LogLevel::kInfo);
  EXPECT_EQ(cap.lines[1].second, "Step 2: lower");
  EXPECT_EQ(cap.lines[1].first, LogLevel::kWarning);
  EXPECT_EQ(cap.lines[2].second, "Step 3: codegen");
  EXPECT_EQ(cap.lines[2].first, LogLevel::kDebug);
  EXPECT_EQ(cap.lines[3].second, "Step 1: again");
  reset_steps();
  EXPECT_EQ(StepLogger().step(), 1);
}

TEST_F(StepLog, DefaultSinkWritesInfoAndAboveToStderrWithoutPrefix) {
  StepLogger a;
  StderrCapture err;
  a.log("debug", LogLevel::kDebug);
  a.log("info", LogLevel::kInfo);
  a.log("warning", LogLevel::kWarning);
  a.log("error", LogLevel::kError);
  EXPECT_EQ(err.text(), "Step 1: info\nStep 1: warning\nStep 1: error\n");
}

TEST_F(StepLog, EmptySinkRestoresTheDefault) {
  Captured cap;
  StepLogger a;
  StderrCapture err;
  set_step_sink(cap.sink());
  a.log("to the sink");
  set_step_sink({});
  a.log("to stderr");
  EXPECT_EQ(err.text(), "Step 1: to stderr\n");
  ASSERT_EQ(cap.lines.size(), 1u);
  EXPECT_EQ(cap.lines[0].second, "Step 1: to the sink");
}

TEST_F(StepLog, ThrowingSinkIsIgnored) {
  int calls = 0;
  set_step_sink([&calls](LogLevel, std::string_view) {
    ++calls;
    throw std::runtime_error("host logger broke");
  });
  StepLogger a;
  a.log("one");
  a.log("two");
  EXPECT_EQ(calls, 2);
}

TEST_F(StepLog, SinkMayLogAndSwapSinksWithoutDeadlock) {
  // The sink runs with no jitscope lock held: re-entering is allowed.
  Captured cap;
  set_step_sink([&cap](LogLevel, std::string_view line) {
    set_step_sink(cap.sink());
    StepLogger inner("inner");
    inner.log(std::string("inner saw ") + std::string(line));
  });
  StepLogger a;
  a.log("outer");
  ASSERT_EQ(cap.lines.size(), 1u);
  EXPECT_EQ(cap.lines[0].second, "Step 2: inner saw Step 1: outer");
}

TEST_F(StepLog, ConcurrentLoggersGetDistinctNumbers) {
  constexpr int kThreads = 4;
  constexpr int kPerThread = 500;
  Captured cap;
  set_step_sink(cap.sink());
  std::vector<std::vector<int>> got(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&got, t] {
      for (int i = 0; i < kPerThread; ++i) {
        StepLogger s("stage");
        got[t].push_back(s.step());
        s.log("m");
      }
    });
  }
  for (auto& th : threads) th.join();
  std::vector<int> all;
  for (const auto& v : got) all.insert(all.end(), v.begin(), v.end());
  std::sort(all.begin(), all.end());
  ASSERT_EQ(all.size(), static_cast<std::size_t>(kThreads * kPerThread));
  for (int i = 0; i < kThreads * kPerThread; ++i) ASSERT_EQ(all[i], i + 1);
  EXPECT_EQ(cap.lines.size(), all.size());
}

TEST_F(StepLog, LogRecordsAStepInstantWhileASessionIsOn) {
  Captured cap;
  set_step_sink(cap.sink());
  StepLogger before;
  before.log("no session: no instant");
  Config cfg = test_config("step_log");
  ScopedSession session(cfg);
  ASSERT_TRUE(session.status().ok()) << session.status().message();
  StepLogger parse("parse");
  StepLogger lower("lower");
  parse.log("parsed 3 functions");
  lower.log("lowered \"quoted\"", LogLevel::kDebug);  // instants at every level
  session.finish();
  StepLogger after;
  after.log("stopped: no instant");

  const json trace = load_trace(cfg.output_path);
  std::vector<json> steps;
  for (const auto& e : events_with_ph(trace, "I")) {
    if (e["name"] == "step") steps.push_back(e);
  }
  ASSERT_EQ(steps.size(), 2u);
  std::sort(steps.begin(), steps.end(),
            [](const json& a, const json& b) { return a["args"]["step"] < b["args"]["step"]; });
  EXPECT_EQ(steps[0]["args"]["step"], 2);
  EXPECT_EQ(steps[0]["args"]["message"], "parsed 3 functions");
  EXPECT_EQ(steps[1]["args"]["step"], 3);
  EXPECT_EQ(steps[1]["args"]["message"], "lowered \"quoted\"");
  EXPECT_EQ(cap.lines.size(), 4u);
}

TEST_F(StepLog, ProgressOnAPipeNeverDraws) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  ASSERT_EQ(::fcntl(fds[0], F_SETFL, O_NONBLOCK), 0);
  detail::set_progress_fd(fds[1]);
  set_progress_enabled(true);
  {
    CompileProgress bar("compile", 3);
    EXPECT_FALSE(bar.drawn());
    StepLogger a("trace");
    bar.advance("lower");
    EXPECT_EQ(bar.done(), 2);
  }
  char buf[64];
  EXPECT_EQ(::read(fds[0], buf, sizeof(buf)), -1);  // nothing: EAGAIN
  ::close(fds[0]);
  ::close(fds[1]);
}

TEST_F(StepLog, ProgressOnATerminalDrawsAndEndsWithANewline) {
  PseudoTerminal pty;
  ASSERT_TRUE(pty.ok());
  detail::set_progress_fd(pty.slave());
  set_progress_enabled(true);
  std::string out;
  {
    CompileProgress bar("torch.compile()", 3);
    EXPECT_TRUE(bar.drawn());
    EXPECT_EQ(bar.stages(), 3);
    StepLogger dynamo("dynamo");
    StepLogger aot("aot");
    EXPECT_EQ(bar.done(), 2);
    out = pty.drain();
    EXPECT_TRUE(contains(out, "\rtorch.compile() [")) << out;
    EXPECT_TRUE(contains(out, "[##")) << out;
    EXPECT_TRUE(contains(out, "] 2/3 aot\x1b[K")) << out;
    EXPECT_TRUE(contains(out, "] 1/3 dynamo\x1b[K")) << out;
    EXPECT_FALSE(out.empty() || out.back() == '\n') << out;
    bar.advance("inductor");
    bar.advance("extra");  // past the end: clamped
    bar.advance();
    EXPECT_EQ(bar.done(), 3);
    out = pty.drain();
    EXPECT_TRUE(contains(out, "[####################] 3/3 inductor")) << out;
    EXPECT_FALSE(contains(out, "4/3")) << out;
  }
  out = pty.drain();
  EXPECT_EQ(out, "\n");
}

TEST_F(StepLog, ProgressOnATerminalButDisabledDrawsNothing) {
  PseudoTerminal pty;
  ASSERT_TRUE(pty.ok());
  detail::set_progress_fd(pty.slave());
  {
    CompileProgress bar("compile", 2);
    EXPECT_FALSE(bar.drawn());
    StepLogger a("a");
    EXPECT_EQ(bar.done(), 1);  // still counted
  }
  EXPECT_EQ(pty.drain(std::chrono::milliseconds(100)), "");
}

TEST_F(StepLog, OnlyOneBarIsActive) {
  PseudoTerminal pty;
  ASSERT_TRUE(pty.ok());
  detail::set_progress_fd(pty.slave());
  set_progress_enabled(true);
  CompileProgress outer("outer", 4);
  EXPECT_TRUE(outer.drawn());
  {
    CompileProgress inner("inner", 4);
    EXPECT_FALSE(inner.drawn());
    StepLogger s("step");  // advances the active bar only
    EXPECT_EQ(outer.done(), 1);
    EXPECT_EQ(inner.done(), 0);
  }
  const std::string out = pty.drain();
  EXPECT_FALSE(contains(out, "inner")) << out;
  EXPECT_FALSE(contains(out, "\n")) << out;  // the inert bar ended silently
  // Once the active bar ends, a new one may draw.
}

TEST_F(StepLog, BarTextHasNoControlBytesFromLabels) {
  PseudoTerminal pty;
  ASSERT_TRUE(pty.ok());
  detail::set_progress_fd(pty.slave());
  set_progress_enabled(true);
  {
    CompileProgress bar("desc\n", 1);
    bar.advance("red\x1b[31m\r");
  }
  const std::string out = pty.drain();
  EXPECT_TRUE(contains(out, "desc? [")) << out;
  EXPECT_TRUE(contains(out, "1/1 red?[31m?\x1b[K")) << out;
}

TEST_F(StepLog, DefaultSinkLineDoesNotLandInsideABarOnStderr) {
  // Both the bar and the default sink on fd 2, which is a terminal here.
  PseudoTerminal pty;
  ASSERT_TRUE(pty.ok());
  const int saved = ::dup(STDERR_FILENO);
  ASSERT_GE(saved, 0);
  ::dup2(pty.slave(), STDERR_FILENO);
  set_progress_enabled(true);
  {
    CompileProgress bar("compile", 2);
    StepLogger s("parse");
    s.log("hello");
  }
  ::dup2(saved, STDERR_FILENO);
  ::close(saved);
  const std::string out = pty.drain();
  EXPECT_TRUE(contains(out, "1/2 parse\x1b[K\r\x1b[KStep 1: hello\n\rcompile [")) << out;
  EXPECT_EQ(out.back(), '\n');
}

TEST(ProgressEnv, AcceptsExactlyZeroOrOne) {
  EXPECT_FALSE(detail::parse_progress_env(nullptr));
  EXPECT_FALSE(detail::parse_progress_env("0"));
  EXPECT_TRUE(detail::parse_progress_env("1"));
  StderrCapture err;
  EXPECT_FALSE(detail::parse_progress_env("yes"));
  EXPECT_FALSE(detail::parse_progress_env(" 1"));
  EXPECT_EQ(err.text(),
            "jitscope: JITSCOPE_PROGRESS='yes' is not 0 or 1; progress bar off\n"
            "jitscope: JITSCOPE_PROGRESS=' 1' is not 0 or 1; progress bar off\n");
}

}  // namespace
}  // namespace jitscope::testing
