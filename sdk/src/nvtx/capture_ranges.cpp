// The NVTX capture's push/pop ranges and marks: each thread keeps its open
// ranges on a stack of its own (their copied names in an arena), and a range
// is written whole at its pop (one kCaptured record), so it never disturbs
// jitscope's own span stack, whatever the interleaving; a mark is written at
// once. Also the slots NVTX calls for them: the host's hot path, every NVTX
// push, pop and mark it makes. See capture_state.hpp.
#include "nvtx/capture_attributes.hpp"
#include "nvtx/capture_state.hpp"

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace jitscope::detail {

constinit thread_local bool t_nvtx_emitting = false;

namespace nvtx_capture {
namespace {

int push(CapturedDomain* domain, const Attributes& a) noexcept {
  if (t_nvtx_emitting || captured_domain_is_self(domain)) return 0;
  CaptureThread* state = CaptureThreadState::get();
  if (state == nullptr) return 0;
  return quiet_in_slot(-1, [&] {  // -1: out of memory, this range is not kept
    CaptureThread& t = *state;
    if (t.stack.size() >= kMaxOpenPerThread) {
      ++t.overflow;
      if (capture_session() != 0) tally(counters().dropped);
      return static_cast<int>(t.stack.size() + t.overflow - 1);
    }
    const std::uint32_t s = capture_session();
    OpenRange r{domain,
                s,
                s != 0 ? read_clock(s) : 0,
                a.message.name,
                static_cast<std::uint32_t>(t.arena.size()),
                0,
                a.payload_type,
                a.payload,
                a.category};
    if (r.name == nullptr && s != 0) {  // a range with no session is never written
      r.name_len = static_cast<std::uint32_t>(a.message.dynamic.size());
      t.arena.append(a.message.dynamic);
    }
    t.stack.push_back(r);
    return static_cast<int>(t.stack.size() - 1);
  });
}

int pop(const CapturedDomain* domain) noexcept {
  if (t_nvtx_emitting || captured_domain_is_self(domain)) return 0;
  CaptureThread* state = CaptureThreadState::existing();
  if (state == nullptr) {  // nothing was ever pushed on this thread, or it is exiting
    if (!CaptureThreadState::gone() && capture_session() != 0) tally(counters().unbalanced_pops);
    return -1;
  }
  CaptureThread& t = *state;
  if (t.overflow > 0) {
    --t.overflow;
    return static_cast<int>(t.stack.size() + t.overflow);
  }
  // The innermost open range of this domain: NVTX nests per domain.
  std::size_t i = t.stack.size();
  while (i > 0 && t.stack[i - 1].domain != domain) --i;
  const std::uint32_t s = capture_session();
  if (i == 0) {
    if (s != 0) tally(counters().unbalanced_pops);
    return -1;
  }
  const OpenRange r = t.stack[i - 1];
  if (r.session != 0 && r.session == s) {
    CapturedEvent e;
    e.kind = CapturedKind::kRange;
    e.start_ts = r.start;
    e.end_ts = read_clock(s);
    e.name = r.name;
    if (r.name == nullptr)
      e.dynamic_name = std::string_view(t.arena).substr(r.name_off, r.name_len);
    e.domain = r.domain;
    e.payload_type = r.payload_type;
    e.payload = r.payload;
    e.category = r.category;
    emit_captured(s, e);  // a full ring counts it in events_dropped
  } else if (s != 0) {
    tally(counters().dropped);  // pushed before this session began
  }
  t.stack.erase(t.stack.begin() + static_cast<std::ptrdiff_t>(i - 1));
  // The arena holds the copied names of the ranges still open, in push
  // order: it ends where the last of them ends.
  std::size_t keep = 0;
  for (std::size_t k = t.stack.size(); k > 0; --k) {
    if (t.stack[k - 1].name == nullptr) {
      keep = t.stack[k - 1].name_off + t.stack[k - 1].name_len;
      break;
    }
  }
  t.arena.resize(keep);
  return static_cast<int>(t.stack.size());
}

void mark(const CapturedDomain* domain, const Attributes& a) noexcept {
  if (t_nvtx_emitting || captured_domain_is_self(domain)) return;
  const std::uint32_t s = capture_session();
  if (s == 0) return;
  CapturedEvent e;
  e.kind = CapturedKind::kMark;
  e.start_ts = e.end_ts = read_clock(s);
  e.name = a.message.name;
  e.dynamic_name = a.message.dynamic;
  e.domain = domain;
  e.payload_type = a.payload_type;
  e.payload = a.payload;
  e.category = a.category;
  emit_captured(s, e);
}

// ---- the slots ----

void NVTX_API core_mark_ex(const nvtxEventAttributes_t* a) noexcept {
  quiet_in_slot([&] { mark(captured_default_domain(), read_attributes(a)); });
}
void NVTX_API core_mark_a(const char* s) noexcept {
  mark(captured_default_domain(), message_only(ascii_message(s)));
}
void NVTX_API core_mark_w(const wchar_t* s) noexcept {
  quiet_in_slot([&] { mark(captured_default_domain(), message_only(wide_message(s))); });
}
int NVTX_API core_range_push_ex(const nvtxEventAttributes_t* a) noexcept {
  return quiet_in_slot(-1, [&] { return push(captured_default_domain(), read_attributes(a)); });
}
int NVTX_API core_range_push_a(const char* s) noexcept {
  return push(captured_default_domain(), message_only(ascii_message(s)));
}
int NVTX_API core_range_push_w(const wchar_t* s) noexcept {
  return quiet_in_slot(
      -1, [&] { return push(captured_default_domain(), message_only(wide_message(s))); });
}
int NVTX_API core_range_pop() noexcept { return pop(captured_default_domain()); }

void NVTX_API domain_mark_ex(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a) noexcept {
  quiet_in_slot([&] { mark(domain_of(d), read_attributes(a)); });
}
int NVTX_API domain_range_push_ex(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a) noexcept {
  return quiet_in_slot(-1, [&] { return push(domain_of(d), read_attributes(a)); });
}
int NVTX_API domain_range_pop(nvtxDomainHandle_t d) noexcept { return pop(domain_of(d)); }

}  // namespace

void add_range_slots(SlotTables& t) noexcept {
  t.core[NVTX_CBID_CORE_MarkEx] = slot(&core_mark_ex);
  t.core[NVTX_CBID_CORE_MarkA] = slot(&core_mark_a);
  t.core[NVTX_CBID_CORE_MarkW] = slot(&core_mark_w);
  t.core[NVTX_CBID_CORE_RangePushEx] = slot(&core_range_push_ex);
  t.core[NVTX_CBID_CORE_RangePushA] = slot(&core_range_push_a);
  t.core[NVTX_CBID_CORE_RangePushW] = slot(&core_range_push_w);
  t.core[NVTX_CBID_CORE_RangePop] = slot(&core_range_pop);
  t.core2[NVTX_CBID_CORE2_DomainMarkEx] = slot(&domain_mark_ex);
  t.core2[NVTX_CBID_CORE2_DomainRangePushEx] = slot(&domain_range_push_ex);
  t.core2[NVTX_CBID_CORE2_DomainRangePop] = slot(&domain_range_pop);
}

}  // namespace nvtx_capture
}  // namespace jitscope::detail
