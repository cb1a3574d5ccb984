// The trace writer's protobuf form (docs/perfetto-format.md): each recording
// thread's sequence, its spans and instants encoded straight from their
// records, and the hand-off of cold JSON-rendered events to the transcoder
// (perfetto/transcode.hpp).
//
// Hot packets are written with a precomputed size: every part (the
// timestamp delta, the interned ids, the args already encoded when their
// records were decoded) is known before the first byte, so the packet's and
// the TrackEvent's lengths are written up front into a stack buffer and the
// whole packet goes into the output with one append: no length patching,
// no moves, no per-field string growth (a span costs two appends).
#include "format/trace_writer.hpp"

#include "base/json_writer.hpp"
#include "base/perfetto_fields.hpp"
#include "base/proto_wire.hpp"
#include "format/json/trace_format.hpp"
#include "format/perfetto/plain_packet.hpp"
#include "format/perfetto/tracks.hpp"

#include <time.h>

#include <bit>
#include <cmath>
#include <limits>

namespace jitscope::detail {
namespace {

using pfw::Interner;
using wire::put_bytes;
using wire::put_varint;
using wire::varint_size;

// The writer's counters' category: one object, whose address
// ProcessSequence::counter_static compares.
constexpr std::string_view kCounterCategory = "jitscope";

constexpr std::uint32_t varint(std::uint32_t field) { return pf::tag(field, pf::kVarint); }
constexpr std::uint32_t nested(std::uint32_t field) { return pf::tag(field, pf::kLengthDelimited); }

std::uint64_t clock_ns(clockid_t id) noexcept {
  timespec ts{};
  clock_gettime(id, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000u +
         static_cast<std::uint64_t>(ts.tv_nsec);
}

// An interned id or an inline string: bytes of the field.
std::size_t id_or_string_size(std::uint64_t iid, std::uint32_t iid_field,
                              std::uint32_t string_field, std::string_view s) {
  return iid != 0 ? varint_size(varint(iid_field)) + varint_size(iid)
                  : wire::field_size(nested(string_field), s.size());
}

char* put_id_or_string(char* p, std::uint64_t iid, std::uint32_t iid_field,
                       std::uint32_t string_field, std::string_view s) {
  if (iid != 0) return put_varint(put_varint(p, varint(iid_field)), iid);
  p = put_varint(put_varint(p, nested(string_field)), s.size());
  return put_bytes(p, s);
}

// One annotation {name, bool true}, or {name, string value}.
void append_annotation(std::string& out, Interner* interner, const char* name,
                       std::string_view text, bool is_bool) {
  const std::size_t at = wire::begin_nested(out, nested(pf::event::kDebugAnnotations));
  const std::uint64_t iid =
      interner != nullptr ? interner->intern_static(Interner::kAnnotation, name) : 0;
  if (iid != 0) {
    wire::append_varint_field(out, varint(pf::annotation::kNameIid), iid);
  } else {
    wire::append_bytes_field(out, nested(pf::annotation::kName), name);
  }
  if (is_bool) {
    wire::append_varint_field(out, varint(pf::annotation::kBoolValue), 1);
  } else {
    wire::append_bytes_field(out, nested(pf::annotation::kStringValue), text);
  }
  wire::end_nested(out, at);
}

}  // namespace

bool TraceWriter::cold_commit(bool counted, const pfw::Hints& hints) {
  if (!pf_) return commit(counted);
  pf_json_.assign(buf_, mark_, std::string::npos);
  buf_.resize(mark_);
  if (!seq1_.transcode(pf_json_, buf_, hints)) ++decode_errors_;
  const bool ok = commit(counted);
  seq1_.settle(ok);
  return ok;
}

void TraceWriter::append_pf_file_start(std::string& out, pfw::ProcessSequence& seq) {
  const std::uint64_t now = monotonic_ns();
  pfw::append_file_start(out, now, clock_ns(CLOCK_BOOTTIME), clock_ns(CLOCK_REALTIME));
  seq.start_file(now);
}

void TraceWriter::append_pf_head(std::string& out, std::uint64_t part, pfw::ProcessSequence& seq) {
  append_pf_file_start(out, seq);
  std::string json;
  append_header(json, part);
  if (!seq.transcode(json, out)) ++decode_errors_;
  seq.settle(true);
}

void TraceWriter::pf_prepare(ThreadDecodeState& d, int tid) {
  d.pf = std::make_unique<ThreadDecodeState::PfSequence>();
  d.pf->id = next_sequence_++;
  d.pf->track = pfw::thread_track(info_.pid, tid);
}

void TraceWriter::pf_settle_cut(ThreadDecodeState& d) {
  ThreadDecodeState::PfSequence& q = *d.pf;
  // The sequence's first packet in this file was cut with the event: it
  // starts again with the next one; the spans it began again have no BEGIN
  // here, so no END either.
  q.part = ~0ull;
  for (std::size_t i = 0; i < d.depth; ++i) {
    ThreadDecodeState::OpenSpan& s = d.stack[i];
    if ((s.pf_state & 3) == ThreadDecodeState::kPfBegun && s.pf_part == part_) {
      s.pf_state = ThreadDecodeState::kPfOverCap;
      pf_reserve(false);
    }
  }
}

void TraceWriter::pf_fixed_args(ThreadDecodeState::PfSequence& q, std::string& out,
                                const std::uint64_t* unit, bool truncated, bool incomplete,
                                bool intern) {
  Interner* interner = intern ? &q.interner : nullptr;
  if (unit != nullptr) {
    std::string id;
    append_compile_id(id, *unit);  // "frame/attempt", quotes included
    append_annotation(out, interner, kCompileIdKey, std::string_view(id).substr(1, id.size() - 2),
                      false);
  }
  if (truncated) append_annotation(out, interner, "jitscope_truncated", {}, true);
  if (incomplete) append_annotation(out, interner, "incomplete", {}, true);
}

void TraceWriter::pf_restart_sequence(ThreadDecodeState& d, std::uint64_t start_ns) {
  ThreadDecodeState::PfSequence& q = *d.pf;
  // Ids keep their numbers; those already inside encoded args (spans open,
  // the one whose END is being written, a BEGIN waiting for its packet, an
  // instant's) are defined again in this file; any other is defined again
  // where next used. (Every one defined again took a file's worth of a
  // thread's names at each start: too much for a window's small parts.)
  q.interner.restart();
  for (std::size_t i = 0; i < d.depth; ++i) q.interner.define_annotation_names(d.stack[i].args);
  if (const ThreadDecodeState::OpenSpan* s = popped_span(d)) {
    q.interner.define_annotation_names(s->args);
  }
  q.interner.define_annotation_names(d.instant.args);
  pfw::append_sequence_start(buf_, q.id, q.track, start_ns);
  q.last_ns = start_ns;
}

void TraceWriter::pf_start(ThreadDecodeState& d, std::uint64_t ts) {
  ThreadDecodeState::PfSequence& q = *d.pf;
  pf_restarted_ = false;
  if (q.part == part_) [[likely]]
    return;
  pf_restarted_ = true;
  q.part = part_;
  std::uint64_t start = ts;
  for (std::size_t i = 0; i < d.depth; ++i) {
    if ((d.stack[i].pf_state & 3) == ThreadDecodeState::kPfBegun) {
      start = std::min(start, d.stack[i].begin_ns);
      break;
    }
  }
  pf_restart_sequence(d, start);
  // Spans still open that began in an earlier file begin again here; in
  // the window's parts they were, in the part's preamble.
  for (std::size_t i = 0; i < d.depth; ++i) {
    ThreadDecodeState::OpenSpan& s = d.stack[i];
    if ((s.pf_state & 3) != ThreadDecodeState::kPfBegun || s.pf_part == part_) continue;
    pf_begin_again(q, s);
    s.pf_part = part_;
  }
}

void TraceWriter::pf_begin_again(ThreadDecodeState::PfSequence& q,
                                 const ThreadDecodeState::OpenSpan& s) {
  pf_args_.clear();
  pf_fixed_args(q, pf_args_, unit_of(s), (s.pf_state & ThreadDecodeState::kPfTruncatedOnBegin) != 0,
                false);
  pf_packet(q, s.begin_ns, pf::event::kSliceBegin, span_category(s.flags), s.static_name,
            s.dynamic_name, pf_args_, std::string_view(s.args).substr(0, s.pf_begin_args));
}

void TraceWriter::pf_packet(ThreadDecodeState::PfSequence& q, std::uint64_t ts, std::uint32_t type,
                            std::string_view category, const char* static_name,
                            std::string_view name, std::string_view annotations,
                            std::string_view more_annotations, bool intern) {
  const bool named = type != pf::event::kSliceEnd;
  std::uint64_t cat_iid = 0, name_iid = 0;
  if (named) {
    if (intern) {
      cat_iid = q.interner.intern_static(Interner::kCategory, category.data());
      name_iid = static_name != nullptr ? q.interner.intern_static(Interner::kName, static_name)
                                        : q.interner.intern(Interner::kName, name);
    }
    if ((cat_iid == 0 || name_iid == 0)) [[unlikely]] {
      // Inline (the table is full, or a lean END): valid UTF-8 as JSON has it.
      if (static_name != nullptr) name = static_name;
      if (cat_iid == 0) category = pfw::valid_utf8(category, pf_inline_cat_);
      if (name_iid == 0) name = pfw::valid_utf8(name, pf_inline_name_);
    }
  }
  const std::string_view defs = intern ? q.interner.take() : std::string_view();
  // Timestamps are deltas on clock 64; one that would go back in time (not
  // expected: the tie rule keeps a thread's times in record order) is
  // written absolute, on clock 3, instead.
  const bool forward = ts >= q.last_ns;
  const std::uint64_t ts_value = forward ? ts - q.last_ns : ts;

  std::size_t event = 2 + annotations.size() + more_annotations.size();  // type: 2 bytes
  if (named) {
    event += id_or_string_size(cat_iid, pf::event::kCategoryIids, pf::event::kCategories, category);
    event += id_or_string_size(name_iid, pf::event::kNameIid, pf::event::kName, name);
  }
  std::size_t body = 1 + varint_size(ts_value) + 1 + varint_size(q.id) +
                     wire::field_size(nested(pf::packet::kTrackEvent), event) + 2;  // + flags
  if (!forward) body += varint_size(varint(pf::packet::kTimestampClockId)) + 1;
  if (!defs.empty()) body += wire::field_size(nested(pf::packet::kInternedData), defs.size());
  const std::size_t total = 1 + varint_size(body) + body;

  char stack[256];
  char* const start = total <= sizeof stack ? stack : (pf_big_.resize(total), pf_big_.data());
  char* p = start;
  *p++ = static_cast<char>(nested(pf::trace::kPacket));
  p = put_varint(p, body);
  *p++ = static_cast<char>(varint(pf::packet::kTimestamp));
  p = put_varint(p, ts_value);
  if (!forward) {
    p = put_varint(p, varint(pf::packet::kTimestampClockId));
    *p++ = static_cast<char>(pf::clock::kMonotonic);
  }
  *p++ = static_cast<char>(varint(pf::packet::kTrustedPacketSequenceId));
  p = put_varint(p, q.id);
  *p++ = static_cast<char>(nested(pf::packet::kTrackEvent));
  p = put_varint(p, event);
  *p++ = static_cast<char>(varint(pf::event::kType));
  *p++ = static_cast<char>(type);
  if (named) {
    p = put_id_or_string(p, cat_iid, pf::event::kCategoryIids, pf::event::kCategories, category);
    p = put_id_or_string(p, name_iid, pf::event::kNameIid, pf::event::kName, name);
  }
  p = put_bytes(p, annotations);
  p = put_bytes(p, more_annotations);
  if (!defs.empty()) {
    *p++ = static_cast<char>(nested(pf::packet::kInternedData));
    p = put_varint(p, defs.size());
    p = put_bytes(p, defs);
  }
  *p++ = static_cast<char>(varint(pf::packet::kSequenceFlags));
  *p++ = static_cast<char>(pf::packet::kSeqNeedsIncrementalState);
  buf_.append(start, static_cast<std::size_t>(p - start));
  if (forward) q.last_ns = ts;
}

JITSCOPE_ALWAYS_INLINE void TraceWriter::pf_plain_packet(
    ThreadDecodeState::PfSequence& q, std::uint64_t ts, std::uint32_t type, std::uint64_t cat_iid,
    std::uint64_t name_iid, std::string_view fixed, std::string_view annotations) {
  char tmp[kPlainPacketBytes];
  const char* const end = put_plain_packet(tmp, q, ts, type, cat_iid, name_iid, fixed, annotations);
  buf_.append(tmp, static_cast<std::size_t>(end - tmp));
}

// Inline in pf_flush_begin, its one caller (a call: 15 instructions a BEGIN
// saving and restoring registers, callgrind).
JITSCOPE_ALWAYS_INLINE bool TraceWriter::pf_plain_begin(ThreadDecodeState::PfSequence& q,
                                                        const ThreadDecodeState::OpenSpan& s) {
  PlainBegin parts;
  if (s.static_name == nullptr || s.truncated ||
      !pf_plain_parts(q, s.begin_ns, s.flags, s.static_name, unit_of(s), s.args.size(), parts)) {
    return false;
  }
  pf_restarted_ = false;
  pf_plain_packet(q, s.begin_ns, pf::event::kSliceBegin, parts.cat_iid, parts.name_iid, parts.unit,
                  s.args);
  return true;
}

bool TraceWriter::pf_plain_end(ThreadDecodeState::PfSequence& q,
                               const ThreadDecodeState::OpenSpan& s, std::uint64_t end_ns,
                               bool incomplete) {
  const bool truncated_late =
      s.truncated && (s.pf_state & ThreadDecodeState::kPfTruncatedOnBegin) == 0;
  if (q.part != part_ || s.pf_part != part_ || q.id >= 128 || incomplete || truncated_late ||
      s.args.size() != s.pf_begin_args || end_ns < q.last_ns || q.interner.has_pending()) {
    return false;
  }
  pf_restarted_ = false;
  pf_plain_packet(q, end_ns, pf::event::kSliceEnd, 0, 0, {}, {});
  return true;
}

void TraceWriter::pf_flush_begin(ThreadDecodeState& d) {
  ThreadDecodeState::PfSequence& q = *d.pf;
  q.begin_pending = false;
  if (d.depth == 0) return;
  ThreadDecodeState::OpenSpan& s = d.stack[d.depth - 1];
  if (s.pf_state != ThreadDecodeState::kPfNotBegun) return;
  event_prefix();
  if (!pf_plain_begin(q, s)) {
    pf_start(d, s.begin_ns);
    pf_args_.clear();
    pf_fixed_args(q, pf_args_, unit_of(s), s.truncated, false);
    pf_packet(q, s.begin_ns, pf::event::kSliceBegin, span_category(s.flags), s.static_name,
              s.dynamic_name, pf_args_, s.args);
  }
  pf_reserve(true);  // room for its END, which must fit with it
  const bool ok = commit(true);
  pf_settle(d, ok);
  if (!ok) {
    pf_reserve(false);
    s.pf_state = ThreadDecodeState::kPfOverCap;  // counted in events_over_cap
    return;
  }
  s.pf_state = ThreadDecodeState::kPfBegun |
               (s.truncated ? ThreadDecodeState::kPfTruncatedOnBegin : std::uint8_t{0});
  s.pf_part = part_;
  s.pf_begin_args = static_cast<std::uint32_t>(s.args.size());
}

bool TraceWriter::pf_end(ThreadDecodeState& d, ThreadDecodeState::OpenSpan& s, std::uint64_t end_ns,
                         bool incomplete) {
  if ((s.pf_state & 3) != ThreadDecodeState::kPfBegun) {
    if (s.pf_state == ThreadDecodeState::kPfNotBegun) ++decode_errors_;
    s.pf_state = ThreadDecodeState::kPfNotBegun;
    return false;  // over the cap: counted when its BEGIN was cut
  }
  ThreadDecodeState::PfSequence& q = *d.pf;
  pf_reserve(false);  // its room is used now
  // Popped already (popped_span): a window's part that starts at its END
  // begins it again too, and a restart defines its args' ids.
  ending_ = &s;
  event_prefix();
  if (!pf_plain_end(q, s, end_ns, incomplete)) pf_general_end(d, s, end_ns, incomplete);
  ending_ = nullptr;
  commit_forced();
  q.interner.settle(true);
  s.pf_state = ThreadDecodeState::kPfNotBegun;
  ++events_;
  ++summaries_[d.summary].events;
  return true;
}

void TraceWriter::pf_general_end(ThreadDecodeState& d, const ThreadDecodeState::OpenSpan& s,
                                 std::uint64_t end_ns, bool incomplete) {
  ThreadDecodeState::PfSequence& q = *d.pf;
  const bool again = s.pf_part != part_;  // begun in an earlier file: begin again here
  pf_start(d, again ? s.begin_ns : end_ns);
  if (again) pf_begin_again(q, s);
  // Args that came after the BEGIN go on the END, unless they no longer
  // fit under the cap; then the END is lean: fixed args only, names inline.
  const std::string_view late = std::string_view(s.args).substr(s.pf_begin_args);
  const bool lean =
      info_.max_trace_bytes != 0 &&
      (capped_ || total() + late.size() + q.interner.pending.size() + kEndReserve > cap_limit_);
  if (lean && !late.empty()) ++other_over_cap_;
  pf_args_.clear();
  pf_fixed_args(q, pf_args_, nullptr,
                s.truncated && (s.pf_state & ThreadDecodeState::kPfTruncatedOnBegin) == 0,
                incomplete, !lean);
  pf_packet(q, end_ns, pf::event::kSliceEnd, {}, nullptr, {}, lean ? std::string_view() : late,
            pf_args_, !lean);
}

void TraceWriter::pf_instant(ThreadDecodeState& d) {
  ThreadDecodeState::OpenSpan& s = d.instant;
  ThreadDecodeState::PfSequence& q = *d.pf;
  event_prefix();
  pf_start(d, s.begin_ns);
  pf_args_.clear();
  pf_fixed_args(q, pf_args_, unit_of(s), s.truncated, false);
  pf_packet(q, s.begin_ns, pf::event::kInstant, "jitscope", s.static_name, s.dynamic_name, pf_args_,
            s.args);
  const bool ok = commit(true);
  pf_settle(d, ok);
  if (!ok) return;
  ++events_;
  ++summaries_[d.summary].events;
}

void TraceWriter::pf_counter(ThreadDecodeState& d, std::uint64_t ts_ns,
                             std::string_view dynamic_name, const char* static_name, double value) {
  event_prefix();
  if (!seq1_.counter_static(info_.pid, kCounterCategory, static_name, ts_ns, value, buf_)) {
    pf_number_.clear();
    append_double(pf_number_, value);  // so both forms decide alike what is an integer
    // The static name's length only here: the fast path needs none.
    const std::string_view name =
        static_name != nullptr ? std::string_view(static_name) : dynamic_name;
    seq1_.counter(info_.pid, kCounterCategory, name, ts_ns, pf_number_, buf_, static_name);
  }
  const bool ok = commit(true);
  seq1_.settle(ok);
  if (!ok) return;
  ++events_;
  ++summaries_[d.summary].events;
}

void TraceWriter::pf_arg(ThreadDecodeState& d, std::string& out, const Record& r,
                         const char* payload) {
  Interner& interner = d.pf->interner;
  if (r.type == ValueType::kJsonMembers) {  // rendered by our JsonWriter
    if (!pfw::append_annotations(std::string_view(payload, r.value.u64), interner, out)) {
      ++decode_errors_;
    }
    return;
  }
  char tmp[kIntAnnotationBytes];
  if (const char* end = put_int_annotation(tmp, interner, r)) [[likely]] {
    out.append(tmp, static_cast<std::size_t>(end - tmp));  // the common arg, in one append
    return;
  }
  namespace a = pf::annotation;
  const char* key = r.name != nullptr ? r.name : "?";
  const std::uint64_t iid = interner.intern_static(Interner::kAnnotation, key);  // cached now
  const std::size_t at = wire::begin_nested(out, nested(pf::event::kDebugAnnotations));
  if (iid != 0) {
    wire::append_varint_field(out, varint(a::kNameIid), iid);
  } else {
    std::string fixed;
    wire::append_bytes_field(out, nested(a::kName), pfw::valid_utf8(key, fixed));
  }
  switch (r.type) {
    case ValueType::kInt: wire::append_varint_field(out, varint(a::kIntValue), r.value.u64); break;
    case ValueType::kUint:
      wire::append_varint_field(
          out, varint(r.value.u64 > std::uint64_t{INT64_MAX} ? a::kUintValue : a::kIntValue),
          r.value.u64);
      break;
    case ValueType::kDouble:
      // As JSON, which has no spelling for NaN and infinities: no value (null).
      if (std::isfinite(r.value.f64)) {
        wire::append_fixed64_field(out, pf::tag(a::kDoubleValue, pf::kFixed64),
                                   std::bit_cast<std::uint64_t>(r.value.f64));
      }
      break;
    case ValueType::kBool:
      wire::append_varint_field(out, varint(a::kBoolValue), r.value.u64 != 0 ? 1 : 0);
      break;
    case ValueType::kString: {
      std::string fixed;
      wire::append_bytes_field(out, nested(a::kStringValue),
                               pfw::valid_utf8(std::string_view(payload, r.value.u64), fixed));
      break;
    }
    case ValueType::kNone:
    case ValueType::kJsonMembers: break;
  }
  wire::end_nested(out, at);
}

}  // namespace jitscope::detail
