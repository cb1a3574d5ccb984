// The JSON format: one object, a key per section, times in ns, written
// straight from the Report with every field (the tables' columns are a
// selection). Separate from the table formats: its shape is the Report's.
#include "base/json_writer.hpp"
#include "render_internal.hpp"

#include <algorithm>

namespace jitscope::report {

void json_id(detail::JsonWriter& j, const Id& id) {
  if (id.is_string) {
    j.value(std::string_view(id.text));
  } else {
    j.value(id.number);
  }
}

void json_pid(detail::JsonWriter& j, const std::optional<Id>& pid) {
  if (pid) {
    json_id(j, *pid);
  } else {
    j.null();
  }
}

void json_opt(detail::JsonWriter& j, std::string_view key, const std::optional<std::int64_t>& v) {
  j.key(key);
  if (v) {
    j.value(*v);
  } else {
    j.null();
  }
}

namespace {

void json_str_or_null(detail::JsonWriter& j, std::string_view key, const std::string& s) {
  j.key(key);
  if (s.empty()) {
    j.null();
  } else {
    j.value(std::string_view(s));
  }
}

// The members that name a unit (units and GPU rows).
void json_unit_key(detail::JsonWriter& j, const std::optional<Id>& pid,
                   const std::string& compile_id, const std::string& name) {
  j.key("pid");
  json_pid(j, pid);
  j.member("compile_id", std::string_view(compile_id));
  j.member("name", std::string_view(name));
}

// A row of the phases section, or of a unit's phases.
void json_phase(detail::JsonWriter& j, std::string_view name, std::uint64_t count,
                std::int64_t total_ns, std::int64_t self_ns) {
  j.begin_object();
  j.member("name", name);
  j.member("count", count);
  j.member("total_ns", total_ns);
  j.member("self_ns", self_ns);
  j.end_object();
}

void json_lane(detail::JsonWriter& j, const UnitLane& lane) {
  j.begin_object();
  j.key("tid");
  json_id(j, lane.tid);
  json_str_or_null(j, "thread", lane.thread);
  j.end_object();
}

void json_unit_metrics(detail::JsonWriter& j, const UnitMetrics& m, const JsonOptions& opt) {
  j.begin_object();
  j.member("has_record", m.has_record);
  j.member("name", std::string_view(m.name));
  json_opt(j, "duration_ns", m.duration_ns);
  j.key("columns_ns");
  j.begin_object();
  for (const auto& [k, v] : m.columns_ns) j.member(k, v);
  j.end_object();
  j.key("caches");
  j.begin_object();
  for (const CacheRow& c : m.caches) {
    j.key(c.cache);
    j.begin_object();
    j.member("hits", c.hits);
    j.member("misses", c.misses);
    j.end_object();
  }
  j.end_object();
  j.member("cache_hits", m.cache_hits);
  j.member("cache_misses", m.cache_misses);
  json_str_or_null(j, "fail_type", m.fail_type);
  json_str_or_null(j, "fail_reason", m.fail_reason);
  json_str_or_null(j, "recompile_reason", m.recompile_reason);
  j.key("gpu");
  if (m.has_gpu) {
    j.begin_object();
    for (const auto& [k, v] : m.gpu) j.member(k, v);
    j.end_object();
  } else {
    j.null();
  }
  j.key("artifacts");
  j.begin_array();
  for (const Artifact& a : m.artifacts) {
    j.begin_object();
    j.member("kind", std::string_view(a.kind));
    j.member("path", std::string_view(a.path));
    j.member("bytes", a.bytes);
    j.member("fnv1a", std::string_view(a.fnv1a));
    if (opt.artifact_href) j.member("href", std::string_view(opt.artifact_href(a.path)));
    j.end_object();
  }
  j.end_array();
  // The record's other fields (compact JSON): jitscope's, then the user's own.
  for (const bool user : {false, true}) {
    j.key(user ? "context" : "fields");
    j.begin_object();
    for (const RecordField& f : m.fields) {
      if (f.user != user) continue;
      j.key(f.key);
      j.raw(f.json);
    }
    j.end_object();
  }
  j.end_object();
}

void json_unit(detail::JsonWriter& j, const UnitRow& u, const JsonOptions& opt) {
  j.begin_object();
  json_unit_key(j, u.pid, u.compile_id, u.name);
  json_str_or_null(j, "unit_key", u.unit_key);
  json_str_or_null(j, "frame", u.frame);
  j.member("status", std::string_view(unit_status_name(u.status)));
  json_str_or_null(j, "fail_type", u.fail_type);
  json_str_or_null(j, "fail_reason", u.fail_reason);
  j.member("in_trace", u.in_trace);
  if (u.in_trace) {
    j.member("start_ns", u.start_ns);
    j.member("end_ns", u.end_ns);
    j.member("wall_ns", u.wall_ns);
    j.member("compile_end_ns", u.compile_end_ns);
    j.member("self_ns", u.self_ns);
    j.member("in_children_ns", u.in_children_ns);
    j.member("unexplained_ns", u.unexplained_ns());
    j.key("longest_gap");  // the longest stretch outside every span on its threads
    if (u.gap_ns > 0) {
      j.begin_object();
      j.member("start_ns", u.gap_start_ns);
      j.member("dur_ns", u.gap_ns);
      j.end_object();
    } else {
      j.null();
    }
  } else {
    for (const char* k : {"start_ns", "end_ns", "wall_ns", "compile_end_ns", "self_ns",
                          "in_children_ns", "unexplained_ns", "longest_gap"}) {
      j.key(k);
      j.null();
    }
  }
  j.member("slices", u.slices);
  j.member("threads", u.threads);
  j.key("thread");
  if (u.thread) {
    json_lane(j, *u.thread);
  } else {
    j.null();
  }
  j.key("phases");
  j.begin_array();
  for (const PhaseRow& p : u.phases) json_phase(j, p.name, p.count, p.total_ns, p.self_ns);
  j.end_array();
  j.key("lanes");
  j.begin_array();
  for (const UnitLane& l : u.lanes) json_lane(j, l);
  j.end_array();
  // [name, offset_ns, dur_ns, lane]: arrays, not objects, as there are up to
  // UnitRow::kMaxSpans per unit.
  j.key("spans");
  j.begin_array();
  for (const UnitSpan& s : u.spans) {
    j.begin_array();
    j.value(std::string_view(s.name));
    j.value(s.offset_ns);
    j.value(s.dur_ns);
    j.value(s.lane);
    j.end_array();
  }
  j.end_array();
  j.member("spans_total", u.spans_total);
  j.member("waterfall_dropped", u.waterfall_dropped);
  j.key("metrics");
  if (u.metrics) {
    json_unit_metrics(j, *u.metrics, opt);
  } else {
    j.null();
  }
  j.end_object();
}

// A row of compile_times, or of gpu.names (with its "kind").
void json_name_row(detail::JsonWriter& j, const NameRow& n) {
  j.begin_object();
  j.member("name", std::string_view(n.name));
  if (n.gpu != GpuWork::kNone) j.member("kind", std::string_view(gpu_work_name(n.gpu)));
  if (n.pass) j.member("pass", true);
  j.member("count", n.count);
  j.member("total_ns", n.total_ns);
  j.member("mean_ns", n.mean_ns());
  j.member("min_ns", n.min_ns);
  j.member("max_ns", n.max_ns);
  j.member("p50_ns", n.p50_ns);
  j.member("p90_ns", n.p90_ns);
  j.member("p99_ns", n.p99_ns);
  j.member("stddev_ns", n.stddev_ns);
  j.key("histogram");  // [low_ns, high_ns, count] per bin
  j.begin_array();
  for (const LogBin& b : n.histogram) {
    j.begin_array();
    j.value(b.low_ns);
    j.value(b.high_ns);
    j.value(b.count);
    j.end_array();
  }
  j.end_array();
  j.end_object();
}

}  // namespace

void write_json(const Report& r, const Sections& sec, Emitter& em) {
  detail::JsonWriter j(em.buf());
  j.begin_object();
  write_json_members(r, sec, j, em, JsonOptions{});
  j.end_object();
  em.buf().push_back('\n');
}

void write_json_members(const Report& r, const Sections& sec, detail::JsonWriter& j, Emitter& em,
                        const JsonOptions& opt) {
  if (sec.header) {
    const Header& h = r.header;
    j.key("header");
    j.begin_object();
    j.member("input", std::string_view(h.input));
    j.member("bytes", h.bytes);
    j.member("events", h.events);
    j.key("event_counts");
    j.begin_object();
    for (const auto& [ph, n] : h.phase_counts) j.member(ph, n);
    j.end_object();
    j.member("spans", h.spans);
    j.member("unterminated", h.unterminated);
    j.key("time_span");
    if (h.has_time) {
      j.begin_object();
      j.member("begin_ns", h.begin_ns);
      j.member("end_ns", h.end_ns);
      j.member("duration_ns", sat_sub(h.end_ns, h.begin_ns));
      j.end_object();
    } else {
      j.null();
    }
    j.member("processes", h.processes);
    j.member("threads", h.threads);
    j.key("jitscope_session");
    if (h.session) {
      j.begin_object();
      json_str_or_null(j, "version", h.session->version);
      json_str_or_null(j, "clock", h.session->clock);
      j.key("cupti");
      j.begin_object();
      json_str_or_null(j, "state", h.session->cupti_state);
      json_str_or_null(j, "reason", h.session->cupti_reason);
      json_str_or_null(j, "timestamps", h.session->cupti_timestamps);
      j.end_object();
      j.end_object();
    } else {
      j.null();
    }
    // Processes with a jitscope_session (several in a merged trace, whose
    // first is jitscope_session above), and how many of them per CUPTI state.
    j.member("jitscope_sessions", h.sessions);
    j.key("cupti_states");
    j.begin_object();
    for (const auto& [state, n] : h.cupti_states) j.member(state, n);
    j.end_object();
    j.key("snapshot");
    if (h.snapshot) {
      j.begin_object();
      j.member("trigger", h.snapshot->trigger);
      json_str_or_null(j, "compile_id", h.snapshot->compile_id);
      json_opt(j, "spans_open", h.snapshot->spans_open);
      json_opt(j, "bytes_dropped_from_window", h.snapshot->bytes_dropped_from_window);
      j.end_object();
    } else {
      j.null();
    }
    json_opt(j, "events_dropped", h.events_dropped);
    json_opt(j, "compile_records_dropped", h.compile_records_dropped);
    j.key("metrics");
    if (r.has_metrics) {
      j.begin_object();
      j.member("units", static_cast<std::uint64_t>(
                            std::count_if(r.units.begin(), r.units.end(),
                                          [](const UnitRow& u) { return u.metrics != nullptr; })));
      j.member("runtime_records", r.runtime_records);
      j.member("runtime_duration_ns", r.runtime_duration_ns);
      j.member("autotune_records", r.autotune_records);
      j.end_object();
    } else {
      j.null();
    }
    j.key("warnings");
    j.begin_array();
    for (const std::string& w : h.warnings) j.value(std::string_view(w));
    j.end_array();
    j.end_object();
  }
  if (sec.compile_times) {
    j.key("compile_times");
    j.begin_array();
    for (const NameRow& n : r.names) json_name_row(j, n);
    j.end_array();
    j.key("pipelines");  // the spans that ran passes (self time is their total)
    j.begin_array();
    for (const NameRow& n : r.pipelines) json_name_row(j, n);
    j.end_array();
    j.key("ir_growth");  // passes whose runs carried IR sizes (Options::ir_size)
    j.begin_array();
    for (const IrGrowthRow& g : r.ir_growth) {
      j.begin_object();
      j.member("pass", std::string_view(g.pass));
      j.member("runs", g.runs);
      j.member("before", g.before);
      j.member("after", g.after);
      j.member("growth", g.growth());
      j.member("largest", g.largest);
      j.member("largest_from", g.largest_before);
      j.member("total_ns", g.total_ns);
      j.end_object();
    }
    j.end_array();
  }
  if (sec.phases) {
    j.key("phases");
    j.begin_array();
    for (const NameRow& n : r.names) json_phase(j, n.name, n.count, n.total_ns, n.self_ns);
    j.end_array();
  }
  if (sec.units) {
    const UnitWallSummary& w = r.unit_walls;
    j.key("unit_walls");
    j.begin_object();
    j.member("count", w.count);
    j.member("total_ns", w.total_ns);
    j.member("mean_ns", w.mean_ns);
    j.member("min_ns", w.min_ns);
    j.member("max_ns", w.max_ns);
    j.member("p50_ns", w.p50_ns);
    j.member("p90_ns", w.p90_ns);
    j.member("p99_ns", w.p99_ns);
    j.member("stddev_ns", w.stddev_ns);
    j.end_object();
    j.key("waterfalls");  // which units kept their spans
    j.begin_object();
    j.member("limit", r.waterfall_limit);
    j.member("dropped", r.waterfalls_dropped);
    j.end_object();
    j.key("units");
    j.begin_array();
    for (const UnitRow& u : r.units) {
      json_unit(j, u, opt);
      em.maybe_flush();
    }
    j.end_array();
    j.key("failed_passes");
    j.begin_object();
    j.member("total", r.failed_passes_total);
    j.key("passes");
    j.begin_array();
    for (const FailedPass& p : r.failed_passes) {
      j.begin_object();
      j.member("name", std::string_view(p.name));
      j.member("kind", std::string_view(p.crashed ? "crashed" : "failed"));
      j.key("pid");
      json_pid(j, p.pid);
      j.key("tid");
      json_id(j, p.tid);
      json_str_or_null(j, "thread", p.thread);
      json_str_or_null(j, "compile_id", p.compile_id);
      json_str_or_null(j, "unit", p.unit);
      j.member("ts_ns", p.ts_ns);
      j.member("dur_ns", p.dur_ns);
      json_str_or_null(j, "reason", p.reason);
      j.end_object();
    }
    j.end_array();
    j.end_object();
  }
  if (sec.top_spans) {
    j.key("top_spans");
    j.begin_array();
    for (const SpanRow& s : r.top) {
      j.begin_object();
      j.member("name", std::string_view(s.name));
      j.member("dur_ns", s.dur_ns);
      j.member("ts_ns", s.ts_ns);
      j.key("pid");
      json_id(j, s.pid);
      j.key("tid");
      json_id(j, s.tid);
      json_str_or_null(j, "thread", s.thread);
      json_str_or_null(j, "compile_id", s.compile_id);
      j.end_object();
    }
    j.end_array();
  }
  if (sec.gpu) {
    const GpuSection& g = r.gpu;
    j.key("gpu");
    j.begin_object();
    j.member("present", g.present());
    j.member("kernels", g.kernels);
    j.member("kernel_ns", g.kernel_ns);
    j.member("kernels_unattributed", g.kernels_unattributed);
    j.member("memcpys", g.memcpys);
    j.member("memsets", g.memsets);
    j.key("names");  // GPU work by name, as compile_times' rows plus "kind"
    j.begin_array();
    for (const NameRow& n : g.names) json_name_row(j, n);
    j.end_array();
    j.key("units");
    j.begin_array();
    for (const GpuUnitRow& u : g.units) {
      j.begin_object();
      json_unit_key(j, u.pid, u.compile_id, u.name);
      j.member("kernels", u.kernels);
      j.member("distinct_kernels", u.distinct_kernels);
      j.member("gpu_total_ns", u.gpu_ns);
      j.member("gpu_mean_ns", u.mean_ns());
      json_opt(j, "first_launch_ns", u.first_launch_ns);
      json_opt(j, "first_launch_latency_ns", u.latency_ns);
      j.member("launched_inside", u.launched_inside);
      j.end_object();
    }
    j.end_array();
    j.end_object();
  }
  if (sec.caches) json_caches(r, j);
  if (sec.autotune) json_autotune(r, j);
  if (sec.critical_path) json_critical_path(r, j);
}

}  // namespace jitscope::report
