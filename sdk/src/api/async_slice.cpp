// jitscope::async_begin/async_slice: a slice on a track of its own, written
// as a captured async range (the NVTX capture's start/end ranges take the
// same path to the trace: trace_captured.cpp), in the domain
// "jitscope.async" whatever the NVTX capture setting.
#include <jitscope/jitscope.hpp>

#include "nvtx/captured_names.hpp"
#include "ring/producer.hpp"

#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>

namespace jitscope {

AsyncBegin async_begin() noexcept {
  const std::uint32_t s = detail::session_word();
  if (s == 0) return {};
  return AsyncBegin{s, detail::read_clock(s)};
}

bool async_slice(std::uint64_t track, std::string_view name, AsyncBegin begun) noexcept {
  const std::uint32_t s = detail::session_word();
  // Another session may read another clock: its ticks mean nothing here.
  if (s == 0 || s != begun.session) return false;
  static const void* const domain = detail::captured_domain(detail::kAsyncSliceDomain);
  if (domain == nullptr) return false;  // out of memory, said
  static constinit thread_local int tid = 0;
  if (tid == 0) tid = static_cast<int>(::syscall(SYS_gettid));
  detail::CapturedEvent e;
  e.kind = detail::CapturedKind::kAsyncRange;
  e.start_ts = begun.ticks;
  e.end_ts = detail::read_clock(s);
  e.dynamic_name = name;
  e.domain = domain;
  e.id = track & ((std::uint64_t{1} << 53) - 1);  // exact as a JSON number
  e.tid = tid;
  return detail::emit_captured(s, e);
}

}  // namespace jitscope
