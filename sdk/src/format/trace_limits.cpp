// The trace writer's bounds (trace_writer.hpp's header comment): the size
// cap, rotation into numbered files with a head that makes each load alone,
// and handing buffered bytes to the sink.
#include "format/trace_writer.hpp"

#include "format/json/trace_format.hpp"
#include "sink/file_sink.hpp"

#include "base/json_writer.hpp"
#include "base/log.hpp"

#include <jitscope/version.hpp>

#include <algorithm>

namespace jitscope::detail {

bool TraceWriter::commit_slow(bool counted, bool forced) {
  if (!forced && !capped_ && info_.max_trace_bytes != 0 && total() > cap_limit_) {
    enter_capped();
  }
  if (capped_ && !forced) {
    buf_.resize(mark_);  // the event and its separator
    ++(counted ? over_cap_ : other_over_cap_);
    return false;
  }
  if (!capped_ && in_parts() && !rotate_pending_ && total() - file_base_ >= part_limit()) {
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
  if (in_parts() && !rotate_pending_) {
    const std::uint64_t in_file = base_ - file_base_;
    const std::uint64_t limit = part_limit();
    at = std::min<std::uint64_t>(at, limit > in_file ? limit - in_file : 0);
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
    log_line(
        "the trace reached its cap (JITSCOPE_MAX_TRACE_SIZE / max_trace_bytes); later "
        "events are counted, not written");
  }
}

void TraceWriter::rotate() {
  if (window_parts_ != nullptr) {
    next_window_part();
    return;
  }
  rotate_pending_ = false;
  // The next file's head, built aside: under a cap it must fit, with the
  // "]" that closes this file, or the trace ends here instead.
  head_.clear();
  pfw::ProcessSequence next;  // the next file's, kept only if it starts
  if (pf_) {
    append_pf_head(head_, part_ + 1, next);
  } else {
    head_.assign("[\n");
    append_header(head_, part_ + 1);
  }
  if (info_.max_trace_bytes != 0 && total() + close_file().size() + head_.size() > cap_limit_) {
    enter_capped();
    return;
  }
  buf_.append(close_file());
  flush();
  if (!sink_.next_file()) {
    rotating_ = false;  // the sink said why; it discards the rest
    update_check();
    return;
  }
  ++part_;
  file_base_ = base_;
  if (pf_) seq1_ = std::move(next);
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
  set_cap_limit();
}

void TraceWriter::set_cap_limit() noexcept {
  const std::uint64_t kept = reserve_ + open_end_bytes_;
  cap_limit_ = info_.max_trace_bytes > kept ? info_.max_trace_bytes - kept : 0;
  update_check();
}

void TraceWriter::begin_trace(bool clock_known) {
  clock_known_ = clock_known;
  if (keep_names_) {  // a flight recorder: each snapshot gets the head
    if (window_parts_ != nullptr) {
      // The first part starts sequence 1, which learns the process's name
      // (its descriptor in every later part carries it).
      append_pf_file_start(buf_, seq1_);
      std::string json;
      append_process_name(json);
      if (!seq1_.transcode(json, buf_)) ++decode_errors_;
      seq1_.settle(true);
      flush();
    }
    return;
  }
  if (pf_) {
    append_pf_head(buf_, 0, seq1_);
  } else {
    buf_.append("[\n");
    append_header(buf_, 0);
  }
  flush();
}

void TraceWriter::set_conversion(const ClockConversion& conversion) {
  info_.conversion = conversion;
  if (clock_known_) return;
  clock_known_ = true;
  if (keep_names_) return;  // in each snapshot's head (append_header)
  // Part of the head, like it: written whatever the cap, counted in the
  // bytes handed to the sink.
  if (pf_) {
    std::string json;
    append_clock(json);
    seq1_.transcode(json, buf_);
    seq1_.settle(true);
  } else {
    buf_.append(",\n");
    append_clock(buf_);
  }
  flush();
}

void TraceWriter::append_clock(std::string& out) {
  JsonWriter w(out);
  begin_process_metadata(w, "jitscope_clock", info_.pid);
  w.member("clock", clock_source_name(info_.clock));
  w.member("ns_per_tick", info_.conversion.is_identity() ? 1.0 : info_.conversion.ns_per_tick());
  w.member("calibration_window_ns", info_.conversion.window_ns());
  w.member("calibration_relative_uncertainty", info_.conversion.relative_uncertainty());
  w.end_object();
  w.end_object();
}

void TraceWriter::append_process_name(std::string& out) {
  JsonWriter w(out);
  begin_process_metadata(w, "process_name", info_.pid);
  w.member("name", std::string_view(info_.process_name));
  w.end_object();
  w.end_object();
}

void TraceWriter::append_header(std::string& out, std::uint64_t part) {
  append_process_name(out);
  out.append(",\n");
  JsonWriter w(out);
  begin_process_metadata(w, "jitscope_session", info_.pid);
  w.member("version", JITSCOPE_VERSION_STRING);
  w.member("clock", clock_source_name(info_.clock));
  w.member("session_start_unix_ns", info_.start_unix_ns);
  w.member("session_start_monotonic_ns", info_.start_monotonic_ns);
  w.member("host", std::string_view(info_.host));
  w.member("boot_id", std::string_view(info_.boot_id));
  w.member("owner", std::string_view(session_owner_tag(info_.pid, info_.boot_id)));
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
  if (!info_.compression.empty()) w.member("compression", std::string_view(info_.compression));
  if (info_.max_trace_bytes != 0) w.member("max_trace_bytes", info_.max_trace_bytes);
  if (rotating_) {
    w.member("rotate_bytes", info_.rotate_bytes);
    w.member("part", part);  // this file's number: 0 for the first
  }
  w.end_object();
  w.end_object();
  if (clock_known_) {
    out.append(",\n");
    append_clock(out);
  }
  for (const auto& [key, event] : names_) {
    out.append(",\n");
    out.append(event);
  }
}

void TraceWriter::remember_name(std::string_view what, std::int64_t pid, std::int64_t tid) {
  if (!(rotating_ || keep_names_) || capped_) return;
  const std::size_t at = mark_ + (pf_ ? 0 : 2);  // past the separator (JSON)
  names_[std::tuple(std::string(what), pid, tid)].assign(buf_, at, std::string::npos);
}

}  // namespace jitscope::detail
