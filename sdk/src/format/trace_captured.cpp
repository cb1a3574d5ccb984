// Events another library emitted through NVTX and jitscope captured
// (nvtx/capture_ranges.cpp, capture_async.cpp, capture_naming.cpp): ranges,
// marks, async ranges and thread names, each written whole from its record
// with the source's domain and category.
#include "format/trace_writer.hpp"

#include "format/json/trace_format.hpp"
#include "nvtx/captured_names.hpp"

#include <algorithm>

namespace jitscope::detail {

void TraceWriter::write_captured(ThreadDecodeState& d, const Record& r, const CapturedExtra& x,
                                 std::string_view dynamic_name) {
  const auto kind = static_cast<CapturedKind>(r.index);
  const auto* domain = static_cast<const CapturedDomain*>(x.domain);
  std::string_view name = (r.flags & kFlagDynamicName) != 0
                              ? dynamic_name
                              : std::string_view(r.name != nullptr ? r.name : "");
  // jitscope::async_slice's slices: their args are JSON members rendered by
  // it, after the name's bytes (CapturedEvent::args_len, in the payload).
  const bool async_api =
      kind == CapturedKind::kAsyncRange && captured_domain_name(domain) == kAsyncSliceDomain;
  std::string_view slice_args;
  if (async_api && r.type == ValueType::kNone && (r.flags & kFlagDynamicName) != 0 &&
      x.payload != 0 && x.payload <= name.size()) {
    slice_args = name.substr(name.size() - x.payload);
    name.remove_suffix(x.payload);
  }
  if (kind == CapturedKind::kThreadName) {
    write_thread_name_event(info_.pid, x.tid, tid_fields(info_.pid, x.tid), name);
    return;
  }
  if (kind != CapturedKind::kRange && kind != CapturedKind::kMark &&
      kind != CapturedKind::kAsyncRange) {
    ++decode_errors_;
    return;
  }
  // Args: the compile id of the thread's unit (not for async ranges: they
  // may end elsewhere), the payload, the category, truncation.
  std::string& args = scratch_;
  args.clear();
  const ThreadDecodeState::OpenSpan* outer = d.innermost();
  if (kind != CapturedKind::kAsyncRange && outer != nullptr && outer->in_unit) {
    args.append("\"compile_id\":");
    append_compile_id(args, outer->unit);
  }
  if (r.type != ValueType::kNone) {
    Record value = r;  // render_arg reads the key from `name` and the value from `value`
    value.name = "payload";
    value.value.u64 = x.payload;
    render_arg(args, value, nullptr);
  }
  if (x.category != 0) {
    if (!args.empty()) args.push_back(',');
    args.append("\"category\":");
    std::string category_name;
    if (captured_category_name(domain, x.category, category_name, crash_cycle_)) {
      append_json_string(args, category_name);
    } else {
      append_uint(args, x.category);
    }
  }
  if (!slice_args.empty()) {
    if (!args.empty()) args.push_back(',');
    args.append(slice_args);
  }
  if ((r.flags & kFlagTruncated) != 0) {
    args.append(args.empty() ? "\"jitscope_truncated\":true" : ",\"jitscope_truncated\":true");
  }
  const auto write_head = [&](std::string_view ph) {
    buf_.append("{\"ph\":\"");
    buf_.append(ph);
    buf_.append("\",\"cat\":");
    append_json_string(buf_, captured_domain_name(domain));
    buf_.append(",\"name\":");
    append_json_string(buf_, name);
  };
  const auto write_args_object = [&] {
    if (args.empty()) return;
    buf_.append(",\"args\":{");
    buf_.append(args);
    buf_.push_back('}');
  };
  std::uint64_t begin_ns = info_.conversion.to_ns(r.ts);
  std::uint64_t end_ns = info_.conversion.to_ns(r.value.u64);
  if (kind != CapturedKind::kAsyncRange) {
    // The tie rule (ThreadDecodeState::tie_floor_ns) on the thread's own
    // track. A push/pop range is recorded at its pop, after the spans inside
    // it: its end goes after theirs, its begin stays (the floor may come
    // from inside it). A mark is an instant.
    if (kind == CapturedKind::kMark) {
      begin_ns = std::max(begin_ns, d.tie_floor_ns);
      end_ns = begin_ns;
      d.tie_floor_ns = begin_ns;
    } else {
      end_ns = std::max(std::max(end_ns, d.tie_floor_ns), begin_ns);
      d.tie_floor_ns = end_ns + 1;
    }
    d.end_innermost_after(end_ns);
  }
  std::uint64_t not_nvtx = 0;  // jitscope::async_slice's: not an NVTX capture
  std::uint64_t* counter = &captured_marks_;
  event_prefix();  // one event for the writer's bounds, also an async pair
  if (kind == CapturedKind::kAsyncRange) {
    counter = async_api ? &not_nvtx : &captured_async_;
    // A nestable async pair: one slice on its own track, whichever thread ended it.
    const std::string starter = tid_fields(info_.pid, x.tid);
    for (int end = 0; end < 2; ++end) {
      if (end == 1) buf_.append(",\n");
      write_head(end == 0 ? "b" : "e");
      buf_.append(",\"id\":");
      append_uint(buf_, x.id);
      buf_.append(",\"ts\":");
      append_us(buf_, end == 0 ? begin_ns : (end_ns >= begin_ns ? end_ns : begin_ns));
      buf_.append(starter);
      if (end == 0) write_args_object();
      buf_.push_back('}');
    }
  } else if (kind == CapturedKind::kRange) {
    counter = &captured_ranges_;
    write_head("X");
    buf_.append(",\"ts\":");
    append_us(buf_, begin_ns);
    buf_.append(",\"dur\":");
    append_us(buf_, end_ns - begin_ns);
    buf_.append(d.tid_fields);
    write_args_object();
    buf_.push_back('}');
  } else {
    write_head("I");  // as jitscope's own instants: DevTools' engine reads only "I"
    buf_.append(",\"s\":\"t\",\"ts\":");
    append_us(buf_, begin_ns);
    buf_.append(d.tid_fields);
    write_args_object();
    buf_.push_back('}');
  }
  pfw::Hints hints;
  hints.domain_track =
      kind != CapturedKind::kAsyncRange;  // on the domain's track, under the thread
  if (!cold_commit(true, hints)) return;
  ++*counter;
  ++events_;
  ++summaries_[d.summary].events;
}

}  // namespace jitscope::detail
