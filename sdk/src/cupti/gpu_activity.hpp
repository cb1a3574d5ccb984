// What the CUPTI collector hands the flusher, in our own types: one
// GpuActivity per CUPTI record it understood, the compile-unit tags that
// module loads leave on function handles, and the collector's counters.
// Nothing here includes CUPTI, so the join (gpu_trace.cpp) builds and is
// tested without it.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace jitscope::detail {

enum class GpuKind : std::uint8_t {
  kKernel,
  kMemcpy,
  kMemset,
  kRuntimeApi,  // a CUDA runtime call (cuda*)
  kDriverApi,   // a CUDA driver call (cu*)
  kSync,        // a synchronization the host waited in
  kExternalCorrelation,
  kJit,       // the driver's JIT: compile, or compute-cache load/store
  kOverhead,  // CUPTI's own overhead
};

// One CUPTI record. Timestamps are as CUPTI stamped them (see GpuClock).
struct GpuActivity {
  GpuKind kind = GpuKind::kKernel;
  std::uint64_t start = 0;
  std::uint64_t end = 0;
  std::uint32_t correlation = 0;  // 0: none
  std::uint32_t device = 0;
  std::uint32_t context = 0;
  std::uint32_t stream = 0;
  std::uint32_t thread = 0;       // API, JIT: CUPTI's thread id of the caller
  std::uint32_t detail = 0;       // copy kind, sync type, JIT operation, overhead kind, API cbid
  std::uint32_t detail2 = 0;      // JIT entry type; overhead object kind
  std::uint64_t bytes = 0;        // memcpy/memset bytes; JIT cache size
  std::uint64_t external_id = 0;  // kExternalCorrelation
  std::int32_t grid[3] = {0, 0, 0};
  std::int32_t block[3] = {0, 0, 0};
  std::uint32_t registers = 0;
  std::uint32_t shared_memory = 0;  // static + dynamic bytes
  std::string name;  // what the slice is called: kernel, API function, "Memcpy HtoD", ...
  std::string text;  // JIT: the compute cache path
};

// The role of a CUDA call the collector watches (RecordKind::kGpuCall index).
enum class GpuCallRole : std::uint8_t {
  kOther = 0,   // a copy, set or graph launch: correlated, nothing more
  kLaunch = 1,  // a kernel launch
  kLoad = 2,    // a module or library load (the driver may JIT here)
  kGraph = 3,   // a graph launch: many GPU records share its correlation
};

// A compile unit as a module load saw it: interned, never freed, so that a
// function handle can point at it for the rest of the process.
struct GpuUnitTag {
  std::uint64_t packed_id = 0;  // frame << 32 | attempt
  std::string display;          // "[F/A] name", the unit's slice name
};
// The tag of (packed_id, display); the same pointer for the same pair.
const GpuUnitTag* intern_unit_tag(std::uint64_t packed_id, std::string_view display);
// A kernel's name as its launch gave it (CUPTI's symbolName, copied during
// the launch callback): interned, never freed, so that the launch's ring
// record can point at it. CUPTI's own kernel records cannot be trusted
// for it: CUPTI keeps the first name it saw for a function handle, and
// the driver hands a function handle out again after a module unload
// (seen on an H100, CUDA 13.0, driver 580). nullptr for an empty name,
// and for new names once kMaxKernelNameBytes of names are kept (the
// kernel's slice then has CUPTI's name).
inline constexpr std::size_t kMaxKernelNameBytes = std::size_t{16} << 20;
const std::string* intern_kernel_name(std::string_view name);
// fork(): the interning lock (unit tags and kernel names) held across it.
void lock_unit_tags_for_fork() noexcept;
void unlock_unit_tags_after_fork() noexcept;

// How CUPTI's timestamps become CLOCK_MONOTONIC ns (the trace's time base).
struct GpuClock {
  enum class Kind : std::uint8_t {
    kCallback,  // CUPTI calls our timestamp callback: already monotonic ns
    kLinear,    // fitted from paired cuptiGetTimestamp / clock_gettime reads
  };
  Kind kind = Kind::kCallback;
  // kLinear: monotonic = mono_ref + (cupti - cupti_ref) × slope, slope 1
  std::uint64_t cupti_ref = 0;
  std::uint64_t mono_ref = 0;
  double slope = 1.0;                // written to the metadata; the offset carries the fit
  std::uint64_t uncertainty_ns = 0;  // half the widest bracket of a sample used

  // Integer arithmetic: both clocks count ns (the fit's slope is 1), and a
  // double would lose ns past 2^53 ns of uptime.
  std::uint64_t to_monotonic(std::uint64_t cupti) const noexcept {
    if (kind == Kind::kCallback || cupti == 0) return cupti;
    const std::int64_t mono =
        static_cast<std::int64_t>(mono_ref) + static_cast<std::int64_t>(cupti - cupti_ref);
    return mono <= 0 ? 0 : static_cast<std::uint64_t>(mono);
  }
  std::string_view name() const noexcept {
    return kind == Kind::kCallback ? "timestamp_callback" : "linear_fit";
  }
};

// Counted by the collector (any thread), read as deltas over a session.
struct GpuCollectorCounts {
  std::uint64_t buffers_completed = 0;
  std::uint64_t records = 0;             // records turned into GpuActivity
  std::uint64_t records_skipped = 0;     // kinds we do not write
  std::uint64_t records_unreadable = 0;  // CUPTI could not step over them (unknown kind)
  std::uint64_t buffers_truncated = 0;   // a record cut off at the buffer's end
  std::uint64_t cupti_dropped = 0;       // CUPTI's own dropped-record counts
  std::uint64_t pool_exhausted = 0;      // a buffer was asked for and none was free
  std::uint64_t records_stale = 0;       // left in CUPTI by a stopped session, discarded
  GpuCollectorCounts operator-(const GpuCollectorCounts& o) const noexcept;
};

}  // namespace jitscope::detail
