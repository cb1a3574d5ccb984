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

#include "format/perfetto/interner.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
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
  // `static_name`: `name`'s static string (a record's), or nullptr; its
  // track and ids are then kept for counter_static (with `category`'s
  // address: a static string too, then).
  void counter(std::int64_t pid, std::string_view category, std::string_view name,
               std::uint64_t ts_ns, std::string_view number, std::string& out,
               const char* static_name = nullptr);
  // counter() for a static name it has seen in this file, its value a double
  // whose JSON spelling is known without spelling it: the same packet,
  // without the text's rendering and parse and the name's hashing (about
  // 1,800 instructions a sample, callgrind). false: nothing appended, call
  // counter() with the number's text.
  bool counter_static(std::int64_t pid, std::string_view category, const char* name,
                      std::uint64_t ts_ns, double value, std::string& out);
  // Static names' pointers may name other strings from now on.
  void forget_static_names() noexcept { ++epoch_; }

  // Cleared only by start_file (counter_static's cache counts on it).
  Interner interner;

 private:
  // counter_static's cache: by a static name's pointer, the track and the
  // ids counter() used for it, good while the epoch is this file's and no
  // commit has been cut since (the ids and the track's descriptor are then
  // in the file).
  struct CounterSlot {
    const char* name = nullptr;
    const char* category = nullptr;
    std::int64_t pid = 0;
    std::uint64_t epoch = 0;
    // The TrackEvent's fields before the value, encoded: type, track,
    // category id, name id (2 + 11 + 3 + 3 bytes at most: ids stay under
    // 2^14).
    std::uint8_t head_size = 0;
    char head[19] = {};
  };
  static constexpr std::size_t kCounterSlots = 64;
  CounterSlot& counter_slot(const char* name) noexcept;
  CounterSlot counter_slots_[kCounterSlots];
  std::uint64_t epoch_ = 1;

  struct Event;
  bool write_event(const Event& e, std::string& out, const Hints& hints);
  void ensure_process(std::int64_t pid, std::string& out);
  void describe(std::uint64_t uuid, std::string& out, std::string_view descriptor);
  bool described(std::uint64_t uuid) const { return described_.count(uuid) != 0; }

  std::uint64_t file_ns_ = 0;
  std::unordered_set<std::uint64_t> described_;
  // Process and thread names by track, kept across files: a track described
  // again in a later file (a flight recorder's part) keeps its name, as a
  // descriptor without one may read as a rename to nothing. One a thread
  // that ever had a name, as the writer's names for rotated heads.
  std::unordered_map<std::uint64_t, std::string> names_;
  std::vector<std::uint64_t> new_described_;  // since the last settle
};

}  // namespace jitscope::detail::pfw
