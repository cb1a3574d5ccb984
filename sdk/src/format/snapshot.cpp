// The flight recorder's snapshots (flush/flusher.cpp): a head that makes
// the window's events load alone, the spans open at the snapshot, and in
// the Perfetto form the window's parts.
#include "format/trace_writer.hpp"

#include "base/perfetto_fields.hpp"
#include "format/json/trace_format.hpp"
#include "format/perfetto/tracks.hpp"
#include "sink/window_sink.hpp"

#include <algorithm>
#include <limits>

namespace jitscope::detail {
namespace {

// buf_ swapped out while a writer renders into it what goes elsewhere (a
// snapshot, a chunk's preamble); back as it was however that ends (out of
// memory included).
class BufferAside {
 public:
  explicit BufferAside(std::string& buf) : buf_(buf) { kept_.swap(buf_); }
  ~BufferAside() { buf_.swap(kept_); }
  BufferAside(const BufferAside&) = delete;
  BufferAside& operator=(const BufferAside&) = delete;

 private:
  std::string& buf_;
  std::string kept_;
};

}  // namespace

void TraceWriter::append_snapshot_head(std::string& out, std::string_view snapshot_event) {
  if (pf_) {
    // No first packet of its own: the window's oldest part's goes before it
    // (WindowSink::views_after), whose clock snapshot is older than now.
    // Its own sequence-1 state: every id it uses defined here, and the
    // window's parts define theirs again.
    pfw::ProcessSequence seq;
    seq.start_file(monotonic_ns());
    std::string json;
    append_header(json, 0);
    json.append(",\n");
    json.append(snapshot_event);
    if (!seq.transcode(json, out)) ++decode_errors_;
    return;
  }
  out.append("[\n");
  append_header(out, 0);
  out.append(",\n");
  out.append(snapshot_event);
}

std::size_t TraceWriter::append_open_spans(std::string& out, ThreadState& t, std::uint64_t end_ns) {
  if (t.consumer == nullptr) return 0;  // never drained: nothing open
  ThreadDecodeState& d = decode_state(t);
  if (d.summary == ~std::size_t{0} || d.depth == 0) return 0;
  // The innermost span's BEGIN into the window first, as settle() would.
  if (pf_ && d.pf->begin_pending) pf_flush_begin(d);
  // Rendered into buf_ as the writer renders any event, then moved out:
  // these go to the snapshot only, never to the window.
  const BufferAside aside(buf_);
  std::size_t ended = 0;
  // Innermost first, as close_open_spans ends them: each outer span ends
  // after its inner ones (the writer's tie rule).
  std::uint64_t floor = end_ns;
  for (std::size_t i = d.depth; i-- > 0;) {
    const ThreadDecodeState::OpenSpan& s = d.stack[i];
    const std::uint64_t end = std::max({floor, s.min_end_ns, s.begin_ns});
    floor = end + 1;
    if (pf_) {
      if ((s.pf_state & 3) != ThreadDecodeState::kPfBegun) continue;  // not in the window
      pf_snapshot_end(*d.pf, s, end);
    } else {
      buf_.append(",\n");
      write_x_event(span_category(s.flags),
                    s.static_name != nullptr ? std::string_view(s.static_name)
                                             : std::string_view(s.dynamic_name),
                    s.begin_ns, end, d, ArgsText::of(s, /*incomplete=*/true));
    }
    ++ended;
  }
  out.append(buf_);
  return ended;
}

void TraceWriter::pf_snapshot_end(ThreadDecodeState::PfSequence& q,
                                  const ThreadDecodeState::OpenSpan& s, std::uint64_t end_ns) {
  // On the thread's sequence, without changing its state: its time
  // absolute (the sequence's clock stays at its last packet), the names its
  // late args use defined in it (the window may hold those definitions in
  // a chunk that went), its own annotation inline.
  const std::uint64_t last_ns = q.last_ns;
  q.last_ns = std::numeric_limits<std::uint64_t>::max();
  pf_args_.clear();
  pf_fixed_args(q, pf_args_, nullptr,
                s.truncated && (s.pf_state & ThreadDecodeState::kPfTruncatedOnBegin) == 0,
                /*incomplete=*/true, /*intern=*/false);
  const std::string_view late = std::string_view(s.args).substr(s.pf_begin_args);
  // The definitions go in the packet as pending ones would: swapped in for
  // it, the live ones back after (none is taken between drains).
  std::string defs;
  q.interner.append_annotation_names(late, defs);
  defs.swap(q.interner.pending);
  pf_packet(q, end_ns, pf::event::kSliceEnd, {}, nullptr, {}, late, pf_args_);
  q.interner.settle(false);
  defs.swap(q.interner.pending);
  q.last_ns = last_ns;
}

void TraceWriter::set_window_parts(WindowSink* window, std::size_t part_bytes,
                                   std::uint32_t session) noexcept {
  window_parts_ = window;
  part_bytes_ = part_bytes;
  part_session_ = session;
  update_check();
}

void TraceWriter::next_window_part() {
  rotate_pending_ = false;
  flush();  // the part that ends, whole, into its chunk
  ++part_;
  file_base_ = base_;
  std::string preamble;
  if (part_threads_ != nullptr) {
    for (ThreadState* t : *part_threads_) {
      if (t != nullptr && t->session == part_session_ && t->consumer != nullptr) {
        append_begun_again(preamble, decode_state(*t));
      }
    }
  }
  window_parts_->start_part(std::move(preamble));
  append_pf_file_start(buf_, seq1_);
  update_check();
}

void TraceWriter::append_begun_again(std::string& out, ThreadDecodeState& d) {
  if (!d.pf || d.summary == ~std::size_t{0}) return;
  // The open spans, and the one whose END starts the part (popped just
  // before, the innermost).
  const std::size_t open = d.depth + (popped_span(d) != nullptr ? 1 : 0);
  std::size_t first = 0;
  while (first < open && (d.stack[first].pf_state & 3) != ThreadDecodeState::kPfBegun) ++first;
  if (first == open) return;
  ThreadDecodeState::PfSequence& q = *d.pf;
  const BufferAside aside(buf_);
  // As pf_start begins them again in a rotated file, into `out`: the
  // sequence started (the ids their args use defined), each span's BEGIN
  // with the args it had. Its packets in the part start the sequence again
  // (q.part is left).
  pf_restart_sequence(d, d.stack[first].begin_ns);  // the outermost: the earliest
  for (std::size_t i = first; i < open; ++i) {
    ThreadDecodeState::OpenSpan& s = d.stack[i];
    if ((s.pf_state & 3) != ThreadDecodeState::kPfBegun) continue;
    pf_begin_again(q, s);
    s.pf_part = part_;
  }
  q.interner.settle(true);
  out.append(buf_);
}

}  // namespace jitscope::detail
