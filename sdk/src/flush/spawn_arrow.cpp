#include "flush/spawn_arrow.hpp"

#include "base/json_writer.hpp"
#include "base/spawn_flow.hpp"
#include "flush/file_sink.hpp"

#include <jitscope/detail/hot.hpp>

#include <sys/syscall.h>
#include <unistd.h>

namespace jitscope::detail {

SpawnMark spawn_mark(SpawnEnd end, std::uint32_t session_word, std::int64_t parent_pid,
                     std::int64_t child_pid, std::string_view label) {
  SpawnMark m;
  m.ticks = read_clock(session_word);
  m.end = end;
  m.parent_pid = parent_pid;
  m.child_pid = child_pid;
  m.pid = static_cast<std::int64_t>(::getpid());
  m.tid = static_cast<std::int64_t>(::syscall(SYS_gettid));
  m.label.assign(label.data(), label.size());
  return m;
}

std::string spawn_arrow_events(const SpawnMark& m, std::uint64_t ns, pfw::Hints& hints) {
  const bool spawn = m.end == SpawnEnd::kSpawn;
  // A process never changes boots. Never destroyed: the JITSCOPE_TRACE
  // session's flusher still writes after exit() has run the destructors of
  // statics made after it (TSan saw this one freed under the flusher).
  static const std::string* const boot_id = new std::string(this_boot_id());
  const std::uint64_t id = spawn_flow_id(*boot_id, m.parent_pid, m.child_pid);
  (spawn ? hints.flow_out : hints.flow_in) = id;
  std::string text;
  JsonWriter w(text);
  w.begin_object();
  w.member("ph", "X");
  w.member("cat", kSpawnFlowCategory);
  w.member("name", spawn ? "spawn" : "spawned");
  w.key("ts");
  w.value_us(ns);
  w.member("dur", 0);
  w.member("pid", m.pid);
  w.member("tid", m.tid);
  w.key("args");
  w.begin_object();
  if (spawn) {
    w.member("child_pid", m.child_pid);
    w.member("label", std::string_view(m.label));
  } else {
    w.member("parent_pid", m.parent_pid);
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
  f.value_us(ns);
  f.member("pid", m.pid);
  f.member("tid", m.tid);
  if (!spawn) f.member("bp", "e");
  f.end_object();
  return text;
}

}  // namespace jitscope::detail
