// The trace writer's decoding and rendering: record groups off the rings
// become slices, instants, counters and thread names (trace_writer.hpp).
// Its bounds are in trace_limits.cpp, its stats in trace_stats.cpp, NVTX's
// captured events in trace_captured.cpp.
#include "format/trace_writer.hpp"

#include "format/json/trace_format.hpp"

#include "base/json_writer.hpp"
#include "base/log.hpp"
#include "base/put_bytes.hpp"
#include "format/gpu_trace.hpp"
#include "nvtx/captured_names.hpp"
#include "ring/thread_registry.hpp"

#include <jitscope/version.hpp>

#include <algorithm>
#include <cstring>

namespace jitscope::detail {
namespace {

constexpr std::size_t kChunkRecords = 4096;  // one run decoded in place: 128 KiB

// An X event rendered on the stack (write_x_event) when it takes up to
// this (a name of 64 bytes, escaped, the pid/tid and 256 bytes of args);
// args alone (write_args) up to kStackArgsBytes.
constexpr std::size_t kStackSpanBytes = 1024;
constexpr std::size_t kStackArgsBytes = 384;
// What write_x_event keeps of its buffer for longer events between them.
constexpr std::size_t kKeptBigEventBytes = 64 * 1024;

// The payload bytes in the slots after an arg (none for a short string,
// which is inside its record).
std::size_t string_payload(const Record& r) noexcept {
  return r.kind == RecordKind::kArg &&
                 (r.type == ValueType::kString || r.type == ValueType::kJsonMembers) &&
                 (r.flags & kFlagInlineString) == 0
             ? r.value.u64
             : 0;
}

// A Begin with a static name and nothing else to say (no unit, truncation
// or kind of its own), up to 8 scalar args on it, and its End, at `b`
// (`n` records there): its records, one slot each (TraceWriter::write_leaf),
// or 0. The args are the span's if their index is the Begin's depth
// (write_leaf checks it).
std::size_t leaf_records(const Record* b, std::size_t n) noexcept {
  if (b[0].kind != RecordKind::kBegin || b[0].flags != 0 || n < 2) return 0;
  if (b[1].kind == RecordKind::kEnd) return b[1].flags == 0 ? 2 : 0;  // the commonest: no args
  for (std::size_t i = 1; i < n && i <= 9; ++i) {
    const Record& r = b[i];
    if (r.kind == RecordKind::kEnd) return r.flags == 0 ? i + 1 : 0;
    const bool scalar = r.type == ValueType::kInt || r.type == ValueType::kUint ||
                        r.type == ValueType::kDouble || r.type == ValueType::kBool;
    if (r.kind != RecordKind::kArg || !scalar || r.flags != 0 || r.index != b[1].index) return 0;
  }
  return 0;
}

}  // namespace

// Slots between a record and its payload bytes.
std::size_t extra_slots(const Record& r) noexcept {
  return r.kind == RecordKind::kCaptured ? 1 : 0;
}

namespace {
// Where a group's payload bytes are: after the record (and its extra slot),
// or inside it for a short string arg.
const char* payload_of(const Record* group) noexcept {
  const Record& r = group[0];
  if (r.kind == RecordKind::kArg && (r.flags & kFlagInlineString) != 0) [[unlikely]] {
    return reinterpret_cast<const char*>(&r.ts);
  }
  return reinterpret_cast<const char*>(group + 1 + extra_slots(r));
}
}  // namespace

std::size_t group_slots(const Record& r) noexcept {
  const std::size_t name = (r.flags & kFlagDynamicName) != 0 ? r.name_len : 0;
  return 1 + extra_slots(r) + payload_slots(name) + payload_slots(string_payload(r));
}

TraceWriter::TraceWriter(TraceSink& sink, const SessionInfo& info) : sink_(sink), info_(info) {
  buf_.reserve(kFlushThreshold + 64 * 1024);
  pf_ = info_.perfetto;
  rotating_ = info_.rotate_bytes != 0 && sink_.can_rotate();
  if (info_.max_trace_bytes != 0) {
    reserve_ = kTrailerReserve;
    cap_limit_ = info_.max_trace_bytes > reserve_ ? info_.max_trace_bytes - reserve_ : 0;
  }
  update_check();
}

ThreadDecodeState& TraceWriter::prepare(ThreadState& t) {
  ThreadDecodeState& d = decode_state(t);
  if (d.summary == ~std::size_t{0}) {
    d.summary = summaries_.size();
    ThreadSummary s;
    s.tid = t.tid;
    s.name = t.initial_name;
    summaries_.push_back(std::move(s));
    d.tid_fields = tid_fields(info_.pid, t.tid);
    if (pf_) pf_prepare(d, t.tid);
    reserve_for(summaries_.back());
    write_thread_name(d, t.initial_name);
  }
  return d;
}

void TraceWriter::drain(ThreadState& t) {
  // Bounded: at most one ring's worth per call, so a busy producer cannot
  // keep the flusher on one thread.
  std::size_t budget = t.ring.read_available();
  if (budget == 0) return;
  ThreadDecodeState& d = prepare(t);
  while (budget > 0) {
    // Decoded where they lie in the ring, released once done.
    std::size_t n = 0;
    const Record* run = t.ring.peek(std::min(budget, kChunkRecords), n);
    if (n == 0) break;
    budget -= n;
    std::size_t i = 0;
    if (!d.partial.empty()) {
      const std::size_t want = group_slots(d.partial.front()) - d.partial.size();
      const std::size_t take = std::min(want, n);
      d.partial.insert(d.partial.end(), run, run + take);
      i = take;
      if (take < want) {
        t.ring.release(n);
        continue;
      }
      handle(t, d.partial.data(), d.partial.size());
      d.partial.clear();
      if (d.partial.capacity() > kChunkRecords) d.partial.shrink_to_fit();
    }
    while (i < n) {
      const Record& r = run[i];
      if (const std::size_t k = leaf_records(&r, n - i); k != 0 && write_leaf(d, &r, k)) {
        i += k;
        continue;
      }
      // A span's Begin with a static name, or an End without a name
      // payload (both one slot: group_slots), handled here as handle() does
      // (the pending BEGIN first), without its call.
      if ((r.kind == RecordKind::kBegin || r.kind == RecordKind::kEnd) &&
          (r.flags & kFlagDynamicName) == 0 && d.instant_args_left == 0) {
        if (pf_ && d.pf->begin_pending) pf_flush_begin(d);
        if (r.kind == RecordKind::kBegin) {
          open_span(d, r, reinterpret_cast<const char*>(&r + 1));  // (no payload: static)
        } else {
          close_innermost(d, r);
        }
        ++i;
        continue;
      }
      const std::size_t g = group_slots(run[i]);
      if (i + g > n) {  // the rest of its group is past the run: kept until it comes
        d.partial.assign(run + i, run + n);
        break;
      }
      handle(t, &run[i], g);
      i += g;
    }
    t.ring.release(n);
  }
}

// Inline: the form's writer is the one call (write_span's own saved
// registers were 22 instructions a span, callgrind).
JITSCOPE_ALWAYS_INLINE bool TraceWriter::write_span(ThreadDecodeState& d,
                                                    ThreadDecodeState::OpenSpan& s,
                                                    std::uint64_t end_ns, bool incomplete) {
  end_ns = std::max(std::max(end_ns, s.min_end_ns), s.begin_ns);  // ties: see tie_floor_ns
  d.span_ended(end_ns);
  return pf_ ? pf_end(d, s, end_ns, incomplete) : json_span(d, s, end_ns, incomplete);
}

// A span's Begin: its entry on the open-span stack (its BEGIN, in the
// protobuf form, waits for the args pushed with it).
JITSCOPE_ALWAYS_INLINE void TraceWriter::open_span(ThreadDecodeState& d, const Record& r,
                                                   const char* payload) {
  // A thread records at most kMaxRecordedDepth open spans; deeper means
  // an End was lost. Count it and stay bounded.
  if (d.depth >= kMaxRecordedDepth) [[unlikely]] {
    ++decode_errors_;
    d.depth = kMaxRecordedDepth - 1;
  }
  if (d.stack.size() <= d.depth) d.stack.resize(d.depth + 1);
  const ThreadDecodeState::OpenSpan* outer = d.innermost();
  const bool outer_in_unit = outer != nullptr && outer->in_unit;
  const std::uint64_t outer_unit = outer_in_unit ? outer->unit : 0;
  ThreadDecodeState::OpenSpan& s = d.stack[d.depth++];
  const bool dyn = (r.flags & kFlagDynamicName) != 0;
  s.flags = r.flags;
  s.in_unit = (r.flags & kFlagUnit) != 0 || outer_in_unit;
  s.unit = (r.flags & kFlagUnit) != 0 ? r.value.u64 : outer_unit;
  s.begin_ns = std::max(info_.conversion.to_ns(r.ts), d.tie_floor_ns);
  d.tie_floor_ns = s.begin_ns;  // its children may begin with it, not before
  s.static_name = dyn ? nullptr : r.name;
  if (dyn) {
    s.dynamic_name.assign(payload, r.name_len);
  } else {
    s.dynamic_name.clear();  // inline, where assign("", 0) is a call
  }
  s.args.clear();
  s.truncated = (r.flags & kFlagTruncated) != 0;
  s.min_end_ns = 0;
  if (pf_) {
    s.pf_state = ThreadDecodeState::kPfNotBegun;
    s.pf_begin_args = 0;
    d.pf->begin_pending = true;
  }
}

// A span's End: the innermost open span is written.
JITSCOPE_ALWAYS_INLINE void TraceWriter::close_innermost(ThreadDecodeState& d, const Record& r) {
  if (d.depth == 0) {
    ++decode_errors_;
    return;
  }
  ThreadDecodeState::OpenSpan& s = d.stack[--d.depth];
  write_span(d, s, info_.conversion.to_ns(r.ts), false);
}

void TraceWriter::handle(ThreadState& t, const Record* group, std::size_t slots) {
  ThreadDecodeState& d = decode_state(t);
  const Record& r = group[0];
  const char* payload = reinterpret_cast<const char*>(group + 1 + extra_slots(r));
  (void)slots;

  // The protobuf form: a BEGIN waits for the args pushed with its Begin.
  if (pf_ && d.pf->begin_pending &&
      !(r.kind == RecordKind::kArg && d.instant_args_left == 0 &&
        std::size_t{r.index} + 1 == d.depth)) [[unlikely]] {
    pf_flush_begin(d);
  }

  if (d.instant_args_left > 0 && r.kind != RecordKind::kArg) {
    // Cannot happen: an instant's args are pushed with it. Write what we have.
    ++decode_errors_;
    d.instant_args_left = 0;
    write_instant(d);
  }
  switch (r.kind) {
    case RecordKind::kBegin: open_span(d, r, payload); break;
    case RecordKind::kEnd: close_innermost(d, r); break;
    default: handle_other(t, d, group); break;
  }
}

// The records other than a span's Begin and End, out of line: the common
// pair's function stays small (fewer registers saved per record).
void TraceWriter::handle_other(ThreadState& t, ThreadDecodeState& d, const Record* group) {
  const char* payload = payload_of(group);
  // An inline string is a kString of at most kInlineStringBytes (the
  // producer writes no other); anything else came from a damaged ring and
  // is read as the bytes the record holds.
  const Record* record = &group[0];
  Record checked;
  if ((record->flags & kFlagInlineString) != 0 && record->kind == RecordKind::kArg &&
      (record->type == ValueType::kJsonMembers ||
       (record->type == ValueType::kString && record->value.u64 > kInlineStringBytes)))
      [[unlikely]] {
    ++decode_errors_;
    checked = *record;
    checked.type = ValueType::kString;
    checked.value.u64 = std::min<std::uint64_t>(checked.value.u64, kInlineStringBytes);
    record = &checked;
  }
  const Record& r = *record;
  const bool dyn = (r.flags & kFlagDynamicName) != 0;
  switch (r.kind) {
    case RecordKind::kArg: {
      ThreadDecodeState::OpenSpan* target = nullptr;
      if (d.instant_args_left > 0) {
        target = &d.instant;
      } else if (r.index < d.depth) {
        target = &d.stack[r.index];
      }
      if (target == nullptr) break;  // its span already ended
      if (pf_) {
        pf_arg(d, target->args, r, payload);
      } else {
        if (r.type == ValueType::kJsonMembers) {
          if (!target->args.empty()) target->args.push_back(',');
          target->args.append(payload, r.value.u64);  // rendered by our JsonWriter
        } else {
          render_arg(target->args, r, payload);  // with its comma
        }
      }
      if ((r.flags & kFlagTruncated) != 0) target->truncated = true;
      if (target == &d.instant && --d.instant_args_left == 0) write_instant(d);
      break;
    }
    case RecordKind::kInstant: {
      ThreadDecodeState::OpenSpan& s = d.instant;
      const ThreadDecodeState::OpenSpan* outer = d.innermost();
      s.in_unit = outer != nullptr && outer->in_unit;
      s.unit = s.in_unit ? outer->unit : 0;
      s.flags = 0;
      s.begin_ns = std::max(info_.conversion.to_ns(r.ts), d.tie_floor_ns);
      d.tie_floor_ns = s.begin_ns;
      d.end_innermost_after(s.begin_ns);
      s.static_name = dyn ? nullptr : r.name;
      s.dynamic_name.assign(dyn ? payload : "", dyn ? r.name_len : 0);
      s.args.clear();
      s.truncated = (r.flags & kFlagTruncated) != 0;
      d.instant_args_left = r.index;
      if (r.index == 0) write_instant(d);
      break;
    }
    case RecordKind::kCounter: {
      if (pf_) {  // straight to its packet: a counter can be as frequent as a span
        pf_counter(d, info_.conversion.to_ns(r.ts),
                   dyn ? std::string_view(payload, r.name_len) : std::string_view(),
                   dyn ? nullptr : r.name, r.value.f64);
        break;
      }
      event_prefix();
      buf_.append("{\"ph\":\"C\",\"cat\":\"jitscope\",\"name\":");
      append_json_string(buf_,
                         dyn ? std::string_view(payload, r.name_len) : std::string_view(r.name));
      buf_.append(",\"ts\":");
      append_us(buf_, info_.conversion.to_ns(r.ts));
      buf_.append(d.tid_fields);
      // A counter's args are its plotted series: the compile id goes beside them.
      if (const auto* outer = d.innermost(); outer != nullptr && outer->in_unit) {
        buf_.append(",\"compile_id\":");
        append_compile_id(buf_, outer->unit);
      }
      buf_.append(",\"args\":{\"value\":");
      append_double(buf_, r.value.f64);
      buf_.append("}}");
      if (cold_commit(true)) {
        ++events_;
        ++summaries_[d.summary].events;
      }
      break;
    }
    case RecordKind::kThreadName:
      write_thread_name(d, std::string_view(payload, r.name_len));
      break;
    case RecordKind::kGpuCall: {
      if (gpu_ == nullptr) break;
      GpuCall call;
      call.tid = t.tid;
      call.role = static_cast<GpuCallRole>(r.index);
      call.compiled_by = reinterpret_cast<const GpuUnitTag*>(r.name);
      call.kernel_name = reinterpret_cast<const std::string*>(static_cast<std::uintptr_t>(r.ts));
      if (const ThreadDecodeState::OpenSpan* s = d.innermost(); s != nullptr) {
        call.span = s->static_name != nullptr ? std::string_view(s->static_name)
                                              : std::string_view(s->dynamic_name);
        call.in_unit = s->in_unit;
        call.unit = s->unit;
        // The unit's own slice: the innermost one that opened a unit.
        for (std::size_t i = d.depth; call.in_unit && i-- > 0;) {
          const ThreadDecodeState::OpenSpan& u = d.stack[i];
          if ((u.flags & kFlagUnit) != 0) {
            call.unit_name = u.static_name != nullptr ? std::string_view(u.static_name)
                                                      : std::string_view(u.dynamic_name);
            break;
          }
        }
      }
      gpu_->on_call(static_cast<std::uint32_t>(r.value.u64), std::move(call));
      break;
    }
    case RecordKind::kCaptured: {
      CapturedExtra extra;
      std::memcpy(&extra, &group[1], sizeof extra);
      write_captured(d, r, extra, dyn ? std::string_view(payload, r.name_len) : std::string_view());
      break;
    }
    default: ++decode_errors_; break;
  }
}

void TraceWriter::render_arg(std::string& out, const Record& r, const char* payload) {
  using Kind = JsonScalar::Kind;
  const std::string_view key = r.name != nullptr ? std::string_view(r.name) : "?";
  JsonScalar v;
  switch (r.type) {
    case ValueType::kInt: v = JsonScalar::of(Kind::kInt, r.value.u64); break;
    case ValueType::kUint: v = JsonScalar::of(Kind::kUint, r.value.u64); break;
    case ValueType::kDouble: v = JsonScalar::of(Kind::kDouble, r.value.u64); break;
    case ValueType::kBool: v = JsonScalar::of(Kind::kBool, r.value.u64 != 0 ? 1 : 0); break;
    case ValueType::kString:
      v = JsonScalar::of_text(Kind::kString, std::string_view(payload, r.value.u64));
      break;
    case ValueType::kNone:
    case ValueType::kJsonMembers:  // spliced by the caller, never rendered as one value
      break;                       // null
  }
  // One call: the comma, the key and the value grow `out` once.
  append_json_item(out, !out.empty(), &key, v);
}

char* TraceWriter::put_args(char* p, const ArgsText& a) noexcept {
  constexpr std::string_view kOpen = ",\"args\":{", kCompileId = "\"compile_id\":",
                             kTruncated = ",\"jitscope_truncated\":true",
                             kIncomplete = ",\"incomplete\":true";
  static_assert(kOpen.size() + kCompileId.size() + kCompileIdRoom + 1 + kTruncated.size() +
                        kIncomplete.size() + 1 <=
                    kFixedArgsRoom,
                "put_args's texts beside the args fit the room callers give it");
  p = put_bytes(p, kOpen);
  bool comma = false;
  if (a.in_unit) {
    p = put_bytes(p, kCompileId);
    p = put_compile_id(p, a.unit);
    comma = true;
  }
  if (!a.args.empty()) {
    if (comma) *p++ = ',';
    p = put_bytes(p, a.args);
    comma = true;
  }
  if (a.truncated) {
    p = put_bytes(p, comma ? kTruncated : kTruncated.substr(1));
    comma = true;
  }
  if (a.incomplete) p = put_bytes(p, comma ? kIncomplete : kIncomplete.substr(1));
  *p++ = '}';
  return p;
}

void TraceWriter::write_args(const ArgsText& a) {
  if (!a.any()) return;
  const std::size_t room = a.args.size() + kFixedArgsRoom;
  if (room <= kStackArgsBytes) {
    char tmp[kStackArgsBytes];
    buf_.append(tmp, static_cast<std::size_t>(put_args(tmp, a) - tmp));
    return;
  }
  const std::size_t at = buf_.size();
  buf_.resize(at + room);
  buf_.resize(static_cast<std::size_t>(put_args(buf_.data() + at, a) - buf_.data()));
}

void TraceWriter::write_x_event(std::string_view cat, std::string_view name, std::uint64_t begin_ns,
                                std::uint64_t end_ns, const ThreadDecodeState& d,
                                const ArgsText& a) {
  // Rendered whole and appended once: on the stack but for long names or
  // args (7 appends, each a capacity test and a call, and 3 zero-filled
  // growths before; callgrind).
  constexpr std::string_view kHead = "{\"ph\":\"X\",\"cat\":\"",
                             kName = "\",\"name\":", kTs = ",\"ts\":", kDur = ",\"dur\":";
  const std::size_t room = kHead.size() + cat.size() + kName.size() + 6 * name.size() + 2 +
                           kTs.size() + kDur.size() + 2 * kJsonNumberRoom + d.tid_fields.size() +
                           a.args.size() + kFixedArgsRoom + 1;
  char stack[kStackSpanBytes];
  char* const start = room <= sizeof stack ? stack : (big_event_.resize(room), big_event_.data());
  char* p = put_bytes(start, kHead);
  p = put_bytes(p, cat);
  p = put_bytes(p, kName);
  p = put_json_string(p, name);
  p = put_bytes(p, kTs);
  p = put_json_us(p, begin_ns);
  p = put_bytes(p, kDur);
  // Both ends are converted points; their difference is the duration.
  p = put_json_us(p, end_ns - begin_ns);
  p = put_bytes(p, d.tid_fields);
  if (a.any()) p = put_args(p, a);
  *p++ = '}';
  buf_.append(start, static_cast<std::size_t>(p - start));
  if (big_event_.capacity() > kKeptBigEventBytes) std::string().swap(big_event_);
}

bool TraceWriter::json_span(ThreadDecodeState& d, ThreadDecodeState::OpenSpan& s,
                            std::uint64_t end_ns, bool incomplete) {
  event_prefix();
  write_x_event(
      span_category(s.flags),
      s.static_name != nullptr ? std::string_view(s.static_name) : std::string_view(s.dynamic_name),
      s.begin_ns, end_ns, d, ArgsText::of(s, incomplete));
  if (!commit(true)) return false;
  ++events_;
  ++summaries_[d.summary].events;
  return true;
}

void TraceWriter::write_instant(ThreadDecodeState& d) {
  if (pf_) {
    pf_instant(d);
    return;
  }
  ThreadDecodeState::OpenSpan& s = d.instant;
  event_prefix();
  buf_.append("{\"ph\":\"I\",\"s\":\"t\",\"cat\":\"jitscope\",\"name\":");
  append_json_string(buf_, s.static_name != nullptr ? std::string_view(s.static_name)
                                                    : std::string_view(s.dynamic_name));
  buf_.append(",\"ts\":");
  append_us(buf_, s.begin_ns);
  buf_.append(d.tid_fields);
  write_args(ArgsText::of(s, false));
  buf_.push_back('}');
  if (!commit(true)) return;
  ++events_;
  ++summaries_[d.summary].events;
}

void TraceWriter::write_thread_name(ThreadDecodeState& d, std::string_view name) {
  if (!d.name_written.empty() && d.name_written == name) return;
  d.name_written.assign(name.data(), name.size());
  ThreadSummary& s = summaries_[d.summary];
  s.name = d.name_written;
  reserve_for(s);
  write_thread_name_event(info_.pid, s.tid, d.tid_fields, name);
}

void TraceWriter::append_event(std::string_view event, const pfw::Hints& hints) {
  event_prefix();
  buf_.append(event);
  if (cold_commit(true, hints)) ++events_;
}

void TraceWriter::append_metadata(std::string_view event) {
  event_prefix();
  buf_.append(event);
  cold_commit(false);
}

void TraceWriter::write_name_metadata(std::string_view what, std::int64_t pid, std::int64_t tid,
                                      std::string_view name) {
  event_prefix();
  JsonWriter w(buf_);
  w.begin_object();
  w.member("ph", "M");
  w.member("name", what);
  w.member("pid", pid);
  w.member("tid", tid);
  w.key("args");
  w.begin_object();
  w.member("name", name);
  w.end_object();
  w.end_object();
  remember_name(what, pid, tid);
  cold_commit(false);
}

bool TraceWriter::knows_tid(int tid) const noexcept {
  return std::any_of(summaries_.begin(), summaries_.end(),
                     [tid](const ThreadSummary& s) { return s.tid == tid; });
}

void TraceWriter::write_thread_name_event(std::int64_t pid, std::int64_t tid,
                                          std::string_view where, std::string_view name) {
  event_prefix();
  buf_.append("{\"ph\":\"M\",\"name\":\"thread_name\"");
  buf_.append(where);
  buf_.append(",\"args\":{\"name\":");
  append_json_string(buf_, name);
  buf_.append("}}");
  remember_name("thread_name", pid, tid);
  cold_commit(false);
}

void TraceWriter::close_open_spans(ThreadState& t, std::uint64_t end_ns) {
  if (t.consumer == nullptr) return;  // never drained: nothing open (and nothing to allocate)
  ThreadDecodeState& d = decode_state(t);
  if (d.summary == ~std::size_t{0}) return;
  if (pf_ && d.pf->begin_pending) pf_flush_begin(d);
  if (d.instant_args_left > 0) {
    d.instant_args_left = 0;
    write_instant(d);
  }
  while (d.depth > 0) {
    // Past the cap the span counts in events_over_cap, not here.
    if (write_span(d, d.stack[--d.depth], end_ns, true)) ++incomplete_;
  }
}

void TraceWriter::detach_static_names(ThreadState& t) {
  if (t.consumer == nullptr) return;
  ThreadDecodeState& d = decode_state(t);
  auto detach = [](ThreadDecodeState::OpenSpan& s) {
    if (s.static_name == nullptr) return;
    s.dynamic_name.assign(s.static_name);
    s.static_name = nullptr;
  };
  for (std::size_t i = 0; i < d.depth; ++i) detach(d.stack[i]);
  if (d.pf) d.pf->interner.forget_static();  // their pointers may name other strings
  if (d.instant_args_left > 0) detach(d.instant);
  // A group split across pops keeps raw records; after a full drain there
  // is none (groups are pushed whole), but never keep a pointer for later.
  if (!d.partial.empty()) {
    ++decode_errors_;
    d.partial.clear();
  }
}

}  // namespace jitscope::detail
