// The events of a spawn arrow (base/spawn_flow.hpp), in the JSON form: a
// zero-length slice on the marking thread ("spawn" in the parent, "spawned"
// in the worker) and the flow event bound to it ("s" or "f"), as one text.
// The Perfetto form's transcoder writes the slice with the flow id as a
// hint (flow_ids or terminating_flow_ids), as it does a GPU launch's.
#pragma once

#include "flush/perfetto/transcode.hpp"

#include <cstdint>
#include <string>
#include <string_view>

namespace jitscope::detail {

enum class SpawnEnd : std::uint8_t {
  kSpawn,    // the parent's: note_child_process(child_pid, ..., label)
  kArrival,  // the worker's: its first compile unit
};

// One end, taken where it happens; written by the flusher's next cycle.
struct SpawnMark {
  SpawnEnd end = SpawnEnd::kSpawn;
  std::int64_t parent_pid = 0, child_pid = 0;
  std::int64_t pid = 0, tid = 0;  // the marking thread's
  // Ticks of the session's clock: the flusher converts them as it converts
  // the rings' records, so the mark nests in the spans around it.
  std::uint64_t ticks = 0;
  std::string label;
};

// Now, on the calling thread. Throws only for allocation.
SpawnMark spawn_mark(SpawnEnd end, std::uint32_t session_word, std::int64_t parent_pid,
                     std::int64_t child_pid, std::string_view label);
// Its two events at `ns` (CLOCK_MONOTONIC), and in `hints` its flow id for
// the Perfetto form. Throws only for allocation.
std::string spawn_arrow_events(const SpawnMark& mark, std::uint64_t ns, pfw::Hints& hints);

}  // namespace jitscope::detail
