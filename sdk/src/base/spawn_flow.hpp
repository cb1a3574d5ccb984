// The arrow from a parent process's spawn of a worker to the worker's first
// compile unit (docs/perfetto-format.md, "Flows"). Its two ends are written
// by two processes into two files, so its id cannot come from a counter:
// both compute it from what both know, the machine's boot id and the two
// pids (the parent from note_child_process, the worker from its
// JITSCOPE_PARENT_PID). Spawn ids live in [2^52, 2^53): apart from the
// CUPTI correlation ids (32 bits) and the ids jitscope-merge renumbers to
// (counting from 1), and exact as a JSON number (doubles hold 2^53).
#pragma once

#include <charconv>
#include <cstdint>
#include <string_view>

namespace jitscope::detail {

inline constexpr std::uint64_t kSpawnFlowLow = std::uint64_t{1} << 52;
inline constexpr std::uint64_t kSpawnFlowEnd = std::uint64_t{1} << 53;

// The JSON form's category and name of a spawn arrow's "s"/"f" events (a
// viewer pairs v1 flow events by category, name and id).
inline constexpr std::string_view kSpawnFlowCategory = "jitscope.process";
inline constexpr std::string_view kSpawnFlowName = "spawn";

constexpr bool is_spawn_flow(std::uint64_t id) noexcept {
  return id >= kSpawnFlowLow && id < kSpawnFlowEnd;
}

// FNV-1a over the boot id and both pids: the same in both processes.
constexpr std::uint64_t spawn_flow_id(std::string_view boot_id, std::int64_t parent_pid,
                                      std::int64_t child_pid) noexcept {
  std::uint64_t h = 0xcbf29ce484222325u;
  const auto add = [&h](std::uint64_t byte) {
    h ^= byte;
    h *= 0x100000001b3u;
  };
  for (const char c : boot_id) add(static_cast<unsigned char>(c));
  for (const std::int64_t pid : {parent_pid, child_pid}) {
    for (int i = 0; i < 8; ++i) add((static_cast<std::uint64_t>(pid) >> (8 * i)) & 0xff);
  }
  return kSpawnFlowLow | (h & (kSpawnFlowLow - 1));
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
