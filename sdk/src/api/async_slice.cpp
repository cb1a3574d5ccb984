// jitscope::async_begin/async_slice: a slice on a track of its own, written
// as a captured async range (the NVTX capture's start/end ranges take the
// same path to the trace: trace_captured.cpp), in the domain
// "jitscope.async" whatever the NVTX capture setting.
#include <jitscope/compile.hpp>
#include <jitscope/jitscope.hpp>

#include "base/json_writer.hpp"
#include "nvtx/captured_names.hpp"
#include "ring/producer.hpp"

#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>
#include <span>
#include <string>

namespace jitscope {

AsyncBegin async_begin() noexcept {
  const std::uint32_t s = detail::session_word();
  if (s == 0) return {};
  AsyncBegin b{s, detail::read_clock(s)};
  CompileId id;
  if (current_compile_id(&id)) {
    b.in_unit = true;
    b.unit_frame = id.frame;
    b.unit_attempt = id.attempt;
  }
  return b;
}

namespace {

// The args as JSON members ("k":v,...), after the name in `text`, the
// begin's compile id first.
std::size_t append_members(std::string& text, const AsyncBegin& begun, std::span<const Arg> args) {
  std::string object;
  detail::JsonWriter w(object);
  w.begin_object();
  if (begun.in_unit) {
    w.member("compile_id", CompileId{begun.unit_frame, begun.unit_attempt}.str());
  }
  for (const Arg& a : args) {
    if (a.key == nullptr) continue;
    switch (a.type) {
      case detail::ValueType::kInt: w.member(a.key, a.i64); break;
      case detail::ValueType::kUint: w.member(a.key, a.u64); break;
      case detail::ValueType::kDouble: w.member(a.key, a.f64); break;
      case detail::ValueType::kBool: w.member(a.key, a.b); break;
      case detail::ValueType::kString: w.member(a.key, a.str); break;
      default: break;
    }
  }
  w.end_object();
  if (object.size() <= 2) return 0;  // "{}"
  text.append(object, 1, object.size() - 2);
  return object.size() - 2;
}

}  // namespace

bool async_slice(std::uint64_t track, std::string_view name, AsyncBegin begun,
                 std::span<const Arg> args) noexcept {
  const std::uint32_t s = detail::session_word();
  // Another session may read another clock: its ticks mean nothing here.
  if (s == 0 || s != begun.session) return false;
  static const void* const domain = detail::captured_domain(detail::kAsyncSliceDomain);
  if (domain == nullptr) return false;  // out of memory, said
  detail::CapturedEvent e;
  e.kind = detail::CapturedKind::kAsyncRange;
  e.start_ts = begun.ticks;
  e.end_ts = detail::read_clock(s);
  e.domain = domain;
  e.id = track & ((std::uint64_t{1} << 53) - 1);  // exact as a JSON number
  // Not cached: this path is cold, and a cache would follow a fork into a
  // child whose thread has another tid.
  e.tid = static_cast<int>(::syscall(SYS_gettid));
  std::string text;  // the name, then the args (CapturedEvent::args_len)
  try {
    text.assign(name);
    if (!args.empty() || begun.in_unit) e.args_len = append_members(text, begun, args);
    e.dynamic_name = text;
  } catch (...) {
    e.args_len = 0;  // out of memory: the name alone, from the caller's bytes
    e.dynamic_name = name;
  }
  return detail::emit_captured(s, e);
}

}  // namespace jitscope
