// GPU attribution: kernels, copies and sets on a GPU's streams, each kernel
// counted for the compile unit that built it (compiled_by_id) and the one
// open when it was launched (compile_id), then the GPU table's rows.
// Separate because GPU slices map back to units of their host process.
#include "aggregator.hpp"

#include "aggregator_state.hpp"

#include <algorithm>

namespace jitscope::report {

void Aggregator::gpu_slice(const tools::DecodedEvent& ev, std::uint32_t kname) {
  const std::int64_t dur = ev.has_dur && ev.dur_ns > 0 ? ev.dur_ns : 0;
  if (!ev.has_grid) {
    if (ev.name.substr(0, 6) == "Memset") {
      ++gpu_.memsets;
      names_[kname].gpu = GpuWork::kSet;
    } else {
      ++gpu_.memcpys;
      names_[kname].gpu = GpuWork::kCopy;
    }
    return;
  }
  ++gpu_.kernels;
  names_[kname].gpu = GpuWork::kKernel;
  gpu_.kernel_ns = sat_add(gpu_.kernel_ns, dur);
  // Its compile_id and compiled_by_id name units of the host process.
  const Id host = host_pid(owned(ev.has_pid, ev.pid));
  if (ev.has_compile_id) ++units_[unit_id(ev.has_pid, host, ev.compile_id)].launched_inside;
  if (ev.compiled_by_id.empty()) {
    ++gpu_.kernels_unattributed;
    return;
  }
  UnitStats& u = units_[unit_id(ev.has_pid, host, ev.compiled_by_id)];
  ++u.gpu_kernels;
  u.gpu_ns = sat_add(u.gpu_ns, dur);
  if (!u.has_first_launch || ev.ts_ns < u.first_launch) {
    u.has_first_launch = true;
    u.first_launch = ev.ts_ns;
  }
  u.kernel_names.insert(kname);
  if (u.display.empty() && !ev.compiled_by.empty()) {
    u.display = std::string(strip_unit_prefix(ev.compiled_by));
  }
}

const char* gpu_work_name(GpuWork w) noexcept {
  switch (w) {
    case GpuWork::kKernel: return "kernel";
    case GpuWork::kCopy: return "copy";
    case GpuWork::kSet: return "set";
    case GpuWork::kCall: return "call";
    case GpuWork::kNone: break;
  }
  return "";
}

void Aggregator::gpu_rows(Report& r, PidKeys& unit_pids) const {
  r.gpu = gpu_;
  for (const UnitStats& u : units_) {
    if (u.gpu_kernels == 0 && u.launched_inside == 0) continue;
    GpuUnitRow g;
    if (u.has_pid) g.pid = u.pid;
    note_pid(unit_pids, u.has_pid, u.pid);
    g.compile_id = u.id;
    g.name = u.display;
    g.kernels = u.gpu_kernels;
    g.distinct_kernels = u.kernel_names.size();
    g.gpu_ns = u.gpu_ns;
    g.launched_inside = u.launched_inside;
    if (u.has_first_launch) {
      g.first_launch_ns = u.first_launch;
      if (u.in_trace) g.latency_ns = sat_sub(u.first_launch, u.has_own ? u.own_end : u.end);
    }
    r.gpu.units.push_back(std::move(g));
  }
  std::sort(r.gpu.units.begin(), r.gpu.units.end(), [](const GpuUnitRow& a, const GpuUnitRow& b) {
    const auto ka = compile_id_key(a.compile_id), kb = compile_id_key(b.compile_id);
    return ka != kb ? ka < kb : pid_less(a.pid, b.pid);
  });
}

}  // namespace jitscope::report
