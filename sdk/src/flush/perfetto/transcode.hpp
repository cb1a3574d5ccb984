// The cold events in the Perfetto form: sequence 1 (the process sequence)
// and the transcoder that writes it.
//
// Single source: the cold events (process and thread names, session
// metadata, GPU slices, flows, counters, captured NVTX events, the closing
// stats) are rendered once, as the JSON form's event text, by the code that
// already does so (gpu_trace.cpp, trace_captured.cpp, trace_stats.cpp, ...);
// in the Perfetto form that text is parsed back here and written as
// packets by docs/perfetto-format.md's table. So each event's semantics
// live in one place, and the two forms cannot drift apart. The cost (a
// parse per event) is paid only by events that are rare next to spans.
// The hot events (spans, instants of the rings) are encoded straight from
// their records (trace_perfetto.cpp).
//
// Runs on the flusher only.
#pragma once

#include "flush/perfetto/interner.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

namespace jitscope::detail::pfw {

// What the JSON text does not say.
struct Hints {
  // Flow ids: `flow_out` on the slice that starts a flow (a CUDA launch's
  // call, a parent's spawn), `flow_in` on the one that ends it (the kernel,
  // the worker's spawned). The JSON form's
  // "s"/"f" events carry the same ids and are not written here.
  std::uint64_t flow_out = 0;
  std::uint64_t flow_in = 0;
  // Slices and instants go on the track of their category (an NVTX domain)
  // under their thread, not on the thread's own track.
  bool domain_track = false;
};

// Appends debug annotations (TrackEvent field 4) for the members of a JSON
// object's body (`"k":v,...`), names interned in `interner` (inline when the
// table is full). false: not valid JSON (nothing appended).
bool append_annotations(std::string_view members, Interner& interner, std::string& out);

class ProcessSequence {
 public:
  // A new file: no track described, no name interned. `file_ns` is the
  // time given to events that have none in JSON (metadata).
  void start_file(std::uint64_t file_ns);
  // Appends the packets of `json`, one or more JSON events separated by
  // commas and white space, to `out`. false: `json` did not parse, or an
  // event is not one the table maps (nothing appended for it).
  bool transcode(std::string_view json, std::string& out, const Hints& hints = {});
  // After the commit of what transcode appended: kept, or cut (then the
  // tracks it described are described again when next used).
  void settle(bool committed);
  // Describes the thread's track (and its process) if this file has not yet.
  void ensure_thread(std::int64_t pid, std::int64_t tid, std::string& out);
  // A counter sample: the JSON form's "C" event without its text, for the
  // writer's counters (a record each) and the transcoder alike. `number` is
  // the value as the JSON form spells it ("" or "null": none), so both forms
  // decide alike whether it is an integer.
  void counter(std::int64_t pid, std::string_view category, std::string_view name,
               std::uint64_t ts_ns, std::string_view number, std::string& out);

  Interner interner;

 private:
  struct Event;
  bool write_event(const Event& e, std::string& out, const Hints& hints);
  void ensure_process(std::int64_t pid, std::string& out);
  void describe(std::uint64_t uuid, std::string& out, std::string_view descriptor);
  bool described(std::uint64_t uuid) const { return described_.count(uuid) != 0; }

  std::uint64_t file_ns_ = 0;
  std::unordered_set<std::uint64_t> described_;
  std::vector<std::uint64_t> new_described_;  // since the last settle
};

}  // namespace jitscope::detail::pfw
