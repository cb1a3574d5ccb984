#include "format/gpu_trace.hpp"

#include "base/compile_id.hpp"
#include "base/json_writer.hpp"
#include "format/trace_writer.hpp"

#include <algorithm>

namespace jitscope::detail {
namespace {

// One category for CUDA calls, GPU slices and the flows between them: a flow
// event binds to the slice with its ts, pid, tid and cat (Chrome's rule).
constexpr std::string_view kCategory = "cuda";
// The track for CUPTI overhead not tied to a thread, in the host process.
constexpr int kCuptiTrackTid = 0x7fff0000;
// How long an entry waits for a record to use it, in grace periods.
constexpr std::uint64_t kKeepGraces = 20;

bool is_gpu_side(GpuKind k) noexcept {
  return k == GpuKind::kKernel || k == GpuKind::kMemcpy || k == GpuKind::kMemset;
}

std::string_view unit_record_name(const std::string& display) {
  const std::size_t space = display.find(' ');
  return space == std::string::npos ? std::string_view(display)
                                    : std::string_view(display).substr(space + 1);
}

}  // namespace

std::int64_t GpuTrace::device_pid(std::uint32_t device, int host_pid) noexcept {
  return 10'000'000LL * (static_cast<std::int64_t>(device) + 1) + host_pid;
}

GpuTrace::GpuTrace(int host_pid, const GpuClock& clock, std::uint64_t session_start_ns,
                   std::uint64_t cycle_ns, std::uint32_t grace_cycles)
    : pid_(host_pid),
      clock_(clock),
      session_start_ns_(session_start_ns),
      cycle_ns_(std::max<std::uint64_t>(cycle_ns, 1)),
      last_cycle_ns_(session_start_ns),
      grace_(std::max<std::uint32_t>(grace_cycles, 1)),
      next_expiry_(grace_) {}

void GpuTrace::on_call(std::uint32_t correlation, GpuCall call) {
  if (correlation == 0) return;
  ++totals_.calls;
  calls_[correlation] = StoredCall{std::move(call), cycle_};
}

void GpuTrace::add(std::vector<GpuActivity>& batch) {
  for (GpuActivity& a : batch) pending_.push_back(Pending{std::move(a), cycle_});
  batch.clear();
}

void GpuTrace::write(TraceWriter& writer, bool final, std::uint64_t now_ns) {
  // The cycle moves on once per write and at most once per interval: a
  // wait of `grace` cycles is that many writes (a flusher behind its
  // interval) and that many intervals (one woken early), whichever is longer.
  if (now_ns >= last_cycle_ns_ + cycle_ns_) {
    ++cycle_;
    last_cycle_ns_ = now_ns;
  }
  // External ids first: they only annotate, and CUPTI may deliver one after
  // the records it annotates.
  std::erase_if(pending_, [this](const Pending& p) {
    if (p.a.kind != GpuKind::kExternalCorrelation) return false;
    external_[p.a.correlation] = p.a.external_id;
    ++totals_.external_ids;
    return true;
  });
  // Then records in arrival order; one that cannot be placed yet keeps its
  // place. At the end, a second pass writes what is still incomplete.
  for (int pass = 0; pass < (final ? 2 : 1); ++pass) {
    std::deque<Pending> waiting;
    while (!pending_.empty()) {
      Pending p = std::move(pending_.front());
      pending_.pop_front();
      const bool force = pass == 1 || cycle_ - p.cycle >= grace_;
      if (!try_write(writer, p.a, force)) waiting.push_back(std::move(p));
    }
    pending_.swap(waiting);
  }
  if (final) {
    for (auto& [correlation, api] : apis_) release_held(writer, api);
    calls_.clear();
    apis_.clear();
    external_.clear();
  } else if (cycle_ >= next_expiry_) {
    expire(writer, cycle_);
    next_expiry_ = cycle_ + grace_;
  }
}

void GpuTrace::release_held(TraceWriter& writer, Api& api) {
  if (api.held.empty()) return;
  writer.append_event(api.held);
  api.held.clear();
}

void GpuTrace::expire(TraceWriter& writer, std::uint64_t cycle) {
  const std::uint64_t keep = grace_ * kKeepGraces;
  if (cycle < keep) return;
  const std::uint64_t oldest = cycle - keep;
  std::erase_if(calls_, [&](const auto& kv) { return kv.second.cycle < oldest; });
  for (auto it = apis_.begin(); it != apis_.end();) {
    if (it->second.cycle >= oldest) {
      ++it;
      continue;
    }
    release_held(writer, it->second);
    it = apis_.erase(it);
  }
  // External ids carry no age; they go with the calls they belong to.
  std::erase_if(external_, [&](const auto& kv) {
    return calls_.find(kv.first) == calls_.end() && apis_.find(kv.first) == apis_.end();
  });
}

bool GpuTrace::host_tid(const TraceWriter& writer, std::uint32_t cupti_thread, int& tid) const {
  // Learned from a correlated call first; then CUPTI's id as the OS thread
  // id it is (the collector asks CUPTI for system thread ids).
  if (auto it = thread_map_.find(cupti_thread); it != thread_map_.end()) {
    tid = it->second;
    return true;
  }
  if (writer.knows_tid(static_cast<int>(cupti_thread))) {
    tid = static_cast<int>(cupti_thread);
    return true;
  }
  return false;
}

int GpuTrace::host_tid_or_raw(TraceWriter& writer, std::uint32_t cupti_thread) {
  int tid = 0;
  if (host_tid(writer, cupti_thread, tid)) return tid;
  // A thread jitscope never saw (or its own flusher): a track of its own, named.
  tid = static_cast<int>(cupti_thread);
  if (!raw_threads_named_[cupti_thread]) {
    raw_threads_named_[cupti_thread] = true;
    writer.write_name_metadata("thread_name", pid_, tid,
                               tid == flusher_tid_ ? std::string("jitscope flusher")
                                                   : "CUDA thread " + std::to_string(cupti_thread));
  }
  return tid;
}

void GpuTrace::name_gpu_track(TraceWriter& writer, std::uint32_t device, std::uint32_t stream) {
  const std::int64_t pid = device_pid(device, pid_);
  if (!processes_named_[device]) {
    processes_named_[device] = true;
    writer.write_name_metadata(
        "process_name", pid, 0,
        "GPU " + std::to_string(device) + " (pid " + std::to_string(pid_) + ")");
  }
  const std::uint64_t key = (static_cast<std::uint64_t>(device) << 32) | stream;
  if (!tracks_named_[key]) {
    tracks_named_[key] = true;
    writer.write_name_metadata("thread_name", pid, stream, "stream " + std::to_string(stream));
  }
}

void GpuTrace::append_call_args(JsonWriter& w, std::uint32_t correlation, const GpuCall* call) {
  w.member("correlation", correlation);
  if (auto it = external_.find(correlation); it != external_.end()) {
    w.member("external_id", it->second);
  }
  if (call == nullptr) return;
  if (!call->span.empty()) w.member("span", std::string_view(call->span));
  if (call->in_unit) {
    w.member("compile_id", std::string_view(compile_id_text(call->unit)));
    if (!call->unit_name.empty()) w.member("compile_unit", std::string_view(call->unit_name));
  }
  if (call->compiled_by != nullptr) {
    w.member("compiled_by", std::string_view(call->compiled_by->display));
    w.member("compiled_by_id", std::string_view(compile_id_text(call->compiled_by->packed_id)));
  }
}

bool GpuTrace::try_write(TraceWriter& writer, const GpuActivity& a, bool force) {
  const StoredCall* stored = nullptr;
  if (a.correlation != 0) {
    if (auto it = calls_.find(a.correlation); it != calls_.end()) stored = &it->second;
  }
  const GpuCall* call = stored != nullptr ? &stored->call : nullptr;
  if (a.kind != GpuKind::kExternalCorrelation) {
    // CUPTI writes 0 where it has no time (work still running at a forced
    // flush): such a record cannot be placed.
    if (a.start == 0 || a.end < a.start) {
      ++totals_.incomplete;
      return true;
    }
    if (clock_.to_monotonic(a.end) < session_start_ns_) {
      ++totals_.before_session;
      return true;
    }
  }
  switch (a.kind) {
    case GpuKind::kExternalCorrelation:  // taken out before (write)
      return true;
    case GpuKind::kRuntimeApi:
    case GpuKind::kDriverApi: {
      int tid = 0;
      if (!caller_tid(writer, a, call, force, tid)) return false;
      if (call != nullptr) thread_map_[a.thread] = tid;  // learn: this CUPTI thread is that one
      // Kept for the arrow to this call's GPU work, and for syncs to find
      // their thread: calls jitscope watched, and synchronizations.
      if (call != nullptr || a.name.find("Synchronize") != std::string::npos ||
          a.name.find("WaitEvent") != std::string::npos) {
        Api& api = apis_[a.correlation];
        release_held(writer, api);  // a correlation id used again
        api = Api{clock_.to_monotonic(a.start), tid, cycle_, {}};
      }
      write_host_slice(writer, a, tid, call);
      ++totals_.api_events;
      if (call != nullptr) note_used(a.correlation, /*api=*/true);
      return true;
    }
    case GpuKind::kKernel:
    case GpuKind::kMemcpy:
    case GpuKind::kMemset: {
      const auto api = apis_.find(a.correlation);
      if (!force && (call == nullptr || api == apis_.end())) return false;
      if (api != apis_.end() && api->second.start_ns != 0 && !api->second.held.empty()) {
        // The protobuf form: the call's slice starts the arrow this slice ends.
        pfw::Hints hints;
        hints.flow_out = a.correlation;
        writer.append_event(api->second.held, hints);
        api->second.held.clear();
      }
      write_gpu_slice(writer, a, call, api != apis_.end() && api->second.start_ns != 0);
      if (api != apis_.end() && api->second.start_ns != 0) {
        // The arrow: from the call's slice to this one; once per call (a
        // graph launch starts many kernels).
        const std::int64_t gpu_pid = device_pid(a.device, pid_);
        for (int end = 0; end < 2; ++end) {
          event_.clear();
          JsonWriter w(event_);
          w.begin_object();
          w.member("ph", end == 0 ? "s" : "f");
          w.member("cat", kCategory);
          w.member("name", "launch");
          w.member("id", a.correlation);
          w.key("ts");
          w.value_us(end == 0 ? api->second.start_ns : clock_.to_monotonic(a.start));
          w.member("pid", end == 0 ? static_cast<std::int64_t>(pid_) : gpu_pid);
          w.member("tid", end == 0 ? static_cast<std::int64_t>(api->second.tid)
                                   : static_cast<std::int64_t>(a.stream));
          if (end == 1) w.member("bp", "e");
          w.end_object();
          writer.append_metadata(event_);
        }
        api->second.start_ns = 0;  // used
        ++totals_.flows;
      }
      if (call == nullptr) ++totals_.unattributed;
      charge_units(a, call);
      ++totals_.gpu_events;
      if (call != nullptr) note_used(a.correlation, /*api=*/false);
      return true;
    }
    case GpuKind::kSync: {
      const auto api = apis_.find(a.correlation);
      if (api != apis_.end()) {
        release_held(writer, api->second);
        write_host_slice(writer, a, api->second.tid, call);
        apis_.erase(api);  // one sync per call
      } else if (!force) {
        return false;
      } else {
        write_gpu_slice(writer, a, call);  // no caller known: on its stream
      }
      ++totals_.other_events;
      return true;
    }
    case GpuKind::kJit: {
      int tid = 0;
      if (!caller_tid(writer, a, call, force, tid)) return false;
      write_host_slice(writer, a, tid, call);
      charge_units(a, call);
      ++totals_.other_events;
      return true;
    }
    case GpuKind::kOverhead: {
      // detail2 is CUPTI's object kind: 2 = a thread (see cupti/activity_records.cpp).
      int tid = kCuptiTrackTid;
      if (a.detail2 == 2) {
        tid = host_tid_or_raw(writer, a.thread);
      } else if (!tracks_named_[~std::uint64_t{0}]) {
        tracks_named_[~std::uint64_t{0}] = true;
        writer.write_name_metadata("thread_name", pid_, kCuptiTrackTid, "CUPTI overhead");
      }
      write_host_slice(writer, a, tid, nullptr);
      totals_.overhead_ns += duration_ns(a);
      ++totals_.other_events;
      return true;
    }
  }
  return true;
}

void GpuTrace::note_used(std::uint32_t correlation, bool api) {
  const auto it = calls_.find(correlation);
  if (it == calls_.end()) return;
  const GpuCallRole role = it->second.call.role;
  if (role != GpuCallRole::kLaunch && role != GpuCallRole::kOther) return;
  (api ? it->second.api_written : it->second.gpu_written) = true;
  if (it->second.api_written && it->second.gpu_written) {
    calls_.erase(it);
    if (auto x = external_.find(correlation); x != external_.end()) external_.erase(x);
    if (auto p = apis_.find(correlation); p != apis_.end() && p->second.start_ns == 0) {
      apis_.erase(p);  // its arrow is drawn
    }
  }
}

bool GpuTrace::caller_tid(TraceWriter& writer, const GpuActivity& a, const GpuCall* call,
                          bool force, int& tid) {
  if (call != nullptr) {
    tid = call->tid;
    return true;
  }
  if (host_tid(writer, a.thread, tid)) return true;
  if (!force) return false;
  tid = host_tid_or_raw(writer, a.thread);
  return true;
}

std::uint64_t GpuTrace::duration_ns(const GpuActivity& a) const noexcept {
  const std::uint64_t b = clock_.to_monotonic(a.start), e = clock_.to_monotonic(a.end);
  return e > b ? e - b : 0;
}

void GpuTrace::begin_slice(JsonWriter& w, const GpuActivity& a, const GpuCall* call,
                           std::string_view category, std::int64_t pid, std::int64_t tid) {
  w.begin_object();
  w.member("ph", "X");
  w.member("cat", category);
  // A kernel is named by its launch, not by CUPTI's record (which keeps the
  // first name a reused function handle had: gpu_activity.hpp).
  const bool launch_named = a.kind == GpuKind::kKernel && call != nullptr &&
                            call->role == GpuCallRole::kLaunch && call->kernel_name != nullptr;
  w.member("name", launch_named ? std::string_view(*call->kernel_name) : std::string_view(a.name));
  w.key("ts");
  w.value_us(clock_.to_monotonic(a.start));
  w.key("dur");
  w.value_us(duration_ns(a));
  w.member("pid", pid);
  w.member("tid", tid);
  w.key("args");
  w.begin_object();
}

void GpuTrace::write_gpu_slice(TraceWriter& writer, const GpuActivity& a, const GpuCall* call,
                               bool flow) {
  name_gpu_track(writer, a.device, a.stream);
  event_.clear();
  JsonWriter w(event_);
  begin_slice(w, a, call, kCategory, device_pid(a.device, pid_), a.stream);
  append_call_args(w, a.correlation, call);
  if (call == nullptr && is_gpu_side(a.kind)) w.member("unattributed", true);
  w.member("device", a.device);
  w.member("stream", a.stream);
  if (a.kind == GpuKind::kKernel) {
    w.key("grid");
    w.begin_array();
    for (int v : a.grid) w.value(v);
    w.end_array();
    w.key("block");
    w.begin_array();
    for (int v : a.block) w.value(v);
    w.end_array();
    w.member("registers_per_thread", a.registers);
    w.member("shared_memory_bytes", a.shared_memory);
  } else if (a.kind == GpuKind::kMemcpy || a.kind == GpuKind::kMemset) {
    w.member("bytes", a.bytes);
  }
  w.end_object();
  w.end_object();
  // The protobuf form puts the arrow on the slices themselves (flow ids).
  pfw::Hints hints;
  if (flow) hints.flow_in = a.correlation;
  writer.append_event(event_, hints);
}

void GpuTrace::write_host_slice(TraceWriter& writer, const GpuActivity& a, int tid,
                                const GpuCall* call) {
  event_.clear();
  JsonWriter w(event_);
  begin_slice(w, a, call, a.kind == GpuKind::kOverhead ? std::string_view("cupti") : kCategory,
              pid_, tid);
  if (a.correlation != 0) append_call_args(w, a.correlation, call);
  if (a.kind == GpuKind::kJit) {
    w.member("device", a.device);
    if (!a.text.empty()) w.member("cache_path", std::string_view(a.text));
    if (a.bytes != 0) w.member("cache_size", a.bytes);
  } else if (a.kind == GpuKind::kSync) {
    w.member("stream", a.stream);
  }
  w.end_object();
  w.end_object();
  // The protobuf form: the slice of a call that may start GPU work waits
  // (Api::held) for that work, whose slice writes it with the launch arrow's
  // flow id (the JSON form's "s" id), so that no flow id is written without
  // its end; released without one when the work never comes (expire, the
  // session's end).
  if (writer.info().perfetto && call != nullptr && call->role != GpuCallRole::kLoad &&
      a.correlation != 0 && (a.kind == GpuKind::kRuntimeApi || a.kind == GpuKind::kDriverApi)) {
    if (const auto api = apis_.find(a.correlation); api != apis_.end()) {
      api->second.held = event_;
      return;
    }
  }
  writer.append_event(event_);
}

void GpuTrace::charge_units(const GpuActivity& a, const GpuCall* call) {
  if (call == nullptr) return;
  const std::uint64_t ns = duration_ns(a);
  if (call->in_unit) {
    UnitGpu& u = units_[call->unit];
    if (u.name.empty()) u.name = call->unit_name;
    switch (a.kind) {
      case GpuKind::kKernel:
        ++u.kernels;
        u.kernel_ns += ns;
        break;
      case GpuKind::kMemcpy:
        ++u.memcpys;
        u.memcpy_bytes += a.bytes;
        u.memcpy_ns += ns;
        break;
      case GpuKind::kMemset:
        ++u.memsets;
        u.memset_ns += ns;
        break;
      case GpuKind::kJit:
        ++u.jit_ops;
        u.jit_ns += ns;
        // detail: CUPTI's JIT operation, 1 cache load, 3 compile.
        if (a.detail == 3) ++u.jit_compiles;
        if (a.detail == 1) ++u.jit_cache_loads;
        break;
      default: break;
    }
  }
  if (a.kind == GpuKind::kKernel && call->compiled_by != nullptr) {
    UnitGpu& u = units_[call->compiled_by->packed_id];
    if (u.name.empty()) u.name = call->compiled_by->display;
    ++u.compiled_launches;
    u.compiled_kernel_ns += ns;
  }
}

namespace {
void write_unit_gpu_members(JsonWriter& w, std::uint64_t kernels, std::uint64_t kernel_ns,
                            std::string_view prefix) {
  const std::string p(prefix);
  w.member(p + "kernels", kernels);
  w.member(p + "kernel_ns", kernel_ns);
  w.member(p + "kernel_avg_ns", kernels == 0 ? std::uint64_t{0} : kernel_ns / kernels);
}
}  // namespace

void GpuTrace::unit_metric_lines(std::vector<std::string>& out) const {
  for (const auto& [packed, u] : units_) {
    std::string line;
    JsonWriter w(line);
    w.begin_object();
    w.member("compile_id", std::string_view(compile_id_text(packed)));
    w.member("frame_id", packed >> 32);
    w.member("attempt", packed & 0xffffffffu);
    w.member("name", unit_record_name(u.name));
    w.member("record", "gpu");
    w.key("gpu");
    w.begin_object();
    write_unit_gpu_members(w, u.kernels, u.kernel_ns, "");
    write_unit_gpu_members(w, u.compiled_launches, u.compiled_kernel_ns, "compiled_");
    w.member("memcpys", u.memcpys);
    w.member("memcpy_bytes", u.memcpy_bytes);
    w.member("memcpy_ns", u.memcpy_ns);
    w.member("memsets", u.memsets);
    w.member("memset_ns", u.memset_ns);
    w.member("driver_jit_ops", u.jit_ops);
    w.member("driver_jit_ns", u.jit_ns);
    w.member("driver_jit_compiles", u.jit_compiles);
    w.member("driver_jit_cache_loads", u.jit_cache_loads);
    w.end_object();
    w.end_object();
    out.push_back(std::move(line));
  }
}

void GpuTrace::write_stats(JsonWriter& w, const CuptiSessionState& state,
                           const GpuCollectorCounts& counts) const {
  w.key("cupti");
  w.begin_object();
  w.member("state", state.on ? "on" : "off");
  if (!state.on) w.member("reason", std::string_view(state.reason));
  w.member("gpu_events", totals_.gpu_events);
  w.member("api_events", totals_.api_events);
  w.member("other_events", totals_.other_events);
  w.member("flows", totals_.flows);
  w.member("unattributed", totals_.unattributed);
  w.member("external_correlations", totals_.external_ids);
  w.member("overhead_ns", totals_.overhead_ns);
  w.member("records_incomplete", totals_.incomplete);
  w.member("records_before_session", totals_.before_session);
  w.member("records_left_at_stop", counts.records_stale);
  w.member("buffers_completed", counts.buffers_completed);
  w.member("records", counts.records);
  w.member("records_skipped", counts.records_skipped);
  w.member("records_unreadable", counts.records_unreadable);
  w.member("buffers_truncated", counts.buffers_truncated);
  w.member("records_dropped_by_cupti", counts.cupti_dropped);
  w.member("buffer_pool_exhausted", counts.pool_exhausted);
  w.member("calls_correlated", totals_.calls);
  w.key("units");
  w.begin_array();
  std::vector<std::string> lines;
  unit_metric_lines(lines);
  for (const std::string& line : lines) w.raw(line);
  w.end_array();
  w.end_object();
}

}  // namespace jitscope::detail
