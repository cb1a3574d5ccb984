// Names kept for the process, for adapters whose names arrive as views
// that are stable but not NUL-terminated (LLVM's pass names: StringRefs
// into __PRETTY_FUNCTION__): a span then takes the static-name path (the
// name stored by pointer) instead of copying its bytes into the ring. The
// callers keep a per-thread cache in front of it (adapter_stack.hpp).
#include "ring/stable_names.hpp"

#include <jitscope/detail/hot.hpp>

#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_set>

namespace jitscope::detail {
namespace {

// Bounded: past it, callers copy their names as before.
constexpr std::size_t kMaxNames = 16384;
constexpr std::size_t kMaxNameBytes = 4u << 20;

// Looked up by a view: no string made for a name already kept.
struct ViewHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const noexcept {
    return std::hash<std::string_view>{}(s);
  }
};

struct Table {
  std::mutex mutex;  // a leaf: nothing else is taken under it
  // Node-based: a name's address never moves.
  std::unordered_set<std::string, ViewHash, std::equal_to<>> names;
  std::size_t bytes = 0;
};
Table& table() noexcept {
  static Table* const t = new Table;  // never freed: its names outlive every thread
  return *t;
}

}  // namespace

const char* stable_name(std::string_view name) noexcept {
  if (name.empty() || name.find('\0') != std::string_view::npos) return nullptr;
  try {
    Table& t = table();
    std::lock_guard<std::mutex> lock(t.mutex);
    if (auto it = t.names.find(name); it != t.names.end()) return it->c_str();
    if (t.names.size() >= kMaxNames || t.bytes + name.size() > kMaxNameBytes) return nullptr;
    t.bytes += name.size() + 1;
    return t.names.emplace(name).first->c_str();
  } catch (...) {  // out of memory: the caller copies the name as before
    return nullptr;
  }
}

void stable_names_lock_for_fork() noexcept { table().mutex.lock(); }
void stable_names_unlock_after_fork() noexcept { table().mutex.unlock(); }

}  // namespace jitscope::detail
