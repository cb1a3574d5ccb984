#include "format/spawn_arrow.hpp"

#include "base/json_writer.hpp"
#include "base/spawn_flow.hpp"
#include "sink/file_sink.hpp"

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

SpawnMark task_mark(SpawnEnd end, std::uint32_t session_word, std::int64_t sender_pid,
                    std::uint64_t task) {
  SpawnMark m = spawn_mark(end, session_word, sender_pid, 0, std::string_view());
  m.task = task;
  return m;
}

std::string spawn_arrow_events(const SpawnMark& m, std::uint64_t ns, pfw::Hints& hints) {
  const bool task = m.end == SpawnEnd::kTaskSent || m.end == SpawnEnd::kTaskStart;
  const bool out = m.end == SpawnEnd::kSpawn || m.end == SpawnEnd::kTaskSent;
  // A process never changes boots. Never destroyed: the JITSCOPE_TRACE
  // session's flusher still writes after exit() has run the destructors of
  // statics made after it (TSan saw this one freed under the flusher).
  static const std::string* const boot_id = new std::string(this_boot_id());
  const std::uint64_t id = task ? task_flow_id(*boot_id, m.parent_pid, m.task)
                                : spawn_flow_id(*boot_id, m.parent_pid, m.child_pid);
  (out ? hints.flow_out : hints.flow_in) = id;
  static constexpr std::string_view kSliceNames[] = {"spawn", "spawned", "task sent", "task"};
  std::string text;
  JsonWriter w(text);
  w.begin_object();
  w.member("ph", "X");
  w.member("cat", kSpawnFlowCategory);
  w.member("name", kSliceNames[static_cast<int>(m.end)]);
  w.key("ts");
  w.value_us(ns);
  w.member("dur", 0);
  w.member("pid", m.pid);
  w.member("tid", m.tid);
  w.key("args");
  w.begin_object();
  switch (m.end) {
    case SpawnEnd::kSpawn:
      w.member("child_pid", m.child_pid);
      w.member("label", std::string_view(m.label));
      break;
    case SpawnEnd::kArrival: w.member("parent_pid", m.parent_pid); break;
    case SpawnEnd::kTaskSent: w.member("task", m.task); break;
    case SpawnEnd::kTaskStart:
      w.member("sender_pid", m.parent_pid);
      w.member("task", m.task);
      break;
  }
  w.end_object();
  w.end_object();
  text.push_back(',');
  // The flow event right after its slice, at its time: a viewer binds it to
  // the slice open on the thread then, this one (as the GPU launch arrows).
  JsonWriter f(text);
  f.begin_object();
  f.member("ph", out ? "s" : "f");
  f.member("cat", kSpawnFlowCategory);
  f.member("name", task ? kTaskFlowName : kSpawnFlowName);
  f.member("id", id);
  f.key("ts");
  f.value_us(ns);
  f.member("pid", m.pid);
  f.member("tid", m.tid);
  if (!out) f.member("bp", "e");
  f.end_object();
  return text;
}

}  // namespace jitscope::detail
