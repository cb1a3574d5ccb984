#include "trace_writer.hpp"

#include "captured_names.hpp"
#include "gpu_trace.hpp"
#include "json_writer.hpp"
#include "thread_registry.hpp"

#include <jitscope/version.hpp>

#include <algorithm>
#include <cstring>

namespace jitscope::detail {
namespace {

constexpr std::size_t kChunkRecords = 4096;     // one pop: 128 KiB
constexpr std::size_t kFlushThreshold = 1 << 20;  // bytes buffered before the sink

std::size_t string_payload(const Record& r) noexcept {
  return r.kind == RecordKind::kArg &&
                 (r.type == ValueType::kString || r.type == ValueType::kJsonMembers)
             ? r.value.u64
             : 0;
}

// The category of a slice, from its Begin's flags.
std::string_view category(std::uint8_t flags) noexcept {
  if ((flags & kFlagUnit) != 0) return "compile_unit";
  if ((flags & kFlagCompileEvent) != 0) return "compile_event";
  if ((flags & kFlagPhase) != 0) return "phase";
  return "jitscope";
}

// `,"pid":P,"tid":T`: where an event goes.
std::string tid_fields(int pid, int tid) {
  std::string out = ",\"pid\":";
  append_int(out, pid);
  out.append(",\"tid\":");
  append_int(out, tid);
  return out;
}

// `"frame/attempt"` of a packed compile id, as a JSON string.
void append_compile_id(std::string& out, std::uint64_t packed) {
  out.push_back('"');
  append_uint(out, packed >> 32);
  out.push_back('/');
  append_uint(out, packed & 0xffffffffu);
  out.push_back('"');
}

}  // namespace

// Slots between a record and its payload bytes.
std::size_t extra_slots(const Record& r) noexcept { return r.kind == RecordKind::kCaptured ? 1 : 0; }

std::size_t group_slots(const Record& r) noexcept {
  const std::size_t name = (r.flags & kFlagDynamicName) != 0 ? r.name_len : 0;
  return 1 + extra_slots(r) + payload_slots(name) + payload_slots(string_payload(r));
}

TraceWriter::TraceWriter(TraceSink& sink, const SessionInfo& info)
    : sink_(sink), info_(info), chunk_(kChunkRecords) {
  buf_.reserve(kFlushThreshold + 64 * 1024);
}

void TraceWriter::event_prefix() {
  if (first_event_) {
    first_event_ = false;
  } else {
    buf_.append(",\n");
  }
}

void TraceWriter::maybe_flush() noexcept {
  if (buf_.size() >= kFlushThreshold) flush();
}

void TraceWriter::flush() noexcept {
  if (buf_.empty()) return;
  sink_.write(buf_);
  buf_.clear();
}

void TraceWriter::begin_trace() {
  buf_.append("[\n");
  event_prefix();
  {
    JsonWriter w(buf_);
    w.begin_object();
    w.member("ph", "M");
    w.member("name", "process_name");
    w.member("pid", info_.pid);
    w.member("tid", 0);
    w.key("args");
    w.begin_object();
    w.member("name", std::string_view(info_.process_name));
    w.end_object();
    w.end_object();
  }
  event_prefix();
  JsonWriter w(buf_);
  w.begin_object();
  w.member("ph", "M");
  w.member("name", "jitscope_session");
  w.member("pid", info_.pid);
  w.member("tid", 0);
  w.key("args");
  w.begin_object();
  w.member("version", JITSCOPE_VERSION_STRING);
  w.member("clock", clock_source_name(info_.clock));
  w.member("ns_per_tick", info_.conversion.is_identity() ? 1.0 : info_.conversion.ns_per_tick());
  w.member("calibration_window_ns", info_.conversion.window_ns());
  w.member("calibration_relative_uncertainty", info_.conversion.relative_uncertainty());
  w.member("session_start_unix_ns", info_.start_unix_ns);
  w.member("session_start_monotonic_ns", info_.start_monotonic_ns);
  w.member("host", std::string_view(info_.host));
  w.member("boot_id", std::string_view(info_.boot_id));
  w.member("timestamps", "CLOCK_MONOTONIC microseconds");
  w.member("ring_capacity", static_cast<std::uint64_t>(info_.ring_capacity));
  w.member("overflow", info_.overflow);
  w.member("flush_interval_ms", info_.flush_interval_ms);
  w.key("cupti");
  w.begin_object();
  w.member("state", info_.cupti_on ? "on" : "off");
  if (info_.cupti_on) {
    // How CUPTI's timestamps were put on this trace's CLOCK_MONOTONIC axis.
    w.key("kinds");  // what was collected: a kind CUPTI refused is missing here
    w.begin_array();
    for (const std::string& k : info_.cupti_kinds) w.value(std::string_view(k));
    w.end_array();
    w.member("timestamps", info_.gpu_clock.name());
    w.member("uncertainty_ns", info_.gpu_clock.uncertainty_ns);
    if (info_.gpu_clock.kind == GpuClock::Kind::kLinear) {
      w.member("cupti_ref_ns", info_.gpu_clock.cupti_ref);
      w.member("monotonic_ref_ns", info_.gpu_clock.mono_ref);
      w.member("slope", info_.gpu_clock.slope);
    }
  } else {
    w.member("reason", std::string_view(info_.cupti_reason));
  }
  w.end_object();
  w.end_object();
  w.end_object();
  flush();
}

ThreadDecodeState& TraceWriter::prepare(ThreadState& t) {
  ThreadDecodeState& d = *t.decode;
  if (d.summary == ~std::size_t{0}) {
    d.summary = summaries_.size();
    ThreadSummary s;
    s.tid = t.tid;
    s.name = t.initial_name;
    summaries_.push_back(std::move(s));
    d.tid_fields = tid_fields(info_.pid, t.tid);
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
    const std::size_t n = t.ring.pop(chunk_.data(), std::min(budget, chunk_.size()));
    if (n == 0) break;
    budget -= n;
    std::size_t i = 0;
    if (!d.partial.empty()) {
      const std::size_t want = group_slots(d.partial.front()) - d.partial.size();
      const std::size_t take = std::min(want, n);
      d.partial.insert(d.partial.end(), chunk_.begin(), chunk_.begin() + take);
      i = take;
      if (take < want) continue;
      handle(t, d.partial.data(), d.partial.size());
      d.partial.clear();
      if (d.partial.capacity() > kChunkRecords) d.partial.shrink_to_fit();
    }
    while (i < n) {
      const std::size_t g = group_slots(chunk_[i]);
      if (i + g > n) {
        d.partial.assign(chunk_.begin() + i, chunk_.begin() + n);
        break;
      }
      handle(t, &chunk_[i], g);
      i += g;
    }
  }
}

void TraceWriter::handle(ThreadState& t, const Record* group, std::size_t slots) {
  ThreadDecodeState& d = *t.decode;
  const Record& r = group[0];
  const char* payload = reinterpret_cast<const char*>(group + 1 + extra_slots(r));
  const bool dyn = (r.flags & kFlagDynamicName) != 0;
  (void)slots;

  if (d.instant_args_left > 0 && r.kind != RecordKind::kArg) {
    // Cannot happen: an instant's args are pushed with it. Write what we have.
    ++decode_errors_;
    d.instant_args_left = 0;
    write_instant(d);
  }
  switch (r.kind) {
    case RecordKind::kBegin: {
      if (r.index != d.depth) {
        ++decode_errors_;
        d.depth = std::min<std::size_t>(r.index, d.depth);
      }
      if (d.stack.size() <= d.depth) d.stack.resize(d.depth + 1);
      const ThreadDecodeState::OpenSpan* outer = d.innermost();
      const bool outer_in_unit = outer != nullptr && outer->in_unit;
      const std::uint64_t outer_unit = outer_in_unit ? outer->unit : 0;
      ThreadDecodeState::OpenSpan& s = d.stack[d.depth++];
      s.flags = r.flags;
      s.in_unit = (r.flags & kFlagUnit) != 0 || outer_in_unit;
      s.unit = (r.flags & kFlagUnit) != 0 ? r.value.u64 : outer_unit;
      s.begin_ns = info_.conversion.to_ns(r.ts);
      s.static_name = dyn ? nullptr : r.name;
      s.dynamic_name.assign(dyn ? payload : "", dyn ? r.name_len : 0);
      s.args.clear();
      s.truncated = (r.flags & kFlagTruncated) != 0;
      break;
    }
    case RecordKind::kEnd: {
      if (d.depth == 0) {
        ++decode_errors_;
        break;
      }
      ThreadDecodeState::OpenSpan& s = d.stack[--d.depth];
      write_span(d, s, info_.conversion.to_ns(r.ts), false);
      break;
    }
    case RecordKind::kArg: {
      ThreadDecodeState::OpenSpan* target = nullptr;
      if (d.instant_args_left > 0) {
        target = &d.instant;
      } else if (r.index < d.depth) {
        target = &d.stack[r.index];
      }
      if (target == nullptr) break;  // its span already ended
      if (!target->args.empty()) target->args.push_back(',');
      if (r.type == ValueType::kJsonMembers) {
        target->args.append(payload, r.value.u64);  // rendered by our JsonWriter
      } else {
        render_arg(target->args, r, payload);
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
      s.begin_ns = info_.conversion.to_ns(r.ts);
      s.static_name = dyn ? nullptr : r.name;
      s.dynamic_name.assign(dyn ? payload : "", dyn ? r.name_len : 0);
      s.args.clear();
      s.truncated = (r.flags & kFlagTruncated) != 0;
      d.instant_args_left = r.index;
      if (r.index == 0) write_instant(d);
      break;
    }
    case RecordKind::kCounter: {
      event_prefix();
      buf_.append("{\"ph\":\"C\",\"cat\":\"jitscope\",\"name\":");
      append_json_string(buf_, dyn ? std::string_view(payload, r.name_len)
                                   : std::string_view(r.name));
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
      ++events_;
      ++summaries_[d.summary].events;
      maybe_flush();
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
    default:
      ++decode_errors_;
      break;
  }
}

void TraceWriter::render_arg(std::string& out, const Record& r, const char* payload) {
  append_json_string(out, r.name != nullptr ? std::string_view(r.name) : std::string_view("?"));
  out.push_back(':');
  switch (r.type) {
    case ValueType::kInt: append_int(out, r.value.i64); break;
    case ValueType::kUint: append_uint(out, r.value.u64); break;
    case ValueType::kDouble: append_double(out, r.value.f64); break;
    case ValueType::kBool: out.append(r.value.u64 != 0 ? "true" : "false"); break;
    case ValueType::kString: append_json_string(out, std::string_view(payload, r.value.u64)); break;
    case ValueType::kNone:
    case ValueType::kJsonMembers:  // spliced by the caller, never rendered as one value
      out.append("null");
      break;
  }
}

void TraceWriter::write_args(const ThreadDecodeState::OpenSpan& s, bool incomplete) {
  if (s.args.empty() && !s.truncated && !incomplete && !s.in_unit) return;
  buf_.append(",\"args\":{");
  bool comma = false;
  if (s.in_unit) {
    buf_.append("\"compile_id\":");
    append_compile_id(buf_, s.unit);
    comma = true;
  }
  if (!s.args.empty()) {
    if (comma) buf_.push_back(',');
    buf_.append(s.args);
    comma = true;
  }
  if (s.truncated) {
    buf_.append(comma ? ",\"jitscope_truncated\":true" : "\"jitscope_truncated\":true");
    comma = true;
  }
  if (incomplete) buf_.append(comma ? ",\"incomplete\":true" : "\"incomplete\":true");
  buf_.push_back('}');
}

void TraceWriter::write_span(ThreadDecodeState& d, ThreadDecodeState::OpenSpan& s,
                             std::uint64_t end_ns, bool incomplete) {
  event_prefix();
  buf_.append("{\"ph\":\"X\",\"cat\":\"");
  buf_.append(category(s.flags));
  buf_.append("\",\"name\":");
  append_json_string(buf_, s.static_name != nullptr ? std::string_view(s.static_name)
                                                    : std::string_view(s.dynamic_name));
  buf_.append(",\"ts\":");
  append_us(buf_, s.begin_ns);
  buf_.append(",\"dur\":");
  // Both ends are converted points; their difference is the duration.
  append_us(buf_, end_ns >= s.begin_ns ? end_ns - s.begin_ns : 0);
  buf_.append(d.tid_fields);
  write_args(s, incomplete);
  buf_.push_back('}');
  ++events_;
  ++summaries_[d.summary].events;
  maybe_flush();
}

void TraceWriter::write_instant(ThreadDecodeState& d) {
  ThreadDecodeState::OpenSpan& s = d.instant;
  event_prefix();
  buf_.append("{\"ph\":\"I\",\"s\":\"t\",\"cat\":\"jitscope\",\"name\":");
  append_json_string(buf_, s.static_name != nullptr ? std::string_view(s.static_name)
                                                    : std::string_view(s.dynamic_name));
  buf_.append(",\"ts\":");
  append_us(buf_, s.begin_ns);
  buf_.append(d.tid_fields);
  write_args(s, false);
  buf_.push_back('}');
  ++events_;
  ++summaries_[d.summary].events;
  maybe_flush();
}

void TraceWriter::write_thread_name(ThreadDecodeState& d, std::string_view name) {
  if (!d.name_written.empty() && d.name_written == name) return;
  d.name_written.assign(name.data(), name.size());
  summaries_[d.summary].name = d.name_written;
  write_thread_name_event(d.tid_fields, name);
}

void TraceWriter::append_event(std::string_view event) {
  append_metadata(event);
  ++events_;
}

void TraceWriter::append_metadata(std::string_view event) {
  event_prefix();
  buf_.append(event);
  maybe_flush();
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
  maybe_flush();
}

bool TraceWriter::knows_tid(int tid) const noexcept {
  return std::any_of(summaries_.begin(), summaries_.end(),
                     [tid](const ThreadSummary& s) { return s.tid == tid; });
}

void TraceWriter::write_thread_name_event(std::string_view where, std::string_view name) {
  event_prefix();
  buf_.append("{\"ph\":\"M\",\"name\":\"thread_name\"");
  buf_.append(where);
  buf_.append(",\"args\":{\"name\":");
  append_json_string(buf_, name);
  buf_.append("}}");
  maybe_flush();
}

void TraceWriter::write_captured(ThreadDecodeState& d, const Record& r, const CapturedExtra& x,
                                 std::string_view dynamic_name) {
  const auto kind = static_cast<CapturedKind>(r.index);
  const auto* domain = static_cast<const CapturedDomain*>(x.domain);
  const std::string_view name =
      (r.flags & kFlagDynamicName) != 0 ? dynamic_name
                                        : std::string_view(r.name != nullptr ? r.name : "");
  if (kind == CapturedKind::kThreadName) {
    write_thread_name_event(tid_fields(info_.pid, x.tid), name);
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
    if (!args.empty()) args.push_back(',');
    Record value = r;  // render_arg reads the key from `name` and the value from `value`
    value.name = "payload";
    value.value.u64 = x.payload;
    render_arg(args, value, nullptr);
  }
  if (x.category != 0) {
    if (!args.empty()) args.push_back(',');
    args.append("\"category\":");
    std::string category_name;
    if (captured_category_name(domain, x.category, category_name)) {
      append_json_string(args, category_name);
    } else {
      append_uint(args, x.category);
    }
  }
  if ((r.flags & kFlagTruncated) != 0) {
    args.append(args.empty() ? "\"jitscope_truncated\":true" : ",\"jitscope_truncated\":true");
  }
  const auto write_head = [&](std::string_view ph) {
    event_prefix();
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
  const std::uint64_t begin_ns = info_.conversion.to_ns(r.ts);
  const std::uint64_t end_ns = info_.conversion.to_ns(r.value.u64);
  if (kind == CapturedKind::kAsyncRange) {
    ++captured_async_;
    // A nestable async pair: one slice on its own track, whichever thread ended it.
    const std::string starter = tid_fields(info_.pid, x.tid);
    for (int end = 0; end < 2; ++end) {
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
    ++captured_ranges_;
    write_head("X");
    buf_.append(",\"ts\":");
    append_us(buf_, begin_ns);
    buf_.append(",\"dur\":");
    append_us(buf_, end_ns >= begin_ns ? end_ns - begin_ns : 0);
    buf_.append(d.tid_fields);
    write_args_object();
    buf_.push_back('}');
  } else {
    ++captured_marks_;
    write_head("I");  // as jitscope's own instants: DevTools' engine reads only "I"
    buf_.append(",\"s\":\"t\",\"ts\":");
    append_us(buf_, begin_ns);
    buf_.append(d.tid_fields);
    write_args_object();
    buf_.push_back('}');
  }
  ++events_;
  ++summaries_[d.summary].events;
  maybe_flush();
}

void TraceWriter::close_open_spans(ThreadState& t, std::uint64_t end_ns) {
  ThreadDecodeState& d = *t.decode;
  if (d.summary == ~std::size_t{0}) return;
  if (d.instant_args_left > 0) {
    d.instant_args_left = 0;
    write_instant(d);
  }
  while (d.depth > 0) {
    write_span(d, d.stack[--d.depth], end_ns, true);
    ++incomplete_;
  }
}

void TraceWriter::settle(ThreadState& t) {
  ThreadDecodeState& d = *t.decode;
  const auto dropped = t.dropped.load(std::memory_order_relaxed);
  const auto args_dropped = t.args_dropped.load(std::memory_order_relaxed);
  const auto unbalanced = t.unbalanced_ends.load(std::memory_order_relaxed);
  const auto truncated = t.truncated.load(std::memory_order_relaxed);
  if (d.summary == ~std::size_t{0}) {
    if (dropped + args_dropped + unbalanced + truncated == 0) return;  // never recorded
    prepare(t);
  }
  ThreadSummary& s = summaries_[d.summary];
  s.dropped = dropped;
  s.args_dropped = args_dropped;
  s.unbalanced_ends = unbalanced;
  s.truncated = truncated;
}

std::uint64_t TraceWriter::events_dropped() const noexcept {
  std::uint64_t total = lost_;
  for (const ThreadSummary& s : summaries_) total += s.dropped;
  return total;
}

void TraceWriter::write_dropped_counter() {
  const std::uint64_t total_dropped = events_dropped();
  if (total_dropped == last_dropped_) return;
  last_dropped_ = total_dropped;
  event_prefix();
  buf_.append("{\"ph\":\"C\",\"cat\":\"jitscope\",\"name\":\"jitscope.dropped_events\",\"ts\":");
  append_us(buf_, monotonic_ns());
  buf_.append(",\"pid\":");
  append_int(buf_, info_.pid);
  buf_.append(",\"tid\":0,\"args\":{\"value\":");
  append_uint(buf_, total_dropped);
  buf_.append("}}");
}

void TraceWriter::end_trace(const CaptureTotals& nvtx,
                            const std::function<void(JsonWriter&)>& extra_stats) {
  std::uint64_t args_dropped = 0, unbalanced = 0, truncated = 0;
  for (const ThreadSummary& s : summaries_) {
    args_dropped += s.args_dropped;
    unbalanced += s.unbalanced_ends;
    truncated += s.truncated;
  }
  write_dropped_counter();
  event_prefix();
  JsonWriter w(buf_);
  w.begin_object();
  w.member("ph", "M");
  w.member("name", "jitscope_stats");
  w.member("pid", info_.pid);
  w.member("tid", 0);
  w.key("args");
  w.begin_object();
  w.member("events_written", events_);
  w.member("events_dropped", events_dropped());
  w.member("events_lost_outside_rings", lost_);
  w.member("args_dropped", args_dropped);
  w.member("spans_incomplete", incomplete_);
  w.member("unbalanced_ends", unbalanced);
  w.member("strings_truncated", truncated);
  w.member("decode_errors", decode_errors_);
  w.key("nvtx_capture");
  w.begin_object();
  w.member("ranges", nvtx.ranges);
  w.member("marks", nvtx.marks);
  w.member("async_ranges", nvtx.async_ranges);
  w.member("thread_names", nvtx.thread_names);
  w.member("unbalanced_pops", nvtx.unbalanced_pops);
  w.member("unknown_range_ends", nvtx.unknown_ends);
  w.member("dropped", nvtx.dropped);
  w.end_object();
  if (extra_stats) extra_stats(w);
  w.key("threads");
  w.begin_array();
  for (const ThreadSummary& s : summaries_) {
    w.begin_object();
    w.member("tid", s.tid);
    w.member("name", std::string_view(s.name));
    w.member("events", s.events);
    w.member("dropped", s.dropped);
    if (s.args_dropped != 0) w.member("args_dropped", s.args_dropped);
    if (s.unbalanced_ends != 0) w.member("unbalanced_ends", s.unbalanced_ends);
    if (s.truncated != 0) w.member("strings_truncated", s.truncated);
    w.end_object();
  }
  w.end_array();
  w.end_object();
  w.end_object();
  buf_.append("\n]\n");
  flush();
}

}  // namespace jitscope::detail
