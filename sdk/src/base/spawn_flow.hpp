// The arrows between processes (docs/perfetto-format.md, "Flows"):
//   spawn  from a parent's note_child_process to the worker's first
//          compile unit;
//   task   from note_task_sent(key) where a process hands work over to
//          note_task_received(sender_pid, key) where another starts it (a
//          process pool's task).
// Their two ends are written by two processes into two files, so an id
// cannot come from a counter: both compute it from what both know, the
// machine's boot id and two pids (spawn: the parent's and the worker's, the
// worker's parent from JITSCOPE_PARENT_PID) or the sender's pid and the key
// (task). Process arrow ids live in [2^52, 2^53), spawn ids in its lower
// half and task ids in its upper half: apart from the CUPTI correlation ids
// (32 bits) and the ids jitscope-merge renumbers to (counting from 1), and
// exact as a JSON number (doubles hold 2^53).
#pragma once

#include <charconv>
#include <cstdint>
#include <string_view>

namespace jitscope::detail {

inline constexpr std::uint64_t kSpawnFlowLow = std::uint64_t{1} << 52;
inline constexpr std::uint64_t kTaskFlowLow = kSpawnFlowLow | (kSpawnFlowLow >> 1);
inline constexpr std::uint64_t kProcessFlowEnd = std::uint64_t{1} << 53;

// The JSON form's category and names of these arrows' "s"/"f" events (a
// viewer pairs v1 flow events by category, name and id).
inline constexpr std::string_view kSpawnFlowCategory = "jitscope.process";
inline constexpr std::string_view kSpawnFlowName = "spawn";
inline constexpr std::string_view kTaskFlowName = "task";

constexpr bool is_spawn_flow(std::uint64_t id) noexcept {
  return id >= kSpawnFlowLow && id < kTaskFlowLow;
}
constexpr bool is_task_flow(std::uint64_t id) noexcept {
  return id >= kTaskFlowLow && id < kProcessFlowEnd;
}
// Either: an arrow whose other end is in another process's file.
constexpr bool is_process_flow(std::uint64_t id) noexcept {
  return id >= kSpawnFlowLow && id < kProcessFlowEnd;
}

// FNV-1a over the boot id and two 64-bit numbers: the same in both processes.
constexpr std::uint64_t process_flow_hash(std::string_view boot_id, std::uint64_t a,
                                          std::uint64_t b) noexcept {
  std::uint64_t h = 0xcbf29ce484222325u;
  const auto add = [&h](std::uint64_t byte) {
    h ^= byte;
    h *= 0x100000001b3u;
  };
  for (const char c : boot_id) add(static_cast<unsigned char>(c));
  for (const std::uint64_t n : {a, b}) {
    for (int i = 0; i < 8; ++i) add((n >> (8 * i)) & 0xff);
  }
  return h;
}

constexpr std::uint64_t spawn_flow_id(std::string_view boot_id, std::int64_t parent_pid,
                                      std::int64_t child_pid) noexcept {
  const std::uint64_t h = process_flow_hash(boot_id, static_cast<std::uint64_t>(parent_pid),
                                            static_cast<std::uint64_t>(child_pid));
  return kSpawnFlowLow | (h & (kTaskFlowLow - kSpawnFlowLow - 1));
}

constexpr std::uint64_t task_flow_id(std::string_view boot_id, std::int64_t sender_pid,
                                     std::uint64_t key) noexcept {
  const std::uint64_t h = process_flow_hash(boot_id, static_cast<std::uint64_t>(sender_pid), key);
  return kTaskFlowLow | (h & (kProcessFlowEnd - kTaskFlowLow - 1));
}

// pid_t's range (Linux's own limit, pid_max, is at most 2^22).
inline constexpr std::int64_t kMaxPid = 0x7fffffff;

// A JITSCOPE_PARENT_PID value: decimal digits only, a pid in [1, kMaxPid].
inline bool parse_parent_pid(std::string_view text, std::int64_t& pid) noexcept {
  std::int64_t n = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec != std::errc() || end != text.data() + text.size() || n < 1 || n > kMaxPid) return false;
  pid = n;
  return true;
}

}  // namespace jitscope::detail
