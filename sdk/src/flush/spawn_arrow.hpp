// The events of a spawn arrow (base/spawn_flow.hpp), in the JSON form: a
// zero-length slice on the calling thread ("spawn" in the parent, "spawned"
// in the worker) and the flow event bound to it ("s" or "f"), as one text
// for Flusher::add_metadata. The Perfetto form's transcoder turns the pair
// into one slice carrying flow_ids or terminating_flow_ids.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace jitscope::detail {

enum class SpawnEnd : std::uint8_t {
  kSpawn,    // the parent's: note_child_process(child_pid, ..., label)
  kArrival,  // the worker's: its first compile unit
};

// Now, on the calling thread of this process. Throws only for allocation.
std::string spawn_arrow_events(SpawnEnd end, std::int64_t parent_pid, std::int64_t child_pid,
                               std::string_view label);

}  // namespace jitscope::detail
