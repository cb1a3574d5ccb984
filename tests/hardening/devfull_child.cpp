// A host whose trace output fails: stress_test runs it with
// JITSCOPE_TRACE=/dev/full (the session starts at load) and checks that it
// prints one `jitscope:` line and keeps its exit status.
//
//   jitscope_devfull_child <exit-code> return|exit
//
// It records more spans than its ring holds, from two threads, so that under
// JITSCOPE_OVERFLOW=block the producers depend on the flusher draining after
// the output failed. Then it returns <exit-code> from main, or calls
// std::exit(<exit-code>) from a function.
#include <jitscope/jitscope.hpp>

#include <cstdlib>
#include <cstring>
#include <thread>

namespace {

void record(int spans) {
  for (int i = 0; i < spans; ++i) {
    JITSCOPE_SPAN("devfull");
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) return 64;
  const int code = std::atoi(argv[1]);
  std::thread worker([] { record(100'000); });
  record(100'000);
  worker.join();
  if (std::strcmp(argv[2], "exit") == 0) std::exit(code);
  return code;
}
