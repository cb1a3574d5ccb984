// The parts of gpu_activity.hpp that are code: the interned compile-unit
// tags and kernel names (the collector's API callback makes them; the
// flusher reads them) and the collector's count differences.
#include "cupti/gpu_activity.hpp"

#include "base/immortal.hpp"

#include <mutex>
#include <set>

namespace jitscope::detail {
namespace {

struct UnitTagLess {
  bool operator()(const GpuUnitTag& a, const GpuUnitTag& b) const { return key(a) < key(b); }
  static std::pair<std::uint64_t, std::string_view> key(const GpuUnitTag& t) {
    return {t.packed_id, t.display};
  }
};
struct UnitTags {
  std::mutex mutex;
  std::set<GpuUnitTag, UnitTagLess> tags;           // node-based: element addresses are stable
  std::set<std::string, std::less<>> kernel_names;  // likewise; under the same mutex
  std::size_t kernel_name_bytes = 0;
};
}  // namespace

void lock_unit_tags_for_fork() noexcept { immortal<UnitTags>().mutex.lock(); }
void unlock_unit_tags_after_fork() noexcept { immortal<UnitTags>().mutex.unlock(); }

const GpuUnitTag* intern_unit_tag(std::uint64_t packed_id, std::string_view display) {
  UnitTags& t = immortal<UnitTags>();
  std::lock_guard<std::mutex> lock(t.mutex);
  return &*t.tags.insert(GpuUnitTag{packed_id, std::string(display)}).first;
}

const std::string* intern_kernel_name(std::string_view name) {
  if (name.empty()) return nullptr;
  UnitTags& t = immortal<UnitTags>();
  std::lock_guard<std::mutex> lock(t.mutex);
  if (auto it = t.kernel_names.find(name); it != t.kernel_names.end()) return &*it;
  if (t.kernel_name_bytes + name.size() > kMaxKernelNameBytes) return nullptr;
  t.kernel_name_bytes += name.size();
  return &*t.kernel_names.emplace(name).first;
}

GpuCollectorCounts GpuCollectorCounts::operator-(const GpuCollectorCounts& o) const noexcept {
  GpuCollectorCounts d;
  d.buffers_completed = buffers_completed - o.buffers_completed;
  d.records = records - o.records;
  d.records_skipped = records_skipped - o.records_skipped;
  d.records_unreadable = records_unreadable - o.records_unreadable;
  d.buffers_truncated = buffers_truncated - o.buffers_truncated;
  d.cupti_dropped = cupti_dropped - o.cupti_dropped;
  d.pool_exhausted = pool_exhausted - o.pool_exhausted;
  d.records_stale = records_stale - o.records_stale;
  return d;
}

}  // namespace jitscope::detail
