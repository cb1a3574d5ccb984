// The calls of <jitscope/jitscope.hpp> compiled out (JITSCOPE_DISABLE):
// inline no-ops, so a disabled consumer links no jitscope library and never
// starts a session. Internal: included by <jitscope/jitscope.hpp>.
#pragma once

#if !defined(JITSCOPE_DISABLE)
#error "detail/disabled_jitscope.hpp is for JITSCOPE_DISABLE builds only"
#endif

JITSCOPE_NAMESPACE_BEGIN

// Reads no variable: `*out` keeps its values. The error says why.
inline Status Config::from_env(Config* out, bool require_trace) noexcept {
  static_cast<void>(out), static_cast<void>(require_trace);
  return Status::error(JITSCOPE_COMPILED_OUT_MESSAGE);
}
// Nothing to check: no session can use the config.
inline Status Config::validate() const noexcept { return {}; }

// Starts nothing; says that jitscope is compiled out.
inline Status start(const Config& config) noexcept {
  static_cast<void>(config);
  return Status::error(JITSCOPE_COMPILED_OUT_MESSAGE);
}
// No session to stop: ok, and `*stats` is all zero.
inline Status stop(SessionStats* stats) noexcept {
  if (stats != nullptr) *stats = SessionStats{};
  return {};
}
// As without a session: an error.
inline Status note_child_process(int pid, std::string_view trace_path,
                                 std::string_view label) noexcept {
  static_cast<void>(pid), static_cast<void>(trace_path), static_cast<void>(label);
  return Status::error(JITSCOPE_COMPILED_OUT_MESSAGE);
}
inline void mark_ready() noexcept {}
inline Status snapshot(std::string_view path) noexcept {
  static_cast<void>(path);
  return Status::error(JITSCOPE_COMPILED_OUT_MESSAGE);
}
inline Status note_task_sent(std::uint64_t task) noexcept {
  static_cast<void>(task);
  return Status::error(JITSCOPE_COMPILED_OUT_MESSAGE);
}
inline Status note_task_received(std::int64_t sender_pid, std::uint64_t task) noexcept {
  static_cast<void>(sender_pid), static_cast<void>(task);
  return Status::error(JITSCOPE_COMPILED_OUT_MESSAGE);
}
inline AsyncBegin async_begin() noexcept { return {}; }
inline bool async_slice(std::uint64_t track, std::string_view name, AsyncBegin begun,
                        std::span<const Arg> args) noexcept {
  static_cast<void>(track), static_cast<void>(name), static_cast<void>(begun),
      static_cast<void>(args);
  return false;
}
inline std::string worker_trace_path(std::string_view trace_path, int pid) noexcept {
  static_cast<void>(trace_path), static_cast<void>(pid);
  return {};  // a query: empty
}
inline void set_thread_name(std::string_view name) noexcept { static_cast<void>(name); }

JITSCOPE_NAMESPACE_END
