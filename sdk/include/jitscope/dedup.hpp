// jitscope — show a warning once: an LRU set of the warning keys already seen.
//
// Quickstart
//   #include <jitscope/dedup.hpp>
//
//   jitscope::DuplicateWarningChecker graph_break_warnings;  // 4096 keys
//
//   void on_graph_break(std::string_view reason) {
//     if (graph_break_warnings.add(reason)) warn(reason);  // first time only
//   }
//
// Cost: add() is one mutex lock and one hash lookup of the key (no copy of
// it); a new key also copies it into one list node and one hash entry. Memory
// is bounded by `capacity` keys: past that the least recently used key is
// forgotten, so a warning that stays quiet long enough may show again.
//
// Semantics follow PyTorch's DuplicateWarningChecker (torch/_dynamo/utils.py):
// a seen key becomes the most recently used; with `verbose` every add()
// returns true (nothing is hidden) while the LRU order is still kept.
//
// Thread-safe; nothing here throws. Out of memory, add() returns true: it is
// better to repeat a warning than to lose one. Compiled out (JITSCOPE_DISABLE)
// it keeps nothing: add() is always true, as with `verbose`.
#pragma once

#include <jitscope/detail/export.hpp>

#include <cstddef>
#include <list>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

JITSCOPE_NAMESPACE_BEGIN

inline constexpr std::size_t kDefaultDuplicateWarningCapacity = 4096;

class JITSCOPE_API DuplicateWarningChecker {
 public:
  // A capacity of 0 is treated as 1.
  explicit DuplicateWarningChecker(std::size_t capacity = kDefaultDuplicateWarningCapacity,
                                   bool verbose = false) noexcept;
  DuplicateWarningChecker(const DuplicateWarningChecker&) = delete;
  DuplicateWarningChecker& operator=(const DuplicateWarningChecker&) = delete;
  ~DuplicateWarningChecker();

  // True when `key` is new (show the warning), false when it was seen (it
  // becomes the most recently used). Always true when verbose.
  bool add(std::string_view key) noexcept;
  // Forgets every key.
  void reset() noexcept;
  std::size_t size() const noexcept;
  std::size_t capacity() const noexcept { return capacity_; }

 private:
  // Front: least recently used. The map's views point into the list's
  // strings, which never move (list nodes are stable, splice moves no data).
  using Order = std::list<std::string>;
  const std::size_t capacity_;
  const bool verbose_;
  mutable std::mutex mu_;
  Order order_;                                                  // guarded by mu_
  std::unordered_map<std::string_view, Order::iterator> index_;  // guarded by mu_
};

JITSCOPE_NAMESPACE_END

#if defined(JITSCOPE_DISABLE)
#include <jitscope/detail/disabled_dedup.hpp>
#endif
