// The names registry (captured_names.hpp).
#include "nvtx/captured_names.hpp"

#include "base/boundary.hpp"
#include "base/immortal.hpp"

#include <memory>
#include <mutex>
#include <unordered_map>
#include <unordered_set>

namespace jitscope::detail {

struct CapturedDomain {
  std::string name;
  bool self = false;
  // Guarded by the registry mutex. Node-based containers: an element's
  // address (and its c_str) never moves.
  std::unordered_set<std::string> strings;
  std::unordered_map<std::uint32_t, std::string> categories;
};

namespace {

constexpr std::string_view kSelfDomain = "jitscope";
constexpr const char* kTooManyStrings = "<too many registered strings>";

struct Registry {
  std::mutex mutex;
  std::unordered_map<std::string, CapturedDomain*> domains;  // erased only if its domain failed
  CapturedDomain default_domain{"nvtx", false, {}, {}};
  std::size_t strings = 0;
};
struct RegistryTag;
Registry& registry() noexcept { return immortal<Registry, RegistryTag>(); }

}  // namespace

CapturedDomain* captured_default_domain() noexcept { return &registry().default_domain; }

CapturedDomain* captured_domain(std::string_view name) noexcept {
  Registry& r = registry();
  CapturedDomain* out = nullptr;
  (void)guarded(kCreatingCapturedDomain, [&] {
    std::lock_guard<std::mutex> lock(r.mutex);
    const auto emplaced = r.domains.try_emplace(std::string(name), nullptr);
    const auto it = emplaced.first;
    if (emplaced.second && !guarded(kCreatingCapturedDomain, [&] {
          auto d = std::make_unique<CapturedDomain>();
          d->name = it->first;
          d->self = name == kSelfDomain;
          it->second = d.release();  // never freed: records point at it
        })) {
      r.domains.erase(it);  // no name without its domain
      return;
    }
    out = it->second;
  });
  return out;
}

const char* captured_domain_name(const CapturedDomain* domain) noexcept {
  return domain != nullptr ? domain->name.c_str() : "nvtx";
}

bool captured_domain_is_self(const CapturedDomain* domain) noexcept {
  return domain != nullptr && domain->self;
}

const char* captured_string(CapturedDomain* domain, std::string_view text) noexcept {
  if (domain == nullptr) domain = captured_default_domain();
  Registry& r = registry();
  const char* out = kTooManyStrings;  // past the cap, or out of memory
  (void)guarded(kRegisteringCapturedString, [&] {
    std::lock_guard<std::mutex> lock(r.mutex);
    const std::string key(text);
    if (auto it = domain->strings.find(key); it != domain->strings.end()) {
      out = it->c_str();
    } else if (r.strings < kMaxCapturedStrings) {
      out = domain->strings.insert(key).first->c_str();
      ++r.strings;
    }
  });
  return out;
}

void name_captured_category(CapturedDomain* domain, std::uint32_t id,
                            std::string_view name) noexcept {
  if (domain == nullptr) domain = captured_default_domain();
  Registry& r = registry();
  (void)guarded(kNamingCapturedCategory, [&] {
    std::lock_guard<std::mutex> lock(r.mutex);
    if (r.strings >= kMaxCapturedStrings && !domain->categories.contains(id)) return;
    auto [it, added] = domain->categories.try_emplace(id);
    it->second.assign(name.data(), name.size());
    if (added) ++r.strings;
  });
}

bool captured_category_name(const CapturedDomain* domain, std::uint32_t id, std::string& out,
                            bool try_only) {
  if (domain == nullptr) domain = captured_default_domain();
  Registry& r = registry();
  std::unique_lock<std::mutex> lock(r.mutex, std::defer_lock);
  if (!try_only) {
    lock.lock();
  } else if (!lock.try_lock()) {
    return false;
  }
  auto it = domain->categories.find(id);
  if (it == domain->categories.end()) return false;
  out = it->second;
  return true;
}

void lock_captured_names_for_fork() noexcept { registry().mutex.lock(); }
void unlock_captured_names_after_fork() noexcept { registry().mutex.unlock(); }

std::size_t captured_string_count() noexcept {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  return r.strings;
}

}  // namespace jitscope::detail
