// The pass_pipeline sample's codegen workers: a fixed pool of named threads
// that each run one job per generation, a worker's failure carried back to
// the waiting thread. Separate from the compiler: it is plain threading, with
// no jitscope call but the threads' names.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace pass_pipeline {

class WorkerPool {
 public:
  explicit WorkerPool(int workers);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  int size() const { return static_cast<int>(threads_.size()); }

  // Every worker runs job(its index) once.
  void start(std::function<void(int)> job);

  // Blocks until the job is done everywhere; a worker's failure comes back
  // as a std::runtime_error thrown here. (Its message is carried, not the
  // exception object: an exception_ptr freed on another thread trips TSan,
  // whose view of libstdc++'s reference count is incomplete.)
  void wait();

 private:
  void loop(int w);

  std::mutex mu_;
  std::condition_variable wake_;
  std::condition_variable done_;
  std::function<void(int)> job_;
  std::string error_;  // the first failure's message, while failed_
  bool failed_ = false;
  std::uint64_t generation_ = 0;
  int pending_ = 0;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace pass_pipeline
