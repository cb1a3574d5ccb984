// Producer side: what an instrumented thread does per event, out of line.
// Every path is bounded: it pushes into the thread's own ring or drops and
// counts; only kBlock waits, and it gives up when the session ends.
#include "ring/producer.hpp"
#include "base/log.hpp"
#include "ring/session_params.hpp"
#include "ring/span_mirror.hpp"
#include "ring/thread_registry.hpp"

#include <jitscope/jitscope.hpp>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace jitscope::detail {

SessionParams& session_params() noexcept {
  static SessionParams params;
  return params;
}

namespace {

void mirror_pop() noexcept {
  if (const SpanMirror* m = span_mirror()) m->pop();
}

void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#endif
}

// relaxed: a switch tests set before their session starts.
std::atomic<bool> g_wake_at_half{true};

[[gnu::noinline]] bool make_room_slow(ThreadState& t, std::size_t need) noexcept {
  const std::size_t want = need + t.owed();
  const bool past_half = t.ring.refresh_room_early(want);
  if (t.ring.producer().fits(want)) {
    // Half full: the flusher comes now, not at its interval, so that a
    // burst is drained before the ring overflows. Once per half ring at
    // most (the limit is now the ring's end); a full ring's drops do not
    // wake it again and again.
    if (past_half && g_wake_at_half.load(std::memory_order_relaxed)) {
      if (void (*wake)() = session_params().wake_flusher.load(std::memory_order_relaxed)) wake();
    }
    return true;
  }
  if (want > t.ring.capacity() || t.policy == OverflowPolicy::kDrop) return false;
  // One wake per wait: a wake during the flusher's cycle makes its next
  // sleep return at once, so none is lost.
  if (void (*wake)() = session_params().wake_flusher.load(std::memory_order_relaxed)) wake();
  for (unsigned spin = 0;; ++spin) {
    if (session_word() != t.session) return false;
    if (t.ring.has_room(want)) return true;
    if (spin < 256) {
      cpu_relax();
    } else {
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  }
}

// Room for `need` records beyond the End records already owed (`owed`, when
// the caller has t.owed() at hand). kBlock waits for the flusher; it gives
// up when the session ends or `need` can never fit.
JITSCOPE_ALWAYS_INLINE bool make_room(ThreadState& t, std::size_t need,
                                      std::uint32_t owed) noexcept {
  if (t.ring.producer().fits(need + owed)) [[likely]]
    return true;
  return make_room_slow(t, need);
}
JITSCOPE_ALWAYS_INLINE bool make_room(ThreadState& t, std::size_t need) noexcept {
  return make_room(t, need, t.owed());
}

std::size_t clamp_payload(ThreadState& t, std::size_t len, std::uint8_t& flags) noexcept {
  if (len <= t.max_payload_bytes) return len;
  flags |= kFlagTruncated;
  bump(t.truncated);
  return t.max_payload_bytes;
}

// Every field is written: slots are reused, and payload bytes leave garbage.
JITSCOPE_ALWAYS_INLINE void fill(Record& r, std::uint64_t ts, const char* name, std::uint64_t value,
                                 std::uint32_t name_len, RecordKind kind, ValueType type,
                                 std::uint8_t flags, std::uint8_t index) noexcept {
  r.ts = ts;
  r.name = name;
  r.value.u64 = value;
  r.name_len = name_len;
  r.kind = kind;
  r.type = type;
  r.flags = flags;
  r.index = index;
}

// Copies `len` bytes into the slots starting at offset `first` (uncommitted);
// returns the offset after them.
std::size_t write_payload(ThreadState& t, std::size_t first, const char* bytes,
                          std::size_t len) noexcept {
  while (len > 0) {
    const std::size_t chunk = std::min(len, kRecordBytes);
    std::memcpy(static_cast<void*>(&t.ring.slot(first++)), bytes, chunk);
    bytes += chunk;
    len -= chunk;
  }
  return first;
}

// Payload bytes of an event's name: none for a static name; a dynamic one is
// flagged and clamped.
std::size_t name_payload(ThreadState& t, const char* name, std::string_view dynamic_name,
                         std::uint8_t& flags) noexcept {
  if (name != nullptr) return 0;
  flags |= kFlagDynamicName;
  return clamp_payload(t, dynamic_name.size(), flags);
}

// Writes the name bytes after the record in slot 0; returns the slots used.
std::size_t write_name(ThreadState& t, std::string_view dynamic_name,
                       std::size_t name_len) noexcept {
  return name_len != 0 ? write_payload(t, 1, dynamic_name.data(), name_len) : 1;
}

// An arg's string bytes (0 for other types); a short string is flagged to
// travel inside its record (kFlagInlineString).
// `count_cut` false: a cut string is flagged but not counted (the caller
// counts it if the arg is written).
std::size_t arg_payload(ThreadState& t, const Arg& a, std::uint8_t& flags,
                        bool count_cut = true) noexcept {
  if (a.type != ValueType::kString) return 0;
  std::size_t len = a.str.size();
  if (len > t.max_payload_bytes) {
    if (count_cut) {
      len = clamp_payload(t, len, flags);
    } else {
      flags |= kFlagTruncated;
      len = t.max_payload_bytes;
    }
  }
  if (len <= kInlineStringBytes) flags |= kFlagInlineString;
  return len;
}

// The slots an arg takes with its payload.
std::size_t arg_slots(std::size_t payload, std::uint8_t flags) noexcept {
  return 1 + ((flags & kFlagInlineString) != 0 ? 0 : payload_slots(payload));
}

// Sizes `count` args for one write: each one's string bytes and flags, as
// arg_payload gives them; returns the slots they take together.
std::size_t measure_args(ThreadState& t, const Arg* args, std::size_t count, std::size_t* bytes,
                         std::uint8_t* flags, bool count_cut = true) noexcept {
  std::size_t need = 0;
  for (std::size_t i = 0; i < count; ++i) {
    flags[i] = 0;
    bytes[i] = arg_payload(t, args[i], flags[i], count_cut);
    need += arg_slots(bytes[i], flags[i]);
  }
  return need;
}

// Writes an arg record and its payload at offset `at`; returns the offset after.
std::size_t write_arg(ThreadState& t, std::size_t at, const Arg& a, std::size_t payload,
                      std::uint8_t flags, std::uint8_t index) noexcept {
  if ((flags & kFlagInlineString) != 0) {
    // Fixed-size loads: a memcpy call of `payload` bytes into the word
    // stalled its 8-byte read on store forwarding (perf: half of this).
    fill(t.ring.slot(at), short_string_bits(a.str.data(), payload), a.key, payload, 0,
         RecordKind::kArg, a.type, flags, index);
    return at + 1;
  }
  std::uint64_t value = 0;
  switch (a.type) {
    case ValueType::kInt: std::memcpy(&value, &a.i64, sizeof value); break;
    case ValueType::kUint: value = a.u64; break;
    case ValueType::kDouble: std::memcpy(&value, &a.f64, sizeof value); break;
    case ValueType::kBool: value = a.b ? 1 : 0; break;
    case ValueType::kString: value = payload; break;
    case ValueType::kNone:
    case ValueType::kJsonMembers:  // only add_json_members writes these
      break;
  }
  fill(t.ring.slot(at), 0, a.key, value, 0, RecordKind::kArg, a.type, flags, index);
  return payload != 0 ? write_payload(t, at + 1, a.str.data(), payload) : at + 1;
}

// A span at logical depth d >= 256 is never recorded; below that, a dropped
// Begin marks its depth so that its end pushes nothing.
[[gnu::noinline]] void mark_unrecorded(ThreadState& t, std::uint64_t d) noexcept {
  bump(t.dropped);
  if (d >= 256) return;
  t.unrecorded_bits[d / 64] |= std::uint64_t{1} << (d % 64);
  ++t.unrecorded;
  t.update_gate();
}
// Lists an untracked span (depth d >= 256) among the open ones; its id, or
// 0 when the list is full.
[[gnu::noinline]] std::uint64_t remember_untracked(ThreadState& t, std::uint64_t d) noexcept {
  if (t.untracked_listed == ThreadState::kUntrackedListed) return 0;
  const std::uint64_t id = ++t.untracked_begins & (SpanToken::kUntrackedBit - 1);
  if (id == 0) return 0;  // after 2^61 of them: not worth a wrap rule
  t.untracked_open[t.untracked_listed++] = {id, d};
  return id;
}

// True (and unmarks it) when the span at depth d was not recorded.
JITSCOPE_ALWAYS_INLINE bool take_unrecorded(ThreadState& t, std::uint64_t d) noexcept {
  if (d >= 256) [[unlikely]] {
    while (t.untracked_listed > 0 && t.untracked_open[t.untracked_listed - 1].depth >= d) {
      --t.untracked_listed;
    }
    return true;
  }
  if (t.unrecorded == 0) [[likely]]
    return false;
  const std::uint64_t bit = std::uint64_t{1} << (d % 64);
  if ((t.unrecorded_bits[d / 64] & bit) == 0) return false;
  t.unrecorded_bits[d / 64] &= ~bit;
  if (--t.unrecorded == 0) t.update_gate();
  return true;
}

// One arg in a write of its own; without room, counted as dropped (false).
bool write_arg_alone(ThreadState& t, const Arg& a, std::size_t bytes, std::uint8_t flags,
                     std::uint8_t index) noexcept {
  if (!make_room(t, arg_slots(bytes, flags))) {
    bump(t.args_dropped);
    return false;
  }
  t.ring.commit(write_arg(t, 0, a, bytes, flags, index));
  return true;
}

// A Begin's args that did not fit beside it: each that fits alone, as
// add_arg after it would write it; the others counted as dropped.
[[gnu::noinline]] void write_args_apart(ThreadState& t, const Arg* args, const std::size_t* bytes,
                                        const std::uint8_t* flags, std::size_t count,
                                        std::uint8_t index) noexcept {
  for (std::size_t i = 0; i < count; ++i) {
    // Not written: its cut not counted either.
    if (write_arg_alone(t, args[i], bytes[i], flags[i], index) &&
        (flags[i] & kFlagTruncated) != 0) {
      bump(t.truncated);
    }
  }
}

template <bool kDynamic>
JITSCOPE_ALWAYS_INLINE SpanToken begin(std::uint32_t session, std::uint64_t ts, const char* name,
                                       std::string_view dynamic_name, std::uint8_t flags = 0,
                                       std::uint64_t value = 0, const Arg* args = nullptr,
                                       std::size_t arg_count = 0) noexcept {
  ThreadState* t = current_thread_state(session);
  if (t == nullptr) [[unlikely]]
    return {};
  // Pushed whenever the span's end will come (token.session() != 0), even if
  // its record is dropped below, so NVTX stays balanced.
  if ((session & kSessionNvtxBit) != 0) [[unlikely]] {
    if (const SpanMirror* m = span_mirror()) m->push(name, dynamic_name, flags, value);
  }
  const std::uint64_t d = t->depth();
  // Recorded spans open below this one, whose Ends are owed.
  const std::uint32_t owed = t->owed_at(d);
  t->set_depth(d + 1);
  std::size_t name_len = 0;
  if constexpr (kDynamic) name_len = name_payload(*t, nullptr, dynamic_name, flags);
  if (d >= 256) [[unlikely]] {
    mark_unrecorded(*t, d);
    return {session, SpanToken::kUnrecordedBit | SpanToken::kLibraryEndBit |
                         SpanToken::kUntrackedBit | remember_untracked(*t, d)};
  }
  // Its args, written with it: one room check, and no lookup of the span.
  std::uint8_t arg_flags[kMaxBeginArgs];
  std::size_t arg_bytes[kMaxBeginArgs];
  const std::size_t args_over = arg_count > kMaxBeginArgs ? arg_count - kMaxBeginArgs : 0;
  arg_count -= args_over;
  const std::size_t arg_need =
      measure_args(*t, args, arg_count, arg_bytes, arg_flags, /*count_cut=*/false);
  // This Begin (with its name and args) and every End owed, reserved now so
  // that an End never fails; this span's End is among them now that the
  // depth counts it (owed + 1, as d < 256 here). Without room for them
  // all, the span alone, and then each arg that fits (as add_arg after it).
  const std::size_t begin_need = 1 + payload_slots(name_len);
  bool room = owed < kMaxRecordedDepth && make_room(*t, begin_need + arg_need, owed + 1);
  bool args_apart = false;
  if (!room && arg_need != 0 && owed < kMaxRecordedDepth) [[unlikely]] {
    room = make_room(*t, begin_need, owed + 1);
    args_apart = room;
  }
  if (!room) [[unlikely]] {  // the span is dropped (its args with it, uncounted as add_args')
    const std::uint64_t serial = SpanToken::kUnrecordedBit | ++t->hot.dropped_begins;
    t->hot.serial_of(d) = serial;
    mark_unrecorded(*t, d);
    return {session, serial | SpanToken::kLibraryEndBit};
  }
  for (std::size_t i = 0; i < args_over; ++i) bump(t->args_dropped);
  // The ring position after the Begin's record, as the inline begin stamps it.
  const std::uint64_t serial =
      t->ring.producer().tail.load(std::memory_order_relaxed) + kRecordBytes;
  t->hot.serial_of(d) = serial;
  fill(t->ring.slot(0), ts, name, value, static_cast<std::uint32_t>(name_len), RecordKind::kBegin,
       ValueType::kNone, flags, 0);
  std::size_t used = 1;
  if constexpr (kDynamic) used = write_name(*t, dynamic_name, name_len);
  const auto index = static_cast<std::uint8_t>(owed);
  if (!args_apart) [[likely]] {
    for (std::size_t i = 0; i < arg_count; ++i) {
      if ((arg_flags[i] & kFlagTruncated) != 0) [[unlikely]]
        bump(t->truncated);
      used = write_arg(*t, used, args[i], arg_bytes[i], arg_flags[i], index);
    }
    t->ring.commit(used);
  } else {
    t->ring.commit(used);
    write_args_apart(*t, args, arg_bytes, arg_flags, arg_count, index);
  }
  // The spans inside this one and beside it inline from now on, if the
  // gate was open and only closed at this depth.
  t->hot.widen_gate(d + 1);
  // Closed gate: the end needs the library (NVTX's pop, the session's own
  // clock, a dropped span below).
  return {session, t->hot.session == session ? serial : serial | SpanToken::kLibraryEndBit};
}

// Apart from the lean path below, so that it saves no registers.
[[gnu::noinline]] SpanToken begin_static_general(std::uint32_t session, std::uint64_t ts,
                                                 const char* name) noexcept {
  return begin<false>(session, ts, name, {});
}

// The inline path's work with the time given (the library's lean path), for
// a static-name Begin with record word `word`, behind gate kGate. Behind the
// other clock's gate (HotThread::other_clock_session) its end comes back to
// the library (kLibraryEndBit): the inline end would read the inline clock.
template <std::uint32_t HotThread::*kGate>
JITSCOPE_ALWAYS_INLINE bool lean_begin_static(std::uint32_t session, std::uint64_t ts,
                                              const char* name, std::uint64_t word,
                                              SpanToken& token) noexcept {
  SpanBatch batch;
  if (!begin_span_batch<kGate>(session, name, 0, token, batch, GivenStamp{ts}, word)) return false;
  commit_batch(batch, 0);
  if constexpr (kGate == &HotThread::other_clock_session) {
    token.serial_word |= SpanToken::kLibraryEndBit;
  }
  return true;
}
constexpr std::uint64_t kPlainBegin = record_word(RecordKind::kBegin, ValueType::kNone, 0, 0);

}  // namespace

SpanToken begin_static(std::uint32_t session, std::uint64_t ts, const char* name) noexcept {
  // A session on the other clock: the inline path's work rather than the
  // general path's (the open gate's case was the inline begin's own).
  SpanToken token;
  if (lean_begin_static<&HotThread::other_clock_session>(session, ts, name, kPlainBegin, token)) {
    return token;
  }
  return begin_static_general(session, ts, name);
}

SpanToken begin_dynamic(std::uint32_t session, std::uint64_t ts, std::string_view name) noexcept {
  // The lean paths first (the C API and Span's fallback come here): the
  // inline path's work with the time given. On the other clock its end
  // comes back here (kLibraryEndBit), as begin_static's.
  SpanToken token;
  if (begin_dynamic_batch(session, name, token, GivenStamp{ts})) return token;
  if (begin_dynamic_batch<&HotThread::other_clock_session>(session, name, token, GivenStamp{ts})) {
    return {session, token.serial_word | SpanToken::kLibraryEndBit};
  }
  return begin<true>(session, ts, nullptr, name);
}

SpanToken begin_dynamic_args(std::uint32_t session, std::uint64_t ts, std::string_view name,
                             const Arg* args, std::size_t count) noexcept {
  return begin<true>(session, ts, nullptr, name, 0, 0, args, count);
}

SpanToken begin_static_args(std::uint32_t session, std::uint64_t ts, const char* name,
                            const Arg* args, std::size_t count) noexcept {
  return begin<false>(session, ts, name, {}, 0, 0, args, count);
}

SpanToken begin_marked(std::uint32_t session, std::uint64_t ts, const char* name,
                       std::string_view dynamic_name, std::uint8_t flags, std::uint64_t value,
                       const Arg* args, std::size_t arg_count) noexcept {
  if (arg_count != 0) {
    return name != nullptr
               ? begin<false>(session, ts, name, {}, flags, value, args, arg_count)
               : begin<true>(session, ts, nullptr, dynamic_name, flags, value, args, arg_count);
  }
  if (name != nullptr && value == 0) {
    // A phase's begin: the lean paths behind either gate, with its flags (a
    // Begin's value is read only for kFlagUnit, which always has one).
    const std::uint64_t word = record_word(RecordKind::kBegin, ValueType::kNone, flags, 0);
    SpanToken token;
    if (lean_begin_static<&HotThread::session>(session, ts, name, word, token) ||
        lean_begin_static<&HotThread::other_clock_session>(session, ts, name, word, token)) {
      return token;
    }
  }
  if (name != nullptr) return begin<false>(session, ts, name, {}, flags, value);
  return begin<true>(session, ts, nullptr, dynamic_name, flags, value);
}

namespace {

// Recorded spans open below depth d: what an arg record names its span by.
std::uint32_t recorded_below(const ThreadState& t, std::uint32_t d) noexcept {
  std::uint32_t unrecorded = 0;
  if (t.unrecorded != 0) {
    for (std::uint32_t w = 0; w < 4 && w * 64 < d; ++w) {
      std::uint64_t bits = t.unrecorded_bits[w];
      if (d - w * 64 < 64) bits &= (std::uint64_t{1} << (d - w * 64)) - 1;
      unrecorded += static_cast<std::uint32_t>(__builtin_popcountll(bits));
    }
  }
  return d - unrecorded;
}

// The depth of the span of `serial` on `t` plus one, or 0 when it is not
// open there (an end out of order ended it). Serials are unique among open
// spans; the innermost is found first.
std::uint64_t open_depth_above(const ThreadState& t, std::uint64_t serial) noexcept {
  std::uint64_t d = std::min<std::uint64_t>(t.depth(), 256);
  while (d > 0 && t.hot.serial_of(d - 1) != serial) --d;
  return d;
}

// The index (among the recorded open spans) of `token`'s span on `t`, or -1
// when it is not open there or not recorded.
int open_index(const ThreadState& t, const SpanToken& token) noexcept {
  if (!token.recorded()) return -1;
  const std::uint64_t above = open_depth_above(t, token.serial());
  if (above == 0) return -1;
  return static_cast<int>(recorded_below(t, static_cast<std::uint32_t>(above - 1)));
}

// The thread an arg on `token`'s span is written on, and the span's index
// there; nullptr when the span is not open on the calling thread.
ThreadState* arg_target(const SpanToken& token, std::uint8_t& index) noexcept {
  ThreadState* t = current_thread_state_if_registered();
  if (t == nullptr || t->session != token.session()) return nullptr;
  const int i = open_index(*t, token);
  if (i < 0) return nullptr;
  index = static_cast<std::uint8_t>(i);
  return t;
}

}  // namespace

bool add_json_members(const SpanToken& token, std::string_view members) noexcept {
  std::uint8_t index = 0;
  ThreadState* t = members.empty() ? nullptr : arg_target(token, index);
  if (t == nullptr) return false;
  // Never cut: a cut member list would not be JSON. Too long is dropped.
  if (members.size() > t->max_payload_bytes || !make_room(*t, 1 + payload_slots(members.size()))) {
    bump(t->args_dropped);
    return false;
  }
  fill(t->ring.slot(0), 0, nullptr, members.size(), 0, RecordKind::kArg, ValueType::kJsonMembers, 0,
       index);
  t->ring.commit(write_payload(*t, 1, members.data(), members.size()));
  return true;
}

namespace {

// Ends the innermost open span (t->depth > 0); a real end pops the NVTX
// range its begin pushed.
JITSCOPE_ALWAYS_INLINE void close_innermost(ThreadState& t, std::uint64_t ts, bool nvtx) noexcept {
  if (nvtx) [[unlikely]]
    mirror_pop();
  const std::uint64_t d = t.depth() - 1;
  t.set_depth(d);
  if (take_unrecorded(t, d)) return;
  // The Begin reserved this slot (make_room keeps `owed` slots free), so
  // there is room; check anyway rather than assume.
  if (!t.ring.has_room(1)) [[unlikely]] {
    bump(t.dropped);
    return;
  }
  fill(t.ring.slot(0), ts, nullptr, 0, 0, RecordKind::kEnd, ValueType::kNone, 0, 0);
  t.ring.commit(1);
}

// The span of `serial` is not the innermost. Still open: the spans inside it end
// with it, each marked (a trace slice cannot outlive its parent's). Already
// ended that way: nothing to do.
[[gnu::noinline, gnu::cold]] void end_out_of_order(ThreadState& t, std::uint64_t serial,
                                                   std::uint64_t ts, bool nvtx) noexcept {
  const std::uint64_t depth = open_depth_above(t, serial);
  if (depth == 0) return;  // not open: it ended with an outer span
  bump(t.out_of_order_ends);
  while (t.depth() > depth) {
    const std::uint64_t inner = t.depth() - 1;
    const bool recorded = inner < 256 && (t.unrecorded_bits[inner / 64] >> (inner % 64) & 1) == 0;
    if (recorded && t.owed() > 0 && make_room(t, 1)) {
      const Arg mark("jitscope_ended_with_outer", true);
      t.ring.commit(write_arg(t, 0, mark, 0, 0, static_cast<std::uint8_t>(t.owed() - 1)));
    }
    close_innermost(t, ts, nvtx);
  }
  close_innermost(t, ts, nvtx);
}

// The end of the untracked span `id` (opened past depth 256): it and the
// spans open inside it end (all untracked too); nothing when it is no
// longer open (an outer end closed it). Id 0 (not listed) ends the
// innermost untracked span.
[[gnu::noinline, gnu::cold]] void end_untracked(ThreadState& t, std::uint64_t id, std::uint64_t ts,
                                                bool nvtx) noexcept {
  std::uint64_t depth = t.depth() - 1;
  if (id != 0) {
    const ThreadState::UntrackedSpan* const open = t.untracked_open;
    const ThreadState::UntrackedSpan* const end = open + t.untracked_listed;
    const auto* it = std::lower_bound(
        open, end, id,
        [](const ThreadState::UntrackedSpan& s, std::uint64_t want) { return s.id < want; });
    if (it == end || it->id != id) return;
    depth = it->depth;
  } else if (t.depth() <= 256) {
    return;
  }
  if (t.depth() > depth + 1) bump(t.out_of_order_ends);
  while (t.depth() > depth) close_innermost(t, ts, nvtx);
}

// Apart from the lean path in end_span, so that it saves no registers.
[[gnu::noinline]] void end_span_general(SpanToken token, std::uint64_t ts) noexcept {
  ThreadState* t = current_thread_state_if_registered();
  if (t == nullptr) return;
  const bool nvtx = (token.session() & kSessionNvtxBit) != 0;
  if (t->session != token.session()) {  // began in an earlier session
    if (nvtx) [[unlikely]]
      mirror_pop();
    return;
  }
  if (token.untracked()) [[unlikely]] {
    end_untracked(*t, token.untracked_id(), ts, nvtx);
    return;
  }
  if (t->depth() == 0) {
    // Nothing open: the C API's end of the innermost is unbalanced; a
    // span's was ended with its outer span.
    if (token.serial() == 0) bump(t->unbalanced_ends);
    return;
  }
  // Serials are unique among open spans: the innermost's matching is all
  // an in-order end needs to check.
  const std::uint64_t top = t->depth() - 1;
  if (token.serial() != 0 && (top >= 256 || t->hot.serial_of(top) != token.serial())) [[unlikely]] {
    end_out_of_order(*t, token.serial(), ts, nvtx);
    return;
  }
  close_innermost(*t, ts, nvtx);
}

}  // namespace

void end_span(SpanToken token, std::uint64_t ts) noexcept {
  // The inline end's work with the time given, when the token's span is the
  // innermost and was begun behind either gate: the whole serial word
  // matches only a span begun behind the open gate, whose session's clock
  // `ts` was read from (end_span_now); behind the other clock's the gate is
  // checked here, the serial alone saying nothing of the clock.
  HotThread& h = *t_hot;
  const std::uint64_t innermost = h.serial_at(h.depth_x8);
  if (token.session() != 0 &&
      (innermost == token.serial_word ||
       (h.other_clock_session == token.session() && innermost == token.serial()))) {
    end_innermost(h, GivenStamp{ts});
    return;
  }
  end_span_general(token, ts);
}

void end_span_timed(SpanToken token) noexcept { end_span(token, read_clock(token.session())); }

void add_arg(SpanToken token, const Arg& arg) noexcept {
  std::uint8_t index = 0;
  ThreadState* t = arg_target(token, index);
  if (t == nullptr) return;
  std::uint8_t flags = 0;
  const std::size_t payload = arg_payload(*t, arg, flags);
  write_arg_alone(*t, arg, payload, flags, index);
}

void add_args(SpanToken token, const Arg* args, std::size_t count) noexcept {
  std::uint8_t index = 0;
  ThreadState* t = count == 0 ? nullptr : arg_target(token, index);
  if (t == nullptr) return;
  constexpr std::size_t kMax = kMaxBeginArgs;  // the compile layer's lists are short
  for (std::size_t i = kMax; i < count; ++i) bump(t->args_dropped);
  count = std::min(count, kMax);
  std::uint8_t flags[kMax];
  std::size_t payloads[kMax];
  if (!make_room(*t, measure_args(*t, args, count, payloads, flags))) {
    for (std::size_t i = 0; i < count; ++i) bump(t->args_dropped);
    return;
  }
  std::size_t at = 0;
  for (std::size_t i = 0; i < count; ++i)
    at = write_arg(*t, at, args[i], payloads[i], flags[i], index);
  t->ring.commit(at);
}

namespace {

// Apart from the lean path in add_arg_bits, so that it saves no registers.
[[gnu::noinline]] void add_arg_bits_general(SpanToken token, const char* key, ValueType type,
                                            std::uint64_t bits) noexcept {
  std::uint8_t index = 0;
  ThreadState* t = arg_target(token, index);
  if (t == nullptr) return;
  if (!make_room(*t, 1)) {
    bump(t->args_dropped);
    return;
  }
  fill(t->ring.slot(0), 0, key, bits, 0, RecordKind::kArg, type, 0, index);
  t->ring.commit(1);
}

}  // namespace

void add_arg_bits(SpanToken token, const char* key, ValueType type, std::uint64_t bits) noexcept {
  // Scalars only: a string's or a member list's value is a payload length.
  if (type != ValueType::kInt && type != ValueType::kUint && type != ValueType::kDouble &&
      type != ValueType::kBool) {
    return;
  }
  // The other clock's lean path, as the inline arg's (a token of no session
  // would pass its gate when it is closed).
  if (token.session() != 0 &&
      add_scalar_arg<&HotThread::other_clock_session>(token, token.serial(), key, type, bits)) {
    return;
  }
  add_arg_bits_general(token, key, type, bits);
}

void instant(std::uint32_t session, std::uint64_t ts, const char* name,
             std::string_view dynamic_name, const Arg* args, std::size_t arg_count) noexcept {
  ThreadState* t = current_thread_state(session);
  if (t == nullptr) return;
  if ((session & kSessionNvtxBit) != 0) [[unlikely]] {
    if (const SpanMirror* m = span_mirror()) m->mark(name, dynamic_name);
  }
  arg_count = std::min<std::size_t>(arg_count, 255);
  std::uint8_t flags = 0;
  const std::size_t name_len = name_payload(*t, name, dynamic_name, flags);
  std::size_t need = 1 + payload_slots(name_len);
  std::uint8_t arg_flags[255];
  std::size_t arg_payloads[255];
  need += measure_args(*t, args, arg_count, arg_payloads, arg_flags);
  if (!make_room(*t, need)) {
    bump(t->dropped);
    return;
  }
  fill(t->ring.slot(0), ts, name, 0, static_cast<std::uint32_t>(name_len), RecordKind::kInstant,
       ValueType::kNone, flags, static_cast<std::uint8_t>(arg_count));
  std::size_t at = write_name(*t, dynamic_name, name_len);
  for (std::size_t i = 0; i < arg_count; ++i) {
    at = write_arg(*t, at, args[i], arg_payloads[i], arg_flags[i], 0);
  }
  t->ring.commit(at);  // the instant and its args become visible together
}

void counter(std::uint32_t session, std::uint64_t ts, const char* name,
             std::string_view dynamic_name, double value) noexcept {
  ThreadState* t = current_thread_state(session);
  if (t == nullptr) return;
  std::uint8_t flags = 0;
  const std::size_t name_len = name_payload(*t, name, dynamic_name, flags);
  if (!make_room(*t, 1 + payload_slots(name_len))) {
    bump(t->dropped);
    return;
  }
  std::uint64_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  fill(t->ring.slot(0), ts, name, bits, static_cast<std::uint32_t>(name_len), RecordKind::kCounter,
       ValueType::kDouble, flags, 0);
  t->ring.commit(write_name(*t, dynamic_name, name_len));
}

bool emit_captured(std::uint32_t session, const CapturedEvent& e) noexcept {
  ThreadState* t = current_thread_state(session);
  if (t == nullptr) return false;
  std::uint8_t flags = 0;
  std::string_view dynamic_name = e.dynamic_name;
  std::uint64_t payload = e.payload;
  if (e.args_len != 0 && e.name == nullptr && e.payload_type == ValueType::kNone &&
      e.args_len <= dynamic_name.size()) {
    if (dynamic_name.size() <= t->max_payload_bytes) {
      payload = e.args_len;
    } else {
      dynamic_name.remove_suffix(e.args_len);  // never cut inside the args
    }
  }
  const std::size_t name_len = name_payload(*t, e.name, dynamic_name, flags);
  if (!make_room(*t, 2 + payload_slots(name_len))) {
    bump(t->dropped);
    return false;
  }
  fill(t->ring.slot(0), e.start_ts, e.name, e.end_ts, static_cast<std::uint32_t>(name_len),
       RecordKind::kCaptured, e.payload_type, flags, static_cast<std::uint8_t>(e.kind));
  const CapturedExtra extra{e.domain, payload, e.id, e.category, e.tid};
  std::memcpy(static_cast<void*>(&t->ring.slot(1)), &extra, sizeof extra);
  const std::size_t used = name_len != 0 ? write_payload(*t, 2, dynamic_name.data(), name_len) : 2;
  t->ring.commit(used);
  return true;
}

void set_wake_at_half(bool on) noexcept { g_wake_at_half.store(on, std::memory_order_relaxed); }

bool open_span_name(std::uint32_t session, std::uint64_t below, std::string& out) {
  ThreadState* t = current_thread_state(session);
  if (t == nullptr) return false;
  const std::uint64_t depth = t->depth();
  if (depth <= below || depth - below > kMaxRecordedDepth) return false;
  const std::uint64_t serial = t->hot.serial_of(depth - 1 - below);
  if (serial == kNoSerial || (serial & SpanToken::kUnrecordedBit) != 0) return false;
  // This thread alone writes its ring, so a record it wrote stays as it was
  // until a ring's worth of records later (the flusher only reads it).
  const RingProducer& ring = t->ring.producer();
  const std::uint64_t begin = serial - kRecordBytes;
  if (ring.tail.load(std::memory_order_relaxed) - begin > t->ring.capacity() * kRecordBytes) {
    return false;
  }
  const Record& r = ring.at(begin);
  if (r.kind != RecordKind::kBegin) return false;
  if ((r.flags & kFlagDynamicName) == 0) {
    if (r.name == nullptr || r.name[0] == '\0') return false;
    out = r.name;
    return true;
  }
  // The name's bytes in the slots after the Begin.
  out.clear();
  std::uint64_t at = begin + kRecordBytes;
  for (std::size_t left = r.name_len; left > 0; at += kRecordBytes) {
    const std::size_t chunk = std::min<std::size_t>(left, kRecordBytes);
    out.append(reinterpret_cast<const char*>(&ring.at(at)), chunk);
    left -= chunk;
  }
  return !out.empty();  // an empty name names nothing: the caller's fallback
}

bool emit_gpu_call(std::uint32_t session, std::uint32_t correlation, const void* compiled_by,
                   const void* kernel_name, std::uint8_t role) noexcept {
  ThreadState* t = current_thread_state(session);
  if (t == nullptr) return false;
  // Never waits, even under kBlock: this runs inside a CUPTI callback, and
  // the flusher may be inside CUPTI (cuptiActivityFlushAll) at that moment.
  if (!t->ring.has_room(1 + t->owed())) {
    bump(t->dropped);
    return false;
  }
  // No clock read: the call's times come from CUPTI's own API record, and
  // ts carries the kernel's name instead.
  fill(t->ring.slot(0), reinterpret_cast<std::uintptr_t>(kernel_name),
       reinterpret_cast<const char*>(compiled_by), correlation, 0, RecordKind::kGpuCall,
       ValueType::kNone, 0, role);
  t->ring.commit(1);
  return true;
}

}  // namespace jitscope::detail

namespace jitscope {

void set_thread_name(std::string_view name) noexcept {
  detail::remember_thread_name(name);
  const std::uint32_t s = detail::session_word();
  if (s == 0) return;
  detail::ThreadState* before = detail::current_thread_state_if_registered();
  const bool registers_now = before == nullptr || before->session != s;
  detail::ThreadState* t = detail::current_thread_state(s);
  // A thread that registers now has passed its (just remembered) name to NVTX already.
  if ((s & detail::kSessionNvtxBit) != 0 && !(registers_now && t != nullptr)) {
    if (const detail::SpanMirror* m = detail::span_mirror()) m->thread_name(name);
  }
  if (t == nullptr) return;
  std::uint8_t flags = 0;
  const std::size_t len = detail::name_payload(*t, nullptr, name, flags);
  if (!detail::make_room(*t, 1 + detail::payload_slots(len))) {
    detail::bump(t->args_dropped);
    return;
  }
  detail::fill(t->ring.slot(0), 0, nullptr, 0, static_cast<std::uint32_t>(len),
               detail::RecordKind::kThreadName, detail::ValueType::kNone, flags, 0);
  t->ring.commit(detail::write_name(*t, name, len));
}

}  // namespace jitscope
