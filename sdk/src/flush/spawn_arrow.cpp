#include "flush/spawn_arrow.hpp"

#include "base/json_writer.hpp"
#include "base/spawn_flow.hpp"
#include "flush/file_sink.hpp"

#include <jitscope/detail/hot.hpp>

#include <sys/syscall.h>
#include <unistd.h>

namespace jitscope::detail {

std::string spawn_arrow_events(SpawnEnd end, std::int64_t parent_pid, std::int64_t child_pid,
                               std::string_view label) {
  const bool spawn = end == SpawnEnd::kSpawn;
  const std::uint64_t id = spawn_flow_id(this_boot_id(), parent_pid, child_pid);
  const std::uint64_t now = monotonic_ns();
  const auto pid = static_cast<std::int64_t>(::getpid());
  const auto tid = static_cast<std::int64_t>(::syscall(SYS_gettid));
  std::string text;
  JsonWriter w(text);
  w.begin_object();
  w.member("ph", "X");
  w.member("cat", kSpawnFlowCategory);
  w.member("name", spawn ? "spawn" : "spawned");
  w.key("ts");
  w.value_us(now);
  w.member("dur", 0);
  w.member("pid", pid);
  w.member("tid", tid);
  w.key("args");
  w.begin_object();
  if (spawn) {
    w.member("child_pid", child_pid);
    w.member("label", label);
  } else {
    w.member("parent_pid", parent_pid);
  }
  w.end_object();
  w.end_object();
  text.push_back(',');
  // The flow event right after its slice, at its time: a viewer binds it to
  // the slice open on the thread then, this one (as the GPU launch arrows).
  JsonWriter f(text);
  f.begin_object();
  f.member("ph", spawn ? "s" : "f");
  f.member("cat", kSpawnFlowCategory);
  f.member("name", kSpawnFlowName);
  f.member("id", id);
  f.key("ts");
  f.value_us(now);
  f.member("pid", pid);
  f.member("tid", tid);
  if (!spawn) f.member("bp", "e");
  f.end_object();
  return text;
}

}  // namespace jitscope::detail
