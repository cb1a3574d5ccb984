// The flusher's side of the CUPTI collector: joins GPU activity with the
// CUDA calls jitscope saw on its threads (kGpuCall records) by CUPTI's
// correlation id, and writes GPU tracks, CUDA API slices and launch flows
// into the trace, plus per-compile-unit GPU metrics. Flusher thread only.
//
// Records come in any order: a kernel before its API record, an external
// correlation after both. What is incomplete waits `grace` cycles, each a
// flusher cycle at least one flush interval after the last (a flusher
// woken early runs cycles faster, and must not cut the wait short; one
// behind its interval waits as many cycles as before), then is written
// with what is known (a GPU record without its call is written with
// "unattributed": true and counted).
#pragma once

#include "cupti/cupti.hpp"
#include "cupti/gpu_activity.hpp"

#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

namespace jitscope::detail {

class JsonWriter;
class TraceWriter;

// A CUDA call as the flusher decoded it from the caller's ring.
struct GpuCall {
  int tid = 0;
  GpuCallRole role = GpuCallRole::kOther;
  std::string span;  // innermost open jitscope span ("" if none)
  bool in_unit = false;
  std::uint64_t unit = 0;  // packed compile id of the unit open there
  std::string unit_name;   // that unit's slice name, "[F/A] name"
  const GpuUnitTag* compiled_by = nullptr;
  // A launch: the kernel's name as the launch gave it (interned; nullptr:
  // none), which names its GPU slice instead of CUPTI's record.
  const std::string* kernel_name = nullptr;
};

// Totals over a session, for the stats event and SessionStats.
struct GpuTraceTotals {
  std::uint64_t gpu_events = 0;      // kernels, copies, sets on GPU tracks
  std::uint64_t api_events = 0;      // CUDA runtime/driver calls on CPU threads
  std::uint64_t other_events = 0;    // sync, JIT, overhead slices
  std::uint64_t flows = 0;           // launch -> GPU arrows
  std::uint64_t unattributed = 0;    // GPU records whose call never arrived
  std::uint64_t calls_unused = 0;    // calls no record ever matched (expired)
  std::uint64_t external_ids = 0;    // external correlation records
  std::uint64_t overhead_ns = 0;     // CUPTI overhead records, summed
  std::uint64_t calls = 0;           // CUDA calls the API callback recorded (kGpuCall)
  std::uint64_t incomplete = 0;      // records without timestamps (still running at stop)
  std::uint64_t before_session = 0;  // records that ended before the session began
};

class GpuTrace {
 public:
  // `session_start_ns`: CLOCK_MONOTONIC; records that ended before are not
  // this session's (CUPTI held them since an earlier one) and are counted.
  // `cycle_ns`: the flush interval; waits and expiry count cycles at least
  // this far apart.
  GpuTrace(int host_pid, const GpuClock& clock, std::uint64_t session_start_ns,
           std::uint64_t cycle_ns, std::uint32_t grace_cycles);

  // The flusher thread's OS tid: CUPTI overhead reported on it goes on a
  // track named "jitscope flusher" (on an H100 CUPTI reported its buffer
  // overhead on its own worker thread instead).
  void set_flusher_tid(int tid) noexcept { flusher_tid_ = tid; }
  void on_call(std::uint32_t correlation, GpuCall call);
  // Takes the batch's records (leaves it empty).
  void add(std::vector<GpuActivity>& batch);
  // A flusher cycle at `now_ns` (CLOCK_MONOTONIC): writes what is complete,
  // and what has waited long enough; `final`: everything.
  void write(TraceWriter& writer, bool final, std::uint64_t now_ns);

  // `"cupti":{...}` members for the stats event.
  void write_stats(JsonWriter& w, const CuptiSessionState& state,
                   const GpuCollectorCounts& counts) const;
  // One metrics line per compile unit with GPU activity (`"record":"gpu"`).
  void unit_metric_lines(std::vector<std::string>& out) const;
  const GpuTraceTotals& totals() const noexcept { return totals_; }

  // The trace pid of a device's process: 10,000,000 × (device + 1) + host pid,
  // so that merged traces of several processes do not collide.
  static std::int64_t device_pid(std::uint32_t device, int host_pid) noexcept;

 private:
  struct Api {
    std::uint64_t start_ns = 0;
    int tid = 0;
    std::uint64_t cycle = 0;  // when it arrived, for expiry
    // The protobuf form only: the call's slice, held until its GPU work
    // comes (then written with the flow id) or never will (then without):
    // a flow id is written only with its end (docs/perfetto-format.md).
    std::string held;
  };
  struct Pending {
    GpuActivity a;
    std::uint64_t cycle = 0;
  };
  struct UnitGpu {
    std::string name;  // the unit's slice name, "[F/A] name"
    std::uint64_t kernels = 0, kernel_ns = 0;
    std::uint64_t memcpys = 0, memcpy_bytes = 0, memcpy_ns = 0;
    std::uint64_t memsets = 0, memset_ns = 0;
    std::uint64_t compiled_launches = 0, compiled_kernel_ns = 0;
    std::uint64_t jit_ops = 0, jit_ns = 0, jit_compiles = 0, jit_cache_loads = 0;
  };
  struct StoredCall {
    GpuCall call;
    std::uint64_t cycle = 0;
    bool api_written = false;  // a launch is forgotten once both are written
    bool gpu_written = false;
  };

  // Writes `a` if it can be placed now (or `force`); false: keep waiting.
  bool try_write(TraceWriter& writer, const GpuActivity& a, bool force);
  // A launch, copy or set has one API record and one GPU record: once both
  // are written its call is not needed (others expire: a graph launch
  // starts many GPU records, a load many JIT records).
  void note_used(std::uint32_t correlation, bool api);
  // The jitscope thread a host-side record goes on: its call's, else the one
  // its CUPTI thread id maps to; false (wait) if neither is known, unless
  // `force` (then a track of its own).
  bool caller_tid(TraceWriter& writer, const GpuActivity& a, const GpuCall* call, bool force,
                  int& tid);
  std::uint64_t duration_ns(const GpuActivity& a) const noexcept;
  // An "X" event's fields up to its open "args" object.
  void begin_slice(JsonWriter& w, const GpuActivity& a, const GpuCall* call,
                   std::string_view category, std::int64_t pid, std::int64_t tid);
  // `flow`: the launch arrow ends at this slice (its "f" follows).
  void write_gpu_slice(TraceWriter& writer, const GpuActivity& a, const GpuCall* call,
                       bool flow = false);
  void write_host_slice(TraceWriter& writer, const GpuActivity& a, int tid, const GpuCall* call);
  // The jitscope thread a CUPTI thread id is, when known.
  bool host_tid(const TraceWriter& writer, std::uint32_t cupti_thread, int& tid) const;
  int host_tid_or_raw(TraceWriter& writer, std::uint32_t cupti_thread);
  void name_gpu_track(TraceWriter& writer, std::uint32_t device, std::uint32_t stream);
  void append_call_args(JsonWriter& w, std::uint32_t correlation, const GpuCall* call);
  void charge_units(const GpuActivity& a, const GpuCall* call);
  void expire(TraceWriter& writer, std::uint64_t cycle);
  // Writes a held call slice without a flow id (its GPU work never came).
  void release_held(TraceWriter& writer, Api& api);

  int pid_;
  int flusher_tid_ = 0;
  GpuClock clock_;
  std::uint64_t session_start_ns_;
  std::uint64_t cycle_ns_;
  std::uint64_t last_cycle_ns_;  // when cycle_ last moved on
  std::uint32_t grace_;
  std::uint64_t cycle_ = 0;        // writes at least an interval apart
  std::uint64_t next_expiry_ = 0;  // the cycle of the next expire()
  std::unordered_map<std::uint32_t, StoredCall> calls_;
  std::unordered_map<std::uint32_t, Api> apis_;
  std::unordered_map<std::uint32_t, std::uint64_t> external_;  // correlation -> external id
  std::unordered_map<std::uint32_t, int> thread_map_;          // CUPTI thread id -> jitscope tid
  std::unordered_map<std::uint32_t, bool> raw_threads_named_;
  std::map<std::uint64_t, bool> tracks_named_;     // device << 32 | stream
  std::map<std::uint32_t, bool> processes_named_;  // by device
  std::deque<Pending> pending_;
  std::map<std::uint64_t, UnitGpu> units_;  // by packed compile id
  std::string event_;                       // scratch
  GpuTraceTotals totals_;
};

}  // namespace jitscope::detail
