// A host that crashes mid-session, for crash_test.cpp.
//   crash_child <trace> <how> [marker-file]
// how: segv | segv_null | bus | fpe | ill | abort | terminate (real faults,
//      not raise),
//      sent_segv | sent_bus (kill/raise of a fatal signal),
//      host-before | host-after (a SIGSEGV with a host handler installed
//      before / after the session, both chaining), no-handler (a SIGSEGV with
//      Config::crash_handler off), sigkill (prints "ready" and waits to be
//      killed), survive (a first session, in <trace>.first.json, crashes
//      into a host handler that siglongjmps out; then the usual crash in a
//      second session), two-threads (a second thread faults at the same
//      time as the main one), rotate (the session rotates at 64 KiB),
//      close-fds (no crash: the host closes every descriptor it did not
//      open itself but the trace's, opens the marker file, ends the
//      session and exits 0), chain-survive (a host handler from before the
//      session recovers with siglongjmp, reached through one installed
//      after it that chains; then says whether the later one is still
//      installed, ends the session and exits 0), sent-ignored (SIGSEGV set
//      to SIG_IGN before the session, then sent: no crash; ends the session
//      and exits 0), quick-stop (no crash: a session with a 60 s flush
//      interval, stopped as soon as it started, while its flusher still
//      calibrates the clock; exits 0).
// Before crashing it has ended kEndedSpans spans named "ended", and holds
// open "outer" > "inner" on the main thread and "worker_open" on a worker.
#include <jitscope/jitscope.hpp>

#include <dirent.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr int kEndedSpans = 1000;

const char* g_marker = nullptr;
struct sigaction g_before_us {};  // host-after: what was there when the host installed

void write_marker(const char* text) {
  const int fd = ::open(g_marker, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return;
  (void)!::write(fd, text, std::strlen(text));
  ::close(fd);
}

// host-before: marks, then lets the fault happen again with the default.
void host_handler_first(int signo, siginfo_t*, void*) {
  write_marker("host-before\n");
  ::signal(signo, SIG_DFL);
}

// host-after: marks, then chains to whatever was installed before it (ours).
void host_handler_chaining(int signo, siginfo_t* info, void* context) {
  write_marker("host-after\n");
  if ((g_before_us.sa_flags & SA_SIGINFO) != 0 && g_before_us.sa_sigaction != nullptr) {
    g_before_us.sa_sigaction(signo, info, context);
  } else {
    ::signal(signo, SIG_DFL);
  }
}

// survive: the first fault goes back to the sigsetjmp; later ones are
// host-before's.
sigjmp_buf g_survive_point;
std::atomic<bool> g_survived{false};
void host_handler_recovering(int signo, siginfo_t* info, void* context) {
  if (!g_survived.exchange(true)) {
    write_marker("survived\n");
    ::siglongjmp(g_survive_point, 1);
  }
  host_handler_first(signo, info, context);
}

// close-fds: what a host that daemonizes or sandboxes itself does. Returns
// the numbers closed.
std::vector<int> close_descriptors_except(const std::string& keep_path) {
  std::vector<int> to_close;
  DIR* dir = ::opendir("/proc/self/fd");
  if (dir == nullptr) std::exit(5);
  while (dirent* entry = ::readdir(dir)) {
    const int fd = std::atoi(entry->d_name);
    if (fd <= 2 || fd == ::dirfd(dir)) continue;
    char target[4096];
    const std::string link = std::string("/proc/self/fd/") + entry->d_name;
    const ssize_t n = ::readlink(link.c_str(), target, sizeof target - 1);
    if (n > 0 && std::string(target, static_cast<std::size_t>(n)) == keep_path) continue;
    to_close.push_back(fd);
  }
  ::closedir(dir);
  for (int fd : to_close) ::close(fd);
  return to_close;
}

void install_host_handler(void (*handler)(int, siginfo_t*, void*), struct sigaction* previous) {
  struct sigaction action {};
  action.sa_sigaction = handler;
  action.sa_flags = SA_SIGINFO;
  sigemptyset(&action.sa_mask);
  ::sigaction(SIGSEGV, &action, previous);
}

[[gnu::noinline]] void fault_segv() {
  // A real access fault (si_code SEGV_ACCERR), not a raise().
  void* page = ::mmap(nullptr, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  *static_cast<volatile int*>(page) = 1;
}

// no_sanitize("null"): under UBSan (the asan preset) the store would be
// reported and the child would exit 1 before the fault it is here to make.
[[gnu::noinline, gnu::no_sanitize("null")]] void fault_null(volatile int* null) {
  // A write through a NULL pointer: SEGV_MAPERR at address 0. Through a
  // parameter, so the compiler sees no null store to turn into a trap.
  *null = 1;
}

[[gnu::noinline]] void fault_bus() {
  // Reading a mapped page past the end of a file: BUS_ADRERR.
  FILE* f = std::tmpfile();
  void* page = ::mmap(nullptr, 4096, PROT_READ, MAP_SHARED, ::fileno(f), 0);
  std::printf("%d\n", *static_cast<volatile int*>(page));
}

#if defined(__x86_64__) || defined(__i386__)
[[gnu::noinline]] int fault_fpe(int zero) {
  // idiv by zero, in assembly: C++ division by zero is UB the compiler (and
  // UBSan) would get to first.
  int quotient = 1;
  int high = 0;
  asm volatile("idivl %2" : "+a"(quotient), "+d"(high) : "r"(zero));
  return quotient;
}  // FPE_INTDIV
#endif

[[noreturn]] void throw_uncaught() { throw std::runtime_error("boom"); }

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) return 2;
  const std::string how = argv[2];
  g_marker = argc > 3 ? argv[3] : "/dev/null";
  rlimit no_core{0, 0};
  ::setrlimit(RLIMIT_CORE, &no_core);  // a crash test must not leave core files

  if (how == "quick-stop") {
    jitscope::Config quick;
    quick.output_path = argv[1];
    quick.flush_interval = std::chrono::milliseconds(60000);
    quick.clock = jitscope::ClockChoice::kTsc;  // calibrated once per process, from here
    quick.cupti = jitscope::CuptiMode::kOff;
    if (!jitscope::start(quick)) return 3;
    { jitscope::Span span("quick"); }
    return jitscope::stop() ? 0 : 7;
  }
  if (how == "host-before") install_host_handler(host_handler_first, nullptr);
  if (how == "chain-survive") install_host_handler(host_handler_recovering, nullptr);
  if (how == "sent-ignored") ::signal(SIGSEGV, SIG_IGN);
  if (how == "survive") {
    install_host_handler(host_handler_recovering, nullptr);
    jitscope::Config first;
    first.output_path = std::string(argv[1]) + ".first.json";
    first.flush_interval = std::chrono::milliseconds(20);
    first.cupti = jitscope::CuptiMode::kOff;
    if (!jitscope::start(first)) return 3;
    {
      jitscope::Span span("before_survived");
      // The host's handler jumps back into this frame, still live.
      if (sigsetjmp(g_survive_point, 1) == 0) fault_segv();
    }
    // The host went on: the first session is over (its flusher wrote the
    // crash); a second one must catch the next crash as well.
    (void)jitscope::stop();
  }

  jitscope::Config cfg;
  cfg.output_path = argv[1];
  cfg.overflow = jitscope::OverflowPolicy::kBlock;
  cfg.flush_interval = std::chrono::milliseconds(20);
  cfg.crash_handler = how != "no-handler";
  cfg.cupti = jitscope::CuptiMode::kOff;
  if (how == "rotate") cfg.rotate_bytes = 64 * 1024;
  if (how == "flight-segv") cfg.flight_recorder_bytes = 1 << 20;
  if (!jitscope::start(cfg)) return 3;

  if (how == "host-after" || how == "chain-survive") {
    install_host_handler(host_handler_chaining, &g_before_us);
  }

  jitscope::set_thread_name("crashing thread");
  for (int i = 0; i < kEndedSpans; ++i) {
    jitscope::Span span("ended", {{"i", i}});
  }
  std::atomic<bool> worker_open{false};
  std::thread worker([&] {
    jitscope::set_thread_name("worker");
    jitscope::Span span("worker_open");
    worker_open.store(true);
    for (;;) ::pause();  // open until the process ends
  });
  worker.detach();
  while (!worker_open.load()) std::this_thread::yield();

  jitscope::Span outer("outer");
  jitscope::Span inner("inner", {{"step", "lowering"}});

  if (how == "close-fds") {
    const std::vector<int> closed = close_descriptors_except(argv[1]);
    // The host's own file, under every number just closed: whatever jitscope
    // might still use by number now lands in it.
    const int marker = ::open(g_marker, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (marker < 0) return 6;
    for (int fd : closed) {
      if (fd != marker && ::dup2(marker, fd) < 0) return 6;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));  // flush cycles
    inner.end();
    outer.end();
    const jitscope::Status stopped = jitscope::stop();
    ::close(marker);
    return stopped ? 0 : 7;
  }
  if (how == "chain-survive" || how == "sent-ignored") {
    if (how == "sent-ignored") {
      ::raise(SIGSEGV);  // this thread; ignored, as it was before jitscope
    } else if (sigsetjmp(g_survive_point, 1) == 0) {
      fault_segv();
    }
    if (how == "chain-survive") {
      struct sigaction now {};
      ::sigaction(SIGSEGV, nullptr, &now);
      write_marker(now.sa_sigaction == host_handler_chaining ? "kept\n" : "replaced\n");
    }
    inner.end();
    outer.end();
    (void)jitscope::stop();
    return 0;
  }
  if (how == "two-threads") {
    // Both fault at once: one crash is written, the process dies of a SIGSEGV.
    std::atomic<bool> go{false};
    std::thread second([&] {
      jitscope::set_thread_name("second crasher");
      while (!go.load()) std::this_thread::yield();
      fault_segv();
    });
    second.detach();
    go.store(true);
    fault_segv();
  }
  if (how == "sigkill") {
    // Two flush intervals: everything above is in the file before "ready".
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    std::printf("ready\n");
    std::fflush(stdout);
    for (;;) ::pause();
  }
  if (how == "segv" || how == "survive" || how == "rotate" || how == "host-before" ||
      how == "host-after" || how == "no-handler" || how == "flight-segv") {
    if (how == "no-handler") std::this_thread::sleep_for(std::chrono::milliseconds(200));
    fault_segv();
  } else if (how == "segv_null") {
    fault_null(nullptr);
  } else if (how == "bus") {
    fault_bus();
#if defined(__x86_64__) || defined(__i386__)
  } else if (how == "fpe") {
    std::printf("%d\n", fault_fpe(0));
  } else if (how == "ill") {
    __builtin_trap();  // ud2 on x86: SIGILL (elsewhere it may be SIGTRAP)
#endif
  } else if (how == "abort") {
    std::abort();
  } else if (how == "sent_segv") {
    ::kill(::getpid(), SIGSEGV);  // sent, not a fault: returning would go on
  } else if (how == "sent_bus") {
    ::raise(SIGBUS);
  } else if (how == "terminate") {
    throw_uncaught();
  }
  return 4;  // not reached for a known `how`
}
