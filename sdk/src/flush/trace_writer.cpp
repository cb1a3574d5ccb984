#include "flush/trace_writer.hpp"

#include "nvtx/captured_names.hpp"
#include "flush/gpu_trace.hpp"
#include "base/json_writer.hpp"
#include "base/log.hpp"
#include "ring/thread_registry.hpp"

#include <jitscope/version.hpp>

#include <algorithm>
#include <cstring>

namespace jitscope::detail {
namespace {

constexpr std::size_t kChunkRecords = 4096;     // one pop: 128 KiB
constexpr std::size_t kFlushThreshold = 1 << 20;  // bytes buffered before the sink
// Under a cap, the room kept for the trailer: the dropped counter, the stats
// without their per-thread list (under 1.5 KiB with every number at 20
// digits) and "]", with room to spare for the session's extra stats.
constexpr std::uint64_t kTrailerReserve = 4096;
// Per thread, its stats entry with every number at 20 digits, plus its name.
constexpr std::uint64_t kThreadEntryReserve = 256;
constexpr std::string_view kCloseFile = "\n]\n";

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
  rotating_ = info_.rotate_bytes != 0 && sink_.can_rotate();
  if (info_.max_trace_bytes != 0) {
    reserve_ = kTrailerReserve;
    cap_limit_ = info_.max_trace_bytes > reserve_ ? info_.max_trace_bytes - reserve_ : 0;
  }
  update_check();
}

bool TraceWriter::commit_slow(bool counted) {
  if (!capped_ && info_.max_trace_bytes != 0 && total() > cap_limit_) enter_capped();
  if (capped_) {
    buf_.resize(mark_);  // the event and its separator
    ++(counted ? over_cap_ : other_over_cap_);
    return false;
  }
  if (rotating_ && !rotate_pending_ && total() - file_base_ >= info_.rotate_bytes) {
    rotate_pending_ = true;  // at the next event: this one may be the last of its file
  }
  if (buf_.size() >= kFlushThreshold) {
    flush();
  } else {
    update_check();
  }
  return true;
}

void TraceWriter::update_check() noexcept {
  if (capped_) {
    check_at_ = 0;  // every event: discarded and counted
    return;
  }
  std::uint64_t at = kFlushThreshold;
  if (info_.max_trace_bytes != 0) {
    // Over the limit once base_ + buf_.size() > cap_limit_.
    at = std::min<std::uint64_t>(at, cap_limit_ >= base_ ? cap_limit_ - base_ + 1 : 0);
  }
  if (rotating_ && !rotate_pending_) {
    const std::uint64_t in_file = base_ - file_base_;
    at = std::min<std::uint64_t>(at, info_.rotate_bytes > in_file ? info_.rotate_bytes - in_file : 0);
  }
  check_at_ = static_cast<std::size_t>(at);
}

void TraceWriter::enter_capped() noexcept {
  capped_ = true;
  rotate_pending_ = false;
  capped_at_ns_ = monotonic_ns();
  check_at_ = 0;
  try {
    std::string path(sink_.name());
    log_line("trace " + (path.empty() ? std::string() : path + " ") + "reached its cap of " +
             std::to_string(info_.max_trace_bytes) + " bytes" +
             (rotating_ ? " (all its files together)" : "") +
             " (JITSCOPE_MAX_TRACE_SIZE / max_trace_bytes); later events are counted, not "
             "written");
  } catch (...) {
    log_line("the trace reached its cap (JITSCOPE_MAX_TRACE_SIZE / max_trace_bytes); later "
             "events are counted, not written");
  }
}

void TraceWriter::rotate() {
  rotate_pending_ = false;
  // The next file's head, built aside: under a cap it must fit, with the
  // "]" that closes this file, or the trace ends here instead.
  head_.assign("[\n");
  append_header(head_, part_ + 1);
  if (info_.max_trace_bytes != 0 && total() + kCloseFile.size() + head_.size() > cap_limit_) {
    enter_capped();
    return;
  }
  buf_.append(kCloseFile);
  flush();
  if (!sink_.next_file()) {
    rotating_ = false;  // the sink said why; it discards the rest
    update_check();
    return;
  }
  ++part_;
  file_base_ = base_;
  buf_.append(head_);
  update_check();
}

void TraceWriter::flush() noexcept {
  if (buf_.empty()) return;
  sink_.write(buf_);
  base_ += buf_.size();
  buf_.clear();
  update_check();
}

void TraceWriter::reserve_for(ThreadSummary& s) {
  if (info_.max_trace_bytes == 0) return;
  std::string name;
  append_json_string(name, s.name);
  const std::size_t need = kThreadEntryReserve + name.size();
  if (need <= s.reserved) return;
  reserve_ += need - s.reserved;
  s.reserved = need;
  cap_limit_ = info_.max_trace_bytes > reserve_ ? info_.max_trace_bytes - reserve_ : 0;
  update_check();
}

void TraceWriter::begin_trace() {
  buf_.append("[\n");
  append_header(buf_, 0);
  flush();
}

void TraceWriter::append_header(std::string& out, std::uint64_t part) {
  {
    JsonWriter w(out);
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
  out.append(",\n");
  JsonWriter w(out);
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
  if (info_.max_trace_bytes != 0) w.member("max_trace_bytes", info_.max_trace_bytes);
  if (rotating_) {
    w.member("rotate_bytes", info_.rotate_bytes);
    w.member("part", part);  // this file's number: 0 for the first
  }
  w.end_object();
  w.end_object();
  for (const auto& [key, event] : names_) {
    out.append(",\n");
    out.append(event);
  }
}

ThreadDecodeState& TraceWriter::decode_state(ThreadState& t) {
  if (t.consumer == nullptr) t.consumer = std::make_unique<ThreadDecodeState>();
  return static_cast<ThreadDecodeState&>(*t.consumer);
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
  ThreadDecodeState& d = decode_state(t);
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
      s.begin_ns = std::max(info_.conversion.to_ns(r.ts), d.tie_floor_ns);
      d.tie_floor_ns = s.begin_ns;  // its children may begin with it, not before
      s.static_name = dyn ? nullptr : r.name;
      s.dynamic_name.assign(dyn ? payload : "", dyn ? r.name_len : 0);
      s.args.clear();
      s.truncated = (r.flags & kFlagTruncated) != 0;
      s.min_end_ns = 0;
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
      s.begin_ns = std::max(info_.conversion.to_ns(r.ts), d.tie_floor_ns);
      d.tie_floor_ns = s.begin_ns;
      if (d.depth > 0) {
        std::uint64_t& parent_end = d.stack[d.depth - 1].min_end_ns;
        parent_end = std::max(parent_end, s.begin_ns + 1);
      }
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
      if (commit(true)) {
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

bool TraceWriter::write_span(ThreadDecodeState& d, ThreadDecodeState::OpenSpan& s,
                             std::uint64_t end_ns, bool incomplete) {
  end_ns = std::max({end_ns, s.min_end_ns, s.begin_ns});  // ties: see tie_floor_ns
  d.tie_floor_ns = end_ns + 1;
  // `s` is off the stack already: d.stack[d.depth - 1] is its parent.
  if (d.depth > 0) {
    std::uint64_t& parent_end = d.stack[d.depth - 1].min_end_ns;
    parent_end = std::max(parent_end, end_ns + 1);
  }
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
  append_us(buf_, end_ns - s.begin_ns);
  buf_.append(d.tid_fields);
  write_args(s, incomplete);
  buf_.push_back('}');
  if (!commit(true)) return false;
  ++events_;
  ++summaries_[d.summary].events;
  return true;
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

void TraceWriter::append_event(std::string_view event) {
  event_prefix();
  buf_.append(event);
  if (commit(true)) ++events_;
}

void TraceWriter::append_metadata(std::string_view event) {
  event_prefix();
  buf_.append(event);
  commit(false);
}

void TraceWriter::remember_name(std::string_view what, std::int64_t pid, std::int64_t tid) {
  if (!rotating_ || capped_) return;
  const std::size_t at = mark_ + 2;  // past the separator
  names_[std::tuple(std::string(what), pid, tid)].assign(buf_, at, std::string::npos);
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
  commit(false);
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
  commit(false);
}

void TraceWriter::write_captured(ThreadDecodeState& d, const Record& r, const CapturedExtra& x,
                                 std::string_view dynamic_name) {
  const auto kind = static_cast<CapturedKind>(r.index);
  const auto* domain = static_cast<const CapturedDomain*>(x.domain);
  const std::string_view name =
      (r.flags & kFlagDynamicName) != 0 ? dynamic_name
                                        : std::string_view(r.name != nullptr ? r.name : "");
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
    if (captured_category_name(domain, x.category, category_name, crash_cycle_)) {
      append_json_string(args, category_name);
    } else {
      append_uint(args, x.category);
    }
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
  const std::uint64_t begin_ns = info_.conversion.to_ns(r.ts);
  const std::uint64_t end_ns = info_.conversion.to_ns(r.value.u64);
  std::uint64_t* counter = &captured_marks_;
  event_prefix();  // one event for the writer's bounds, also an async pair
  if (kind == CapturedKind::kAsyncRange) {
    counter = &captured_async_;
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
    append_us(buf_, end_ns >= begin_ns ? end_ns - begin_ns : 0);
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
  if (!commit(true)) return;
  ++*counter;
  ++events_;
  ++summaries_[d.summary].events;
}

void TraceWriter::close_open_spans(ThreadState& t, std::uint64_t end_ns) {
  ThreadDecodeState& d = decode_state(t);
  if (d.summary == ~std::size_t{0}) return;
  if (d.instant_args_left > 0) {
    d.instant_args_left = 0;
    write_instant(d);
  }
  while (d.depth > 0) {
    // Past the cap the span counts in events_over_cap, not here.
    if (write_span(d, d.stack[--d.depth], end_ns, true)) ++incomplete_;
  }
}

void TraceWriter::settle(ThreadState& t) {
  ThreadDecodeState& d = decode_state(t);
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

void TraceWriter::append_dropped_counter(std::string& out, std::uint64_t total) {
  out.append("{\"ph\":\"C\",\"cat\":\"jitscope\",\"name\":\"jitscope.dropped_events\",\"ts\":");
  append_us(out, monotonic_ns());
  out.append(",\"pid\":");
  append_int(out, info_.pid);
  out.append(",\"tid\":0,\"args\":{\"value\":");
  append_uint(out, total);
  out.append("}}");
}

void TraceWriter::write_dropped_counter() {
  // Capped: only the trailer's last value goes in.
  if (capped_) return;
  const std::uint64_t total_dropped = events_dropped();
  if (total_dropped == last_dropped_) return;
  event_prefix();
  append_dropped_counter(buf_, total_dropped);
  if (commit(false)) last_dropped_ = total_dropped;
}

namespace {

void append_thread_entry(JsonWriter& w, const ThreadSummary& s) {
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

}  // namespace

void TraceWriter::append_stats(std::string& out, const CaptureTotals& nvtx,
                               const std::function<void(JsonWriter&)>* extra_stats,
                               std::size_t threads) {
  threads = std::min(threads, summaries_.size());
  std::uint64_t args_dropped = 0, unbalanced = 0, truncated = 0;
  for (const ThreadSummary& s : summaries_) {
    args_dropped += s.args_dropped;
    unbalanced += s.unbalanced_ends;
    truncated += s.truncated;
  }
  out.append(",\n");
  JsonWriter w(out);
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
  if (info_.max_trace_bytes != 0) {
    w.key("trace_cap");
    w.begin_object();
    w.member("max_bytes", info_.max_trace_bytes);
    w.member("reached", capped_);
    if (capped_) {
      w.key("reached_ts");  // when, on the events' time axis (µs)
      w.value_us(capped_at_ns_);
    }
    w.member("events_not_written", over_cap_);    // as counted in events_written
    w.member("metadata_not_written", other_over_cap_);  // names, flows
    w.end_object();
  }
  if (info_.rotate_bytes != 0) w.member("trace_files", part_ + 1);
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
  if (extra_stats != nullptr && *extra_stats) (*extra_stats)(w);
  const bool all_threads = threads == summaries_.size();
  if (extra_stats == nullptr || !all_threads) {
    w.key("trimmed_for_cap");  // left out to stay under the cap
    w.begin_array();
    if (extra_stats == nullptr) w.value("extra_stats");
    if (!all_threads) w.value("threads");
    w.end_array();
  }
  w.key("threads");
  w.begin_array();
  for (std::size_t i = 0; i < threads; ++i) append_thread_entry(w, summaries_[i]);
  w.end_array();
  if (!all_threads) {
    w.member("threads_omitted", static_cast<std::uint64_t>(summaries_.size() - threads));
  }
  w.end_object();
  w.end_object();
}

void TraceWriter::end_trace(const CaptureTotals& nvtx,
                            const std::function<void(JsonWriter&)>& extra_stats) {
  if (ended_) return;
  ended_ = true;
  rotate_pending_ = false;  // the trailer ends the file being written
  // Straight into buf_, past commit(): the cap kept room for it. Should
  // that room be short (the extra stats are not bounded; threads first seen
  // once the trace was full widen the stats after the fact), it is written
  // again with less: without the extra stats, then with the threads that fit.
  const std::size_t at = buf_.size();
  const std::uint64_t dropped = events_dropped();
  const auto render = [&](bool extra, std::size_t threads) {
    buf_.resize(at);
    if (dropped != last_dropped_) {
      buf_.append(",\n");
      append_dropped_counter(buf_, dropped);
    }
    append_stats(buf_, nvtx, extra ? &extra_stats : nullptr, threads);
    buf_.append(kCloseFile);
    return info_.max_trace_bytes == 0 || total() <= info_.max_trace_bytes;
  };
  const std::size_t n = summaries_.size();
  if (!render(true, n) && !render(false, n)) {
    // The threads in the order they came, as many as fit.
    std::size_t fit = 0;
    if (render(false, 0)) {
      std::uint64_t room = info_.max_trace_bytes - total();
      std::string entry;
      for (; fit < n; ++fit) {
        entry.clear();
        JsonWriter w(entry);
        append_thread_entry(w, summaries_[fit]);
        if (entry.size() + 1 > room) break;
        room -= entry.size() + 1;
      }
    }
    while (!render(false, fit) && fit > 0) --fit;
  }
  last_dropped_ = dropped;
  flush();
}

}  // namespace jitscope::detail
