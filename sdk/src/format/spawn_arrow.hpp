// The events of an arrow between processes (base/spawn_flow.hpp), in the
// JSON form: a zero-length slice on the marking thread ("spawn" / "spawned"
// for a worker's spawn, "task sent" / "task" for a task handed over) and
// the flow event bound to it ("s" or "f"), as one text. The Perfetto form's
// transcoder writes the slice with the flow id as a hint (flow_ids or
// terminating_flow_ids), as it does a GPU launch's.
#pragma once

#include "format/perfetto/transcode.hpp"

#include <cstdint>
#include <string>
#include <string_view>

namespace jitscope::detail {

enum class SpawnEnd : std::uint8_t {
  kSpawn,      // the parent's: note_child_process(child_pid, ..., label)
  kArrival,    // the worker's: its first compile unit
  kTaskSent,   // note_task_sent(task): parent_pid is this process
  kTaskStart,  // note_task_received(sender_pid, task): parent_pid is the sender
};

// One end, taken where it happens; written by the flusher's next cycle.
struct SpawnMark {
  SpawnEnd end = SpawnEnd::kSpawn;
  std::int64_t parent_pid = 0, child_pid = 0;
  std::uint64_t task = 0;         // the task's key (task ends only)
  std::int64_t pid = 0, tid = 0;  // the marking thread's
  // Ticks of the session's clock: the flusher converts them as it converts
  // the rings' records, so the mark nests in the spans around it.
  std::uint64_t ticks = 0;
  std::string label;
};

// Now, on the calling thread. Throws only for allocation.
SpawnMark spawn_mark(SpawnEnd end, std::uint32_t session_word, std::int64_t parent_pid,
                     std::int64_t child_pid, std::string_view label);
// A task's end now, on the calling thread: kTaskSent or kTaskStart.
SpawnMark task_mark(SpawnEnd end, std::uint32_t session_word, std::int64_t sender_pid,
                    std::uint64_t task);
// Its two events at `ns` (CLOCK_MONOTONIC), and in `hints` its flow id for
// the Perfetto form. Throws only for allocation.
std::string spawn_arrow_events(const SpawnMark& mark, std::uint64_t ns, pfw::Hints& hints);

}  // namespace jitscope::detail
