// A span whose End follows its Begin in the ring, the commonest pair (a leaf
// of the span tree with no args), written straight from its two records:
// no open-span entry is filled in, nor its BEGIN left pending, for the span
// to be gone at the next record. Every test below is a condition under
// which handle(Begin) then handle(End) write these bytes and change this
// state; anything else takes that path.
#include "flush/trace_writer.hpp"

#include "base/perfetto_fields.hpp"
#include "flush/trace_format.hpp"

#include <algorithm>

namespace jitscope::detail {
namespace {

// Both packets of a leaf in the protobuf form, at most.
constexpr std::size_t kPfLeafBytes = 2 * 128;

}  // namespace

bool TraceWriter::write_leaf(ThreadDecodeState& d, const Record& b, const Record& e) {
  if (d.instant_args_left != 0 || d.depth >= kMaxRecordedDepth) return false;
  if (pf_) return pf_leaf(d, b.ts, b.name, e.ts);
  const ThreadDecodeState::OpenSpan* outer = d.innermost();
  const bool in_unit = outer != nullptr && outer->in_unit;
  const std::uint64_t begin_ns = std::max(info_.conversion.to_ns(b.ts), d.tie_floor_ns);
  const std::uint64_t end_ns = std::max(info_.conversion.to_ns(e.ts), begin_ns);
  d.tie_floor_ns = end_ns + 1;
  d.end_innermost_after(end_ns);
  event_prefix();
  ArgsText args;
  args.in_unit = in_unit;
  args.unit = in_unit ? outer->unit : 0;
  write_x_event(span_category(0), b.name, begin_ns, end_ns, d, args);
  if (commit(true)) {
    ++events_;
    ++summaries_[d.summary].events;
  }
  return true;
}

bool TraceWriter::pf_leaf(ThreadDecodeState& d, std::uint64_t begin_ticks, const char* name,
                          std::uint64_t end_ticks) {
  ThreadDecodeState::PfSequence& q = *d.pf;
  if (q.begin_pending) pf_flush_begin(d);  // the parent's BEGIN: handle(Begin) does it first
  // Both commits pass (kEndReserve: what the BEGIN's keeps for its END
  // under a cap), the sequence is started in this file and takes one-byte
  // ids, and no definition waits for a packet.
  if (rotate_pending_ || buf_.size() + kPfLeafBytes + kEndReserve >= check_at_ || q.part != part_ ||
      q.id >= 128 || q.interner.has_pending()) {
    return false;
  }
  const std::uint64_t begin_ns = std::max(info_.conversion.to_ns(begin_ticks), d.tie_floor_ns);
  if (begin_ns < q.last_ns) return false;
  const ThreadDecodeState::OpenSpan* outer = d.innermost();
  std::string_view unit;
  if (outer != nullptr && outer->in_unit && !pf_plain_unit(q, outer->unit, 0, unit)) return false;
  // In pf_plain_begin's order: where they are new, the general path then
  // defines them in the same order.
  const std::uint64_t cat_iid =
      q.interner.intern_static(pfw::Interner::kCategory, span_category(0));
  const std::uint64_t name_iid = q.interner.intern_static(pfw::Interner::kName, name);
  if (cat_iid - 1 >= 127 || name_iid - 1 >= 127 || q.interner.has_pending()) return false;
  const std::uint64_t end_ns = std::max(info_.conversion.to_ns(end_ticks), begin_ns);
  d.tie_floor_ns = end_ns + 1;
  d.end_innermost_after(end_ns);
  char tmp[kPfLeafBytes];
  char* p = put_plain_packet(tmp, q, begin_ns, pf::event::kSliceBegin, cat_iid, name_iid, unit, {});
  p = put_plain_packet(p, q, end_ns, pf::event::kSliceEnd, 0, 0, {}, {});
  mark_ = buf_.size();
  buf_.append(tmp, static_cast<std::size_t>(p - tmp));
  pf_restarted_ = false;
  ++events_;
  ++summaries_[d.summary].events;
  return true;
}

}  // namespace jitscope::detail
