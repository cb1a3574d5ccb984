// Producer side: what an instrumented thread does per event, out of line.
// Every path is bounded: it pushes into the thread's own ring or drops and
// counts; only kBlock waits, and it gives up when the session ends.
#include "log.hpp"
#include "session_params.hpp"
#include "thread_registry.hpp"

#include <jitscope/jitscope.hpp>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace jitscope::detail {
namespace {

void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#endif
}

// Room for `need` records beyond the End records already owed. kBlock waits
// for the flusher; it gives up when the session ends or `need` can never fit.
bool make_room(ThreadState& t, std::size_t need) noexcept {
  const std::size_t want = need + t.owed;
  if (want > t.ring.capacity()) return false;
  if (t.ring.write_available() >= want) return true;
  if (t.policy == OverflowPolicy::kDrop) return false;
  for (unsigned spin = 0;; ++spin) {
    if (session_word() != t.session) return false;
    if (t.ring.write_available() >= want) return true;
    if (spin < 256) {
      cpu_relax();
    } else {
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  }
}

std::size_t clamp_payload(ThreadState& t, std::size_t len, std::uint8_t& flags) noexcept {
  if (len <= t.max_payload_bytes) return len;
  flags |= kFlagTruncated;
  bump(t.truncated);
  return t.max_payload_bytes;
}

// Pushes `bytes` as raw payload slots right after their record. Room was made.
void push_payload(ThreadState& t, const char* bytes, std::size_t len) noexcept {
  Record batch[16];
  while (len > 0) {
    const std::size_t chunk = std::min(len, sizeof batch);
    std::memset(static_cast<void*>(batch), 0, sizeof batch);
    std::memcpy(static_cast<void*>(batch), bytes, chunk);
    t.ring.push(batch, payload_slots(chunk));
    bytes += chunk;
    len -= chunk;
  }
}

std::size_t arg_payload(ThreadState& t, const Arg& a, std::uint8_t& flags) noexcept {
  return a.type == ValueType::kString ? clamp_payload(t, a.str.size(), flags) : 0;
}

void push_arg(ThreadState& t, const Arg& a, std::size_t payload, std::uint8_t flags,
              std::uint8_t index) noexcept {
  Record r{};
  r.name = a.key;
  r.kind = RecordKind::kArg;
  r.type = a.type;
  r.flags = flags;
  r.index = index;
  switch (a.type) {
    case ValueType::kInt: r.value.i64 = a.i64; break;
    case ValueType::kUint: r.value.u64 = a.u64; break;
    case ValueType::kDouble: r.value.f64 = a.f64; break;
    case ValueType::kBool: r.value.u64 = a.b ? 1 : 0; break;
    case ValueType::kString: r.value.u64 = payload; break;
    case ValueType::kNone: break;
  }
  t.ring.push(r);
  if (payload != 0) push_payload(t, a.str.data(), payload);
}

bool depth_recorded(const ThreadState& t, std::uint32_t d) noexcept {
  return d < 256 && ((t.recorded_bits[d / 64] >> (d % 64)) & 1u) != 0;
}
void set_depth_recorded(ThreadState& t, std::uint32_t d, bool on) noexcept {
  if (d >= 256) return;
  const std::uint64_t bit = std::uint64_t{1} << (d % 64);
  if (on) {
    t.recorded_bits[d / 64] |= bit;
  } else {
    t.recorded_bits[d / 64] &= ~bit;
  }
}

SpanToken begin(std::uint32_t session, std::uint64_t ts, const char* name,
                std::string_view dynamic_name) noexcept {
  ThreadState* t = current_thread_state(session);
  if (t == nullptr) return {};
  const std::uint32_t d = t->depth++;
  std::uint8_t flags = name == nullptr ? kFlagDynamicName : 0;
  const std::size_t name_len = name == nullptr ? clamp_payload(*t, dynamic_name.size(), flags) : 0;
  // 2: this Begin and its End, reserved now so that an End never fails.
  if (d >= 256 || t->owed >= kMaxRecordedDepth || !make_room(*t, 2 + payload_slots(name_len))) {
    set_depth_recorded(*t, d, false);
    bump(t->dropped);
    return {session, 0, false};
  }
  Record r{};
  r.ts = ts;
  r.name = name;
  r.name_len = static_cast<std::uint32_t>(name_len);
  r.kind = RecordKind::kBegin;
  r.flags = flags;
  r.index = static_cast<std::uint8_t>(t->owed);
  t->ring.push(r);
  if (name_len != 0) push_payload(*t, dynamic_name.data(), name_len);
  set_depth_recorded(*t, d, true);
  return {session, static_cast<std::uint8_t>(t->owed++), true};
}

}  // namespace

SpanToken begin_static(std::uint32_t session, std::uint64_t ts, const char* name) noexcept {
  return begin(session, ts, name, {});
}

SpanToken begin_dynamic(std::uint32_t session, std::uint64_t ts, std::string_view name) noexcept {
  return begin(session, ts, nullptr, name);
}

void end_span(std::uint32_t session, std::uint64_t ts) noexcept {
  ThreadState* t = current_thread_state_if_registered();
  if (t == nullptr || t->session != session) return;  // began in an earlier session
  if (t->depth == 0) {
    bump(t->unbalanced_ends);
    return;
  }
  const std::uint32_t d = --t->depth;
  if (!depth_recorded(*t, d)) return;
  set_depth_recorded(*t, d, false);
  Record r{};
  r.ts = ts;
  r.kind = RecordKind::kEnd;
  // The Begin reserved this slot (make_room keeps `owed` slots free), so
  // this push cannot fail; count it anyway rather than assume.
  if (!t->ring.push(r)) bump(t->dropped);
  --t->owed;
}

void add_arg(const SpanToken& token, const Arg& arg) noexcept {
  ThreadState* t = current_thread_state_if_registered();
  if (t == nullptr || t->session != token.session || token.index >= t->owed) return;
  std::uint8_t flags = 0;
  const std::size_t payload = arg_payload(*t, arg, flags);
  if (!make_room(*t, 1 + payload_slots(payload))) {
    bump(t->args_dropped);
    return;
  }
  push_arg(*t, arg, payload, flags, token.index);
}

void instant(std::uint32_t session, std::uint64_t ts, const char* name,
             std::string_view dynamic_name, const Arg* args, std::size_t arg_count) noexcept {
  ThreadState* t = current_thread_state(session);
  if (t == nullptr) return;
  arg_count = std::min<std::size_t>(arg_count, 255);
  std::uint8_t flags = name == nullptr ? kFlagDynamicName : 0;
  const std::size_t name_len = name == nullptr ? clamp_payload(*t, dynamic_name.size(), flags) : 0;
  std::size_t need = 1 + payload_slots(name_len);
  std::uint8_t arg_flags[255];
  std::size_t arg_payloads[255];
  for (std::size_t i = 0; i < arg_count; ++i) {
    arg_flags[i] = 0;
    arg_payloads[i] = arg_payload(*t, args[i], arg_flags[i]);
    need += 1 + payload_slots(arg_payloads[i]);
  }
  if (!make_room(*t, need)) {
    bump(t->dropped);
    return;
  }
  Record r{};
  r.ts = ts;
  r.name = name;
  r.name_len = static_cast<std::uint32_t>(name_len);
  r.kind = RecordKind::kInstant;
  r.flags = flags;
  r.index = static_cast<std::uint8_t>(arg_count);
  t->ring.push(r);
  if (name_len != 0) push_payload(*t, dynamic_name.data(), name_len);
  for (std::size_t i = 0; i < arg_count; ++i) push_arg(*t, args[i], arg_payloads[i], arg_flags[i], 0);
}

void counter(std::uint32_t session, std::uint64_t ts, const char* name,
             std::string_view dynamic_name, double value) noexcept {
  ThreadState* t = current_thread_state(session);
  if (t == nullptr) return;
  std::uint8_t flags = name == nullptr ? kFlagDynamicName : 0;
  const std::size_t name_len = name == nullptr ? clamp_payload(*t, dynamic_name.size(), flags) : 0;
  if (!make_room(*t, 1 + payload_slots(name_len))) {
    bump(t->dropped);
    return;
  }
  Record r{};
  r.ts = ts;
  r.name = name;
  r.value.f64 = value;
  r.name_len = static_cast<std::uint32_t>(name_len);
  r.kind = RecordKind::kCounter;
  r.type = ValueType::kDouble;
  r.flags = flags;
  t->ring.push(r);
  if (name_len != 0) push_payload(*t, dynamic_name.data(), name_len);
}

}  // namespace jitscope::detail

namespace jitscope {

void set_thread_name(std::string_view name) noexcept {
  try {
    detail::remember_thread_name(name);
  } catch (...) {
    return;  // out of memory: keep the old name
  }
  const std::uint32_t s = detail::session_word();
  if (s == 0) return;
  detail::ThreadState* t = detail::current_thread_state(s);
  if (t == nullptr) return;
  std::uint8_t flags = detail::kFlagDynamicName;
  const std::size_t len = detail::clamp_payload(*t, name.size(), flags);
  if (!detail::make_room(*t, 1 + detail::payload_slots(len))) {
    detail::bump(t->args_dropped);
    return;
  }
  detail::Record r{};
  r.name_len = static_cast<std::uint32_t>(len);
  r.kind = detail::RecordKind::kThreadName;
  r.flags = flags;
  t->ring.push(r);
  detail::push_payload(*t, name.data(), len);
}

}  // namespace jitscope
