// A host that forks while its other threads use the compile layer, for
// fork_test.cpp (issue 17 item 4).
//
//   fork_child <forks> none|session [<trace>]
//
// Four threads loop on every lock of the compile layer (and the adapters'
// kept names): phases (the phase
// registry and each phase's spin lock), compile events and metric data on a
// unit shared with the main thread (its mutex), units of their own (the unit
// registry, the records queue), tuning sessions (the autotuning ledger), the
// runtime record, wait counters, step log
// lines and a progress bar (the step log's two mutexes), the tables, and a
// bad phase column whose line goes through log_unique (the dedup lock). The
// main thread forks <forks> times. Each child uses the compile API (a phase
// in the shared unit, a metric on it, a unit of its own with a compile event,
// a step line, the tables) and _exit(0)s. The parent waits for each child up
// to 20 s; a hung one is killed and this program exits 1 naming the fork.
// With `session`, a session writes <trace> meanwhile (its flusher runs too).
#include <jitscope/autotune.hpp>
#include <jitscope/compile.hpp>
#include <jitscope/jitscope.hpp>
#include <jitscope/step_log.hpp>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace jitscope;

constexpr int kWorkers = 4;
constexpr auto kChildPatience = std::chrono::seconds(20);

void work(const CompileUnitRef& shared, const std::atomic<bool>& stop, int id) {
  WaitCounter waits("fork.wait");
  std::uint64_t names = 0;
  while (!stop.load(std::memory_order_relaxed)) {
    // The adapters' kept names: a new one takes the table's lock (and once
    // the table is full, every one does).
    (void)detail::stable_name("fork.name." + std::to_string(id) + "." + std::to_string(names++));
    {
      UnitScope attach(shared);
      Phase column("fork.attached", PhaseOptions{.column = "attached_us"});
      Phase ev("fork.event", PhaseOptions{.compile_event = true});
      ev.event().try_set(DataLevel::kCompileEvent, "worker", id, /*overwrite=*/true);
    }
    {
      CompileUnit unit(CompileUnitOptions{.frame = "fork.worker"});
      Phase p("fork.phase", PhaseOptions{.column = "fork_us"});
      (void)unit.set("worker", id, /*overwrite=*/true);
      unit.cache_hit("key");
      const WaitCounter::Guard wait = waits.wait();
    }
    {
      const StepLogger step("fork.step");
      step.log("step", LogLevel::kDebug);
      CompileProgress bar("fork", 2);
      bar.advance("one");
    }
    { Phase bad("fork.bad", PhaseOptions{.column = "bad"}); }  // log_unique, every time
    { Phase runtime("fork.runtime", PhaseOptions{.column = "runtime_us"}); }
    {
      // With a session: the autotuning ledger's lock, and its record's line
      // into the metrics queue.
      Autotune tune("fork.tune");
      const AutotuneTrial trial = tune.trial({{"worker", id}});
      { const AutotuneStep step = trial.compile(); }
      trial.result(1.0);
      tune.winner(trial);
    }
    if (id == 0) {
      (void)phase_times();
      (void)recent_compile_records();
      (void)runtime_record();
      set_model_name("fork");
    }
  }
}

// In the child: one of each, then _exit. 0 if all of it worked.
[[noreturn]] void child(CompileUnit& shared) {
  int failed = 0;
  { Phase p("fork.child", PhaseOptions{.column = "child_us"}); }
  if (!shared.set("child", 1, /*overwrite=*/true)) failed |= 1;
  {
    CompileUnit own(CompileUnitOptions{.frame = "fork.child"});
    Phase ev("fork.child.event", PhaseOptions{.compile_event = true});
    if (!own.set("child", 1)) failed |= 2;
  }
  StepLogger("fork.child").log("child", LogLevel::kDebug);
  { Phase bad("fork.bad", PhaseOptions{.column = "bad"}); }
  { Phase runtime("fork.runtime", PhaseOptions{.column = "runtime_us"}); }
  if (detail::stable_name("fork.name.0.0") == nullptr) failed |= 16;  // kept before the fork
  (void)detail::stable_name("fork.child.name");
  if (phase_times().empty()) failed |= 4;
  if (recent_compile_records().empty()) failed |= 8;
  (void)runtime_record();
  ::_exit(failed == 0 ? 0 : 10 + failed);
}

// A hung child's stacks on stderr, when gdb is there: the test's output then
// says where it hung.
void print_stacks(pid_t pid) {
  const std::string cmd = "command -v gdb >/dev/null && gdb -p " + std::to_string(pid) +
                          " -batch -nx -ex 'thread apply all bt' 1>&2 2>/dev/null";
  (void)std::system(cmd.c_str());
}

// Waits for `pid` up to kChildPatience; kills it if it hangs. Its exit code,
// or -1 if it hung, -2 if a signal ended it.
int wait_child(pid_t pid) {
  const auto deadline = std::chrono::steady_clock::now() + kChildPatience;
  int status = 0;
  for (;;) {
    const pid_t w = ::waitpid(pid, &status, WNOHANG);
    if (w == pid) break;
    if (w < 0 && errno != EINTR) return -3;
    if (std::chrono::steady_clock::now() > deadline) {
      print_stacks(pid);
      ::kill(pid, SIGKILL);
      while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  if (WIFSIGNALED(status)) return -2;
  return WEXITSTATUS(status);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) return 64;
  const int forks = std::atoi(argv[1]);
  const bool session = std::strcmp(argv[2], "session") == 0;
  if (session) {
    if (argc != 4) return 64;
    jitscope::Config cfg;
    cfg.output_path = argv[3];
    cfg.cupti = jitscope::CuptiMode::kOff;
    cfg.flush_interval = std::chrono::milliseconds(2);
    cfg.max_trace_bytes = 8 << 20;  // the workers never stop making spans
    if (!jitscope::start(cfg)) return 65;
  }
  jitscope::set_step_sink([](jitscope::LogLevel, std::string_view) {});
  int result = 0;
  {
    jitscope::CompileUnit shared(jitscope::CompileUnitOptions{.frame = "fork.shared"});
    const jitscope::CompileUnitRef ref = shared.ref();
    std::atomic<bool> stop{false};
    std::vector<std::thread> workers;
    for (int i = 0; i < kWorkers; ++i) {
      workers.emplace_back(work, std::cref(ref), std::cref(stop), i);
    }
    for (int i = 0; i < forks && result == 0; ++i) {
      const pid_t pid = ::fork();
      if (pid < 0) {
        std::fprintf(stderr, "fork %d failed: %s\n", i, std::strerror(errno));
        result = 2;
        break;
      }
      if (pid == 0) child(shared);
      const int code = wait_child(pid);
      if (code == -1) {
        std::fprintf(stderr, "fork %d of %d: the child hung (killed after %lld s)\n", i, forks,
                     static_cast<long long>(kChildPatience.count()));
        result = 1;
      } else if (code != 0) {
        std::fprintf(stderr, "fork %d of %d: the child ended with %d\n", i, forks, code);
        result = 3;
      }
    }
    stop.store(true, std::memory_order_relaxed);
    for (std::thread& t : workers) t.join();
  }
  if (session && !jitscope::stop()) result = result == 0 ? 4 : result;
  if (result == 0) std::printf("%d forks, every child exited 0\n", forks);
  return result;
}
