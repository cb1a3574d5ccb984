// The names of the files a session writes beside its output path: shared by
// the SDK and the tools (jitscope-ctl finds a process's snapshots by them).
#pragma once

#include <cstdint>
#include <string>

namespace jitscope::detail {

// `path` with ".<tag>" before its extension: trace.json -> trace.<tag>.json.
// Only a dot inside the last component, and not its first character
// (".trace" has no extension), starts an extension.
inline std::string tagged_path(const std::string& path, const std::string& tag) {
  const std::size_t slash = path.rfind('/');
  const std::size_t base = slash == std::string::npos ? 0 : slash + 1;
  std::size_t dot = path.rfind('.');
  if (dot == std::string::npos || dot <= base) dot = path.size();
  std::string out = path.substr(0, dot);
  out.push_back('.');
  out.append(tag);
  out.append(path, dot, std::string::npos);
  return out;
}

// The flight recorder's numbered snapshot n of process `pid`:
// trace.json -> trace.snapshot.<pid>.<n>.json.
inline std::string snapshot_path(const std::string& path, long pid, std::uint64_t n) {
  return tagged_path(path, "snapshot." + std::to_string(pid) + "." + std::to_string(n));
}

// A file that asks the flight recorder of process `pid` (as the process
// itself sees its pid) for a snapshot: trace.json -> trace.json.snapshot-request.<pid>;
// pid 0, every flight recorder writing to `path`: trace.json.snapshot-request.
// Not ending in the trace's extension, so no trace glob takes it.
inline std::string snapshot_request_path(const std::string& path, long pid) {
  std::string out = path + ".snapshot-request";
  if (pid != 0) out += "." + std::to_string(pid);
  return out;
}

}  // namespace jitscope::detail
