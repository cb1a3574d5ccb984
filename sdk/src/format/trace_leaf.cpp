// A span whose End follows its Begin and the scalar args pushed with it, the
// commonest group (a leaf of the span tree), written straight from its
// records: no open-span entry is filled in, nor its BEGIN left pending, for
// the span to be gone at its End. Every test below is a condition under
// which handle() of each record writes these bytes and changes this state;
// anything else takes that path.
#include "format/trace_writer.hpp"

#include "base/perfetto_fields.hpp"
#include "format/json/trace_format.hpp"
#include "format/perfetto/plain_packet.hpp"

#include <algorithm>

namespace jitscope::detail {

bool TraceWriter::write_leaf(ThreadDecodeState& d, const Record* b, std::size_t records) {
  if (d.instant_args_left != 0 || d.depth >= kMaxRecordedDepth) return false;
  // The args are this span's (handle() gives them to the span at their index).
  if (records > 2 && b[1].index != d.depth) return false;
  if (pf_) return pf_leaf(d, b, records);
  ArgsText args;
  if (records > 2) {
    leaf_args_.clear();
    for (std::size_t i = 1; i + 1 < records; ++i) render_arg(leaf_args_, b[i], nullptr);
    args.args = leaf_args_;
  }
  const ThreadDecodeState::OpenSpan* outer = d.innermost();
  const std::uint64_t begin_ns = std::max(info_.conversion.to_ns(b[0].ts), d.tie_floor_ns);
  const std::uint64_t end_ns =
      std::max(info_.conversion.to_ns(b[records - 1].ts), begin_ns);  // ties: see tie_floor_ns
  d.span_ended(end_ns);
  event_prefix();
  args.in_unit = outer != nullptr && outer->in_unit;
  args.unit = args.in_unit ? outer->unit : 0;
  write_x_event(span_category(0), b[0].name, begin_ns, end_ns, d, args);
  if (commit(true)) {
    ++events_;
    ++summaries_[d.summary].events;
  }
  return true;
}

bool TraceWriter::pf_leaf(ThreadDecodeState& d, const Record* b, std::size_t records) {
  ThreadDecodeState::PfSequence& q = *d.pf;
  // The parent's pending BEGIN: handle() of the Begin writes it first.
  if (q.begin_pending) pf_flush_begin(d);
  // Both commits pass (kEndReserve: what the BEGIN's keeps for its END
  // under a cap).
  if (rotate_pending_ || buf_.size() + 2 * kPlainPacketBytes + kEndReserve >= check_at_) {
    return false;
  }
  // As handle() would: the args as their records come (their keys' ids
  // defined in that order where new), then the BEGIN's parts.
  std::string_view args;
  char packed[kPlainAnnotationBytes];
  if (records > 2) {
    // Integer args (the common ones) straight into a stack buffer; any
    // other, or too many, through pf_arg (whose ids the first loop has
    // interned already, in the same order).
    char* p = packed;
    for (std::size_t i = 1; i + 1 < records && p != nullptr; ++i) {
      p = p + kIntAnnotationBytes <= packed + sizeof packed
              ? put_int_annotation(p, q.interner, b[i])
              : nullptr;
    }
    if (p != nullptr) {
      args = std::string_view(packed, static_cast<std::size_t>(p - packed));
    } else {
      leaf_args_.clear();
      for (std::size_t i = 1; i + 1 < records; ++i) pf_arg(d, leaf_args_, b[i], nullptr);
      args = leaf_args_;
    }
  }
  const std::uint64_t begin_ns = std::max(info_.conversion.to_ns(b[0].ts), d.tie_floor_ns);
  const ThreadDecodeState::OpenSpan* outer = d.innermost();
  PlainBegin parts;
  if (!pf_plain_parts(q, begin_ns, 0, b[0].name, outer != nullptr ? unit_of(*outer) : nullptr,
                      args.size(), parts)) {
    return false;
  }
  const std::uint64_t end_ns = std::max(info_.conversion.to_ns(b[records - 1].ts), begin_ns);
  d.span_ended(end_ns);
  char tmp[2 * kPlainPacketBytes];
  char* p = put_plain_packet(tmp, q, begin_ns, pf::event::kSliceBegin, parts.cat_iid,
                             parts.name_iid, parts.unit, args);
  p = put_plain_packet(p, q, end_ns, pf::event::kSliceEnd, 0, 0, {}, {});
  buf_.append(tmp, static_cast<std::size_t>(p - tmp));
  pf_restarted_ = false;
  ++events_;
  ++summaries_[d.summary].events;
  return true;
}

}  // namespace jitscope::detail
