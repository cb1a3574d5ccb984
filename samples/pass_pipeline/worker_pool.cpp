// The codegen worker pool (see worker_pool.hpp).
#include "worker_pool.hpp"

#include <jitscope/jitscope.hpp>

#include <exception>
#include <stdexcept>
#include <utility>

namespace pass_pipeline {

WorkerPool::WorkerPool(int workers) {
  for (int w = 0; w < workers; ++w) threads_.emplace_back([this, w] { loop(w); });
}

WorkerPool::~WorkerPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (auto& t : threads_) t.join();
}

void WorkerPool::start(std::function<void(int)> job) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    job_ = std::move(job);
    pending_ = size();
    error_.clear();
    failed_ = false;
    ++generation_;
  }
  wake_.notify_all();
}

void WorkerPool::wait() {
  std::unique_lock<std::mutex> lock(mu_);
  done_.wait(lock, [this] { return pending_ == 0; });
  if (failed_) {
    failed_ = false;
    throw std::runtime_error(std::exchange(error_, std::string()));
  }
}

void WorkerPool::loop(int w) {
  JITSCOPE_THREAD_NAME("codegen-worker-" + std::to_string(w));
  std::uint64_t seen = 0;
  for (;;) {
    std::function<void(int)> job;
    {
      std::unique_lock<std::mutex> lock(mu_);
      wake_.wait(lock, [&] { return stopping_ || generation_ != seen; });
      if (generation_ == seen) return;  // stopping, nothing left to do
      seen = generation_;
      job = job_;
    }
    bool failed = false;
    std::string error;
    try {
      job(w);
    } catch (const std::exception& e) {
      failed = true;
      error = e.what();
    } catch (...) {
      failed = true;
      error = "unknown error in a codegen worker";
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (failed && !failed_) {
        failed_ = true;
        error_ = std::move(error);
      }
      --pending_;
    }
    done_.notify_all();
  }
}

}  // namespace pass_pipeline
