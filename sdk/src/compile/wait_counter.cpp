// Wait counters: how many waits and how long, as counter tracks and in the
// current unit's record (or the runtime record).
#include "base/boundary.hpp"
#include "base/immortal.hpp"
#include "compile/state.hpp"

#include <map>

namespace jitscope::detail {
namespace {

struct WaitRegistry {
  std::mutex mutex;
  std::map<std::string, std::unique_ptr<WaitStats>, std::less<>> by_name;
};

WaitRegistry& waits() noexcept { return immortal<WaitRegistry>(); }

void sample_tracks(const WaitStats& w) noexcept {
  if (!jitscope::active()) return;
  jitscope::counter(std::string_view(w.waiting_track),
                    static_cast<double>(w.waiting.load(std::memory_order_relaxed)));
  jitscope::counter(std::string_view(w.total_track),
                    static_cast<double>(w.total_ns.load(std::memory_order_relaxed) / 1000));
}

}  // namespace

void lock_waits_for_fork() noexcept { waits().mutex.lock(); }
void unlock_waits_after_fork() noexcept { waits().mutex.unlock(); }

}  // namespace jitscope::detail

namespace jitscope {

using namespace detail;

WaitCounter::WaitCounter(std::string_view name) noexcept {
  // Failing, it counts nothing.
  guarded("creating a wait counter", [&] {
    WaitRegistry& reg = waits();
    std::lock_guard<std::mutex> lock(reg.mutex);
    auto it = reg.by_name.find(name);
    if (it == reg.by_name.end()) {
      auto w = std::make_unique<WaitStats>();
      w->name.assign(name.data(), name.size());
      w->waiting_track = w->name + ".waiting";
      w->total_track = w->name + ".wait_total_us";
      it = reg.by_name.emplace(w->name, std::move(w)).first;
    }
    stats_ = it->second.get();
  });
}

WaitCounter::Guard WaitCounter::wait() noexcept {
  if constexpr (!kCompiledIn) return Guard(nullptr, 0);
  if (stats_ == nullptr) return Guard(nullptr, 0);
  stats_->waiting.fetch_add(1, std::memory_order_relaxed);
  sample_tracks(*stats_);
  return Guard(stats_, monotonic_ns());
}

void WaitCounter::Guard::end() noexcept {
  if (stats_ == nullptr) return;
  WaitStats& w = *stats_;
  stats_ = nullptr;
  const std::uint64_t now = monotonic_ns();
  const std::uint64_t ns = now > begin_ns_ ? now - begin_ns_ : 0;
  w.count.fetch_add(1, std::memory_order_relaxed);
  w.total_ns.fetch_add(ns, std::memory_order_relaxed);
  w.waiting.fetch_sub(1, std::memory_order_relaxed);
  sample_tracks(w);
  // Failing, the counter and its tracks keep the wait; the record does not.
  guarded("adding a wait to its compile record", [&] {
    if (UnitState* unit = current_unit_state()) {
      std::lock_guard<std::mutex> lock(unit->mutex);
      if (!unit->closed) add_wait(unit->record, w.name, ns / 1000);
    } else {
      with_runtime_record(ns / 1000, [&](CompileRecord& r) { add_wait(r, w.name, ns / 1000); });
    }
  });
}

std::uint64_t WaitCounter::count() const noexcept {
  return stats_ != nullptr ? stats_->count.load(std::memory_order_relaxed) : 0;
}

std::uint64_t WaitCounter::total_ns() const noexcept {
  return stats_ != nullptr ? stats_->total_ns.load(std::memory_order_relaxed) : 0;
}

}  // namespace jitscope
