// The trace writer's closing part: per-thread summaries, the dropped-event
// counter and the jitscope_stats event, fitted under the cap when there is one.
#include "format/trace_writer.hpp"

#include "format/json/trace_format.hpp"

#include "base/json_writer.hpp"
#include "compile/artifacts.hpp"
#include "compile/state.hpp"
#include "format/gpu_trace.hpp"
#include "ring/thread_registry.hpp"

#include <algorithm>

namespace jitscope::detail {

namespace {

void append_thread_entry(JsonWriter& w, const ThreadSummary& s) {
  w.begin_object();
  w.member("tid", s.tid);
  w.member("name", std::string_view(s.name));
  w.member("events", s.events);
  w.member("dropped", s.dropped);
  if (s.args_dropped != 0) w.member("args_dropped", s.args_dropped);
  if (s.unbalanced_ends != 0) w.member("unbalanced_ends", s.unbalanced_ends);
  if (s.out_of_order_ends != 0) w.member("ended_out_of_order", s.out_of_order_ends);
  if (s.truncated != 0) w.member("strings_truncated", s.truncated);
  w.end_object();
}

}  // namespace

void TraceWriter::settle(ThreadState& t) {
  const auto dropped = t.dropped.load(std::memory_order_relaxed);
  const auto args_dropped = t.args_dropped.load(std::memory_order_relaxed);
  const auto unbalanced = t.unbalanced_ends.load(std::memory_order_relaxed);
  const auto out_of_order = t.out_of_order_ends.load(std::memory_order_relaxed);
  const auto truncated = t.truncated.load(std::memory_order_relaxed);
  const bool counted = dropped + args_dropped + unbalanced + out_of_order + truncated != 0;
  // A thread that never recorded nor lost anything gets no entry, and no
  // decoding state is made for it (allocation on the flusher, maybe in a
  // crash cycle, only for threads that have something to say).
  if (t.consumer == nullptr && !counted) return;
  ThreadDecodeState& d = decode_state(t);
  if (d.summary == ~std::size_t{0}) {
    if (!counted) return;  // never recorded
    prepare(t);
  }
  ThreadSummary& s = summaries_[d.summary];
  s.dropped = dropped;
  s.args_dropped = args_dropped;
  s.unbalanced_ends = unbalanced;
  s.out_of_order_ends = out_of_order;
  s.truncated = truncated;
}

std::uint64_t TraceWriter::out_of_order_ends() const noexcept {
  std::uint64_t total = 0;
  for (const ThreadSummary& s : summaries_) total += s.out_of_order_ends;
  return total;
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
  if (cold_commit(false)) last_dropped_ = total_dropped;
}

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
  begin_process_metadata(w, "jitscope_stats", info_.pid);
  w.member("events_written", events_);
  w.member("events_dropped", events_dropped());
  w.member("events_lost_outside_rings", lost_);
  w.member("args_dropped", args_dropped);
  w.member("spans_incomplete", incomplete_);
  w.member("unbalanced_ends", unbalanced);
  w.member("spans_ended_out_of_order", out_of_order_ends());
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
    w.member("events_not_written", over_cap_);          // as counted in events_written
    w.member("metadata_not_written", other_over_cap_);  // names, flows
    w.end_object();
  }
  if (info_.rotate_bytes != 0) w.member("trace_files", part_ + 1);
  // The file lacks events since then (SessionStats::write_failed); the
  // counts above are of events made, not of those in the file.
  if (sink_.failed()) w.member("write_failed", true);
  if (const std::uint64_t n = metrics_records_dropped(); n != 0) {
    w.member("compile_records_dropped", n);  // the metrics file lacks them
  }
  if (const ArtifactTotals a = artifact_totals(); a.written != 0 || a.over_cap != 0) {
    w.key("artifacts");
    w.begin_object();
    w.member("written", a.written);
    w.member("bytes", a.bytes);
    w.member("over_cap", a.over_cap);
    w.end_object();
  }
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
  // The events first, on their own: should they not all fit on the disk,
  // the closing part still gets its try (TraceSink::write_closing).
  flush();
  // Straight into buf_, past commit(): the cap kept room for it. Should
  // that room be short (the extra stats are not bounded; threads first seen
  // once the trace was full widen the stats after the fact), it is written
  // again with less: without the extra stats, then with the threads that fit.
  const std::size_t at = buf_.size();
  const std::uint64_t dropped = events_dropped();
  // The protobuf form renders the same JSON aside and transcodes it.
  std::string json;
  const auto render = [&](bool extra, std::size_t threads) {
    buf_.resize(at);
    std::string& out = pf_ ? json : buf_;
    json.clear();
    if (dropped != last_dropped_) {
      out.append(",\n");
      append_dropped_counter(out, dropped);
    }
    append_stats(out, nvtx, extra ? &extra_stats : nullptr, threads);
    if (pf_) {
      seq1_.transcode(json, buf_);
      seq1_.settle(false);  // each try carries all of its names' definitions
    }
    buf_.append(close_file());
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
  sink_.write_closing(buf_);
  base_ += buf_.size();
  buf_.clear();
  update_check();
}

}  // namespace jitscope::detail
