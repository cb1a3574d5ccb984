#include <jitscope/dedup.hpp>

#include "base/boundary.hpp"

#include <iterator>

namespace jitscope {

DuplicateWarningChecker::DuplicateWarningChecker(std::size_t capacity, bool verbose) noexcept
    : capacity_(capacity == 0 ? 1 : capacity), verbose_(verbose) {}

DuplicateWarningChecker::~DuplicateWarningChecker() = default;

bool DuplicateWarningChecker::add(std::string_view key) noexcept {
  std::lock_guard<std::mutex> lock(mu_);
  if (auto it = index_.find(key); it != index_.end()) {
    order_.splice(order_.end(), order_, it->second);  // most recently used; no throw
    return verbose_;
  }
  // Quiet on failure: log_unique itself asks this checker, so a line about
  // it could recurse. Out of memory shows the warning and remembers nothing.
  if (!detail::guarded_quiet([&] { order_.emplace_back(key); })) return true;
  if (!detail::guarded_quiet(
          [&] { index_.emplace(std::string_view(order_.back()), std::prev(order_.end())); })) {
    order_.pop_back();
    return true;
  }
  while (order_.size() > capacity_) {
    index_.erase(std::string_view(order_.front()));
    order_.pop_front();
  }
  return true;
}

void DuplicateWarningChecker::reset() noexcept {
  std::lock_guard<std::mutex> lock(mu_);
  index_.clear();
  order_.clear();
}

std::size_t DuplicateWarningChecker::size() const noexcept {
  std::lock_guard<std::mutex> lock(mu_);
  return order_.size();
}

}  // namespace jitscope
