// The flight recorder's snapshots (flush/flusher.cpp): a head that makes
// the window's events load alone, and the spans open at the snapshot.
#include "format/trace_writer.hpp"

#include "format/json/trace_format.hpp"

#include <algorithm>

namespace jitscope::detail {

void TraceWriter::append_snapshot_head(std::string& out, std::string_view snapshot_event) {
  out.append("[\n");
  append_header(out, 0);
  out.append(",\n");
  out.append(snapshot_event);
}

std::size_t TraceWriter::append_open_spans(std::string& out, ThreadState& t, std::uint64_t end_ns) {
  if (t.consumer == nullptr) return 0;  // never drained: nothing open
  ThreadDecodeState& d = decode_state(t);
  if (d.summary == ~std::size_t{0} || d.depth == 0) return 0;
  // Rendered into buf_ as the writer renders any X event, then moved out:
  // these events go to the snapshot only, never to the window.
  std::string kept;
  kept.swap(buf_);
  // buf_ back as it was however this ends (out of memory included).
  struct Restore {
    std::string& buf;
    std::string& kept;
    ~Restore() { buf.swap(kept); }
  } restore{buf_, kept};
  // Innermost first, as close_open_spans ends them: each outer span ends
  // after its inner ones (the writer's tie rule).
  std::uint64_t floor = end_ns;
  for (std::size_t i = d.depth; i-- > 0;) {
    const ThreadDecodeState::OpenSpan& s = d.stack[i];
    const std::uint64_t end = std::max({floor, s.min_end_ns, s.begin_ns});
    buf_.append(",\n");
    write_x_event(span_category(s.flags),
                  s.static_name != nullptr ? std::string_view(s.static_name)
                                           : std::string_view(s.dynamic_name),
                  s.begin_ns, end, d, ArgsText::of(s, /*incomplete=*/true));
    floor = end + 1;
  }
  out.append(buf_);
  return d.depth;
}

}  // namespace jitscope::detail
