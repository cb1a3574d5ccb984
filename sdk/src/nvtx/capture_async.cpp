// The NVTX capture's start/end ranges: a range may end on another thread,
// so a process-wide map keeps each from its start to its end, under ids that
// carry the session's generation (an id from an earlier session is told
// apart from one never started). Also the slots NVTX calls for them. See
// capture_state.hpp.
#include "nvtx/capture_attributes.hpp"
#include "nvtx/capture_state.hpp"

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>

namespace jitscope::detail::nvtx_capture {

namespace {

// A start/end range in flight.
struct OpenAsync {
  std::uint64_t start;
  int tid;
  const CapturedDomain* domain;
  const char* name;
  std::string dynamic_name;
  ValueType payload_type;
  std::uint64_t payload;
  std::uint32_t category;
};
constexpr std::size_t kMaxOpenAsync = 1u << 20;
// Range ids: session generation in bits 40..61, a counter below; bit 62 set
// when the range was not tracked (no session, or too many open), so its end
// is expected to be unknown.
constexpr std::uint64_t kUntrackedBit = std::uint64_t{1} << 62;
constexpr unsigned kIdGenerationShift = 40;
struct AsyncMap {
  std::mutex mutex;
  std::unordered_map<std::uint64_t, OpenAsync> open;
  std::atomic<std::uint64_t> next{1};
};
struct AsyncTag;
AsyncMap& async_map() noexcept { return immortal<AsyncMap, AsyncTag>(); }

// The low 22 bits of the session's generation (its full 30 do not fit
// beside the 40-bit counter and the untracked bit); sessions 4 M apart could
// share them, which only matters for a range left open that long.
std::uint64_t generation_of(std::uint32_t session) noexcept {
  return (session >> kSessionGenerationShift) & ((1u << 22) - 1);
}

nvtxRangeId_t range_start(const CapturedDomain* domain, const Attributes& a) noexcept {
  AsyncMap& m = async_map();
  // relaxed: ids only need to be unique.
  const std::uint64_t n = m.next.fetch_add(1, std::memory_order_relaxed) &
                          ((std::uint64_t{1} << kIdGenerationShift) - 1);
  const std::uint32_t s =
      t_nvtx_emitting || captured_domain_is_self(domain) ? 0 : capture_session();
  if (s == 0) return n | kUntrackedBit;
  const std::uint64_t id = (generation_of(s) << kIdGenerationShift) | n;
  std::uint64_t out = id | kUntrackedBit;
  // Quiet: out of memory is counted as dropped, in the session's stats.
  if (!guarded_quiet([&] {
        OpenAsync open{read_clock(s),  thread_tid(), domain,    a.message.name, {},
                       a.payload_type, a.payload,    a.category};
        if (open.name == nullptr) open.dynamic_name.assign(a.message.dynamic);
        std::lock_guard<std::mutex> lock(m.mutex);
        if (m.open.size() >= kMaxOpenAsync) {
          tally(counters().dropped);
          return;
        }
        m.open.emplace(id, std::move(open));
        out = id;
      })) {
    tally(counters().dropped);
  }
  return out;
}

void range_end(nvtxRangeId_t id) noexcept {
  if (t_nvtx_emitting) return;
  if ((id & kUntrackedBit) != 0) return;  // started with no session: nothing to write
  const std::uint32_t s = capture_session();
  AsyncMap& m = async_map();
  OpenAsync open;
  bool found = false;
  // Quiet, as an event slot (quiet_in_slot): only locking can throw here,
  // and the end is then not written.
  if (!guarded_quiet([&] {
        std::lock_guard<std::mutex> lock(m.mutex);
        if (auto it = m.open.find(id); it != m.open.end()) {
          open = std::move(it->second);
          m.open.erase(it);
          found = true;
        }
      })) {
    return;
  }
  if (s == 0) return;
  const std::uint64_t generation = id >> kIdGenerationShift;
  if (generation != generation_of(s)) {
    // Ids carry the generation of the session that started them (never 0):
    // one from an earlier session lost its entry when this one began.
    tally(generation != 0 ? counters().dropped : counters().unknown_ends);
    return;
  }
  if (!found) {
    tally(counters().unknown_ends);  // never started, or ended twice
    return;
  }
  CapturedEvent e;
  e.kind = CapturedKind::kAsyncRange;
  e.start_ts = open.start;
  e.end_ts = read_clock(s);
  e.name = open.name;
  e.dynamic_name = open.dynamic_name;
  e.domain = open.domain;
  e.payload_type = open.payload_type;
  e.payload = open.payload;
  e.category = open.category;
  // The counter part only: unique within the session (the file), and below
  // 2^53, so JSON readers that parse numbers as doubles keep it exact.
  e.id = id & ((std::uint64_t{1} << kIdGenerationShift) - 1);
  e.tid = open.tid;
  emit_captured(s, e);
}

// ---- the slots ----

nvtxRangeId_t NVTX_API core_range_start_ex(const nvtxEventAttributes_t* a) noexcept {
  return quiet_in_slot(nvtxRangeId_t{0},
                       [&] { return range_start(captured_default_domain(), read_attributes(a)); });
}
nvtxRangeId_t NVTX_API core_range_start_a(const char* s) noexcept {
  return range_start(captured_default_domain(), message_only(ascii_message(s)));
}
nvtxRangeId_t NVTX_API core_range_start_w(const wchar_t* s) noexcept {
  return quiet_in_slot(nvtxRangeId_t{0}, [&] {
    return range_start(captured_default_domain(), message_only(wide_message(s)));
  });
}
void NVTX_API core_range_end(nvtxRangeId_t id) noexcept { range_end(id); }

nvtxRangeId_t NVTX_API domain_range_start_ex(nvtxDomainHandle_t d,
                                             const nvtxEventAttributes_t* a) noexcept {
  return quiet_in_slot(nvtxRangeId_t{0},
                       [&] { return range_start(domain_of(d), read_attributes(a)); });
}
void NVTX_API domain_range_end(nvtxDomainHandle_t, nvtxRangeId_t id) noexcept { range_end(id); }

}  // namespace

void add_async_slots(SlotTables& t) noexcept {
  t.core[NVTX_CBID_CORE_RangeStartEx] = slot(&core_range_start_ex);
  t.core[NVTX_CBID_CORE_RangeStartA] = slot(&core_range_start_a);
  t.core[NVTX_CBID_CORE_RangeStartW] = slot(&core_range_start_w);
  t.core[NVTX_CBID_CORE_RangeEnd] = slot(&core_range_end);
  t.core2[NVTX_CBID_CORE2_DomainRangeStartEx] = slot(&domain_range_start_ex);
  t.core2[NVTX_CBID_CORE2_DomainRangeEnd] = slot(&domain_range_end);
}

void forget_open_async_ranges() noexcept {
  AsyncMap& m = async_map();
  std::lock_guard<std::mutex> lock(m.mutex);
  m.open.clear();
}
void lock_async_ranges_for_fork() noexcept { async_map().mutex.lock(); }
void unlock_async_ranges_after_fork() noexcept { async_map().mutex.unlock(); }

}  // namespace jitscope::detail::nvtx_capture
