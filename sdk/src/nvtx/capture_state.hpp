// The NVTX capture's private state (nvtx.hpp is its interface), shared by the
// files that each do one of its jobs:
//   capture_attach.cpp      attaching to an NVTX instance (its export table:
//                           the CORE and CORE2 slots pointed here), the entry
//                           points, and the session switch, totals and fork
//   capture_ranges.cpp      push/pop ranges and marks: the per-thread stack
//                           of open ranges, written whole at the pop
//   capture_async.cpp       start/end ranges, kept process-wide from start to end
//   capture_naming.cpp      names: domains, registered strings, categories,
//                           threads (and the resource slots, which only answer)
//   capture_attributes.hpp  what a call says (message, payload, category)
//
// Each slot is a C function pointer NVTX calls from the host's own call:
// none lets an exception out. Without a session the handlers only keep
// push/pop balance (so a pop inside a later session is not miscounted) and
// return.
#pragma once

#define NVTX_NO_IMPL  // a tool: types only, not the NVTX implementation
#include <nvtx3/nvToolsExt.h>

#include "base/boundary.hpp"
#include "base/immortal.hpp"
#include "base/per_thread.hpp"
#include "nvtx/captured_names.hpp"
#include "nvtx/nvtx.hpp"
#include "ring/producer.hpp"

#include <jitscope/nvtx.hpp>

#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace jitscope::detail::nvtx_capture {

// What the capture lost or could not match (rare paths: a shared atomic is
// fine). What it wrote is counted by the trace writer, off the hot path.
struct Counters {
  // relaxed: independent tallies, read at session end.
  std::atomic<std::uint64_t> thread_names{0}, unbalanced_pops{0}, unknown_ends{0}, dropped{0};
};
inline Counters& counters() noexcept { return immortal<Counters>(); }
inline void tally(std::atomic<std::uint64_t>& c) noexcept {
  c.fetch_add(1, std::memory_order_relaxed);
}

// Per session config (nvtx_capture_begin_session); relaxed: a switch.
inline std::atomic<bool> g_capture_on{true};

// The session to record into, or 0: none, capture off, or this call is
// jitscope's own emission (already in the trace as a span).
inline std::uint32_t capture_session() noexcept {
  const std::uint32_t s = session_word();
  if (s == 0 || !g_capture_on.load(std::memory_order_relaxed)) return 0;
  return s;
}

// The calling thread's kernel tid, cached: 0 until its first capture, and
// again in a forked child's thread (nvtx_unlock_after_fork), which must
// not keep its parent's.
inline constinit thread_local int t_capture_tid = 0;
inline int thread_tid() noexcept {
  if (t_capture_tid == 0) t_capture_tid = static_cast<int>(::syscall(SYS_gettid));
  return t_capture_tid;
}

// A push not yet popped.
struct OpenRange {
  const CapturedDomain* domain;
  std::uint32_t session;  // 0: pushed with no session; never written
  std::uint64_t start;
  const char* name;  // interned, or nullptr: `name_len` bytes at `name_off` in the arena
  std::uint32_t name_off;
  std::uint32_t name_len;
  ValueType payload_type;
  std::uint64_t payload;
  std::uint32_t category;
};

// Deeper pushes on one thread are counted as dropped, and as many pops are
// then taken for them: a program that pushes without popping cannot grow
// memory without bound.
inline constexpr std::size_t kMaxOpenPerThread = 4096;
inline constexpr std::size_t kMaxNameBytes = 4096;  // longer captured names are cut

struct CaptureThread {
  std::vector<OpenRange> stack;
  std::string arena;         // copied names of open ranges, in push order
  std::size_t overflow = 0;  // pushes beyond kMaxOpenPerThread not yet popped
  std::string scratch;       // wide-to-UTF-8 conversions
};
// nullptr while the thread exits: NVTX calls from teardown are then ignored.
using CaptureThreadState = PerThread<CaptureThread, struct CaptureThreadTag>;

inline CapturedDomain* domain_of(nvtxDomainHandle_t d) noexcept {
  return d != nullptr ? reinterpret_cast<CapturedDomain*>(d) : captured_default_domain();
}

// The boundary of an event slot's body (a mark, a push, a start: once per
// event of the host): the body's result, or `if_failed` if it throws (out of
// memory copying a name or growing a stack).
template <class Result, class Body>
Result quiet_in_slot(Result if_failed, Body&& body) noexcept {
  Result out = if_failed;
  // Quiet: the slot runs inside the host's NVTX call, once per event, and a
  // report would add the log's lock and allocations to that path; what the
  // failure costs is the one event.
  (void)guarded_quiet([&] { out = std::forward<Body>(body)(); });
  return out;
}
template <class Body>
void quiet_in_slot(Body&& body) noexcept {
  (void)guarded_quiet(std::forward<Body>(body));  // quiet: as above
}

// ---- the slot tables attach() writes into an NVTX instance ----
struct SlotTables {
  NvtxFunctionPointer core[NVTX_CBID_CORE_SIZE] = {};
  NvtxFunctionPointer core2[NVTX_CBID_CORE2_SIZE] = {};
};
template <class F>
NvtxFunctionPointer slot(F f) noexcept {
  return reinterpret_cast<NvtxFunctionPointer>(f);
}
// Each file fills in the slots it handles.
void add_range_slots(SlotTables& t) noexcept;   // capture_ranges.cpp
void add_async_slots(SlotTables& t) noexcept;   // capture_async.cpp
void add_naming_slots(SlotTables& t) noexcept;  // capture_naming.cpp

// ---- capture_async.cpp ----
// Forgets the ranges an earlier session started (they can never be written).
void forget_open_async_ranges() noexcept;
void lock_async_ranges_for_fork() noexcept;
void unlock_async_ranges_after_fork() noexcept;

}  // namespace jitscope::detail::nvtx_capture
