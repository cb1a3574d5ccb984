// The Aggregator's intake: every decoded event is counted, its thread,
// process, name and unit interned, and its span (an X slice or a matched
// B/E pair) handed to span(); metadata events fill the header. finish()
// closes the threads and builds the header, then asks each table's part
// (aggregator_spans, aggregator_units, aggregator_gpu) for its rows.
#include "aggregator.hpp"

#include "aggregator_state.hpp"
#include "metrics.hpp"

#include <simdjson.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <set>

namespace jitscope::report {
namespace {

// `s` cut to kMaxReason bytes (at a UTF-8 boundary) and "…": a reason is
// kept per failed pass, and a hostile trace's args can be any size.
constexpr std::size_t kMaxReason = 1024;
std::string capped(std::string s) {
  if (s.size() <= kMaxReason) return s;
  std::size_t n = kMaxReason;
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
  s.resize(n);
  return s + "…";
}

// Why a failed span failed: its own "fail_reason" or "reason", else the op
// it ran on (MLIR's "op" and "ir_name": "on func.func @main"), else empty.
std::string fail_reason_of(const tools::DecodedEvent& ev, tools::EventDecoder& decoder) {
  std::string reason, s;
  if (decoder.arg_string(ev, "fail_reason", &s) || decoder.arg_string(ev, "reason", &s))
    return capped(std::move(s));
  if (decoder.arg_string(ev, "op", &s)) reason = "on " + s;
  if (decoder.arg_string(ev, "ir_name", &s)) reason += (reason.empty() ? "on @" : " @") + s;
  return capped(std::move(reason));
}

}  // namespace

Aggregator::Aggregator(Options opt) : opt_(opt), self_(opt.self_time_run_spans) {}
Aggregator::~Aggregator() = default;

// Names and keys are a few dozen bytes: 8-byte words multiplied in, then
// mixed (std::hash's murmur is a library call at several times the cost).
// Only lookups depend on it: rows are sorted, never in hash order.
std::size_t Aggregator::SvHash::operator()(std::string_view s) const noexcept {
  constexpr std::uint64_t kMul = 0x9E3779B97F4A7C15ull;
  std::uint64_t h = (s.size() + 1) * kMul;
  const char* p = s.data();
  std::size_t n = s.size();
  for (; n >= 8; p += 8, n -= 8) {
    std::uint64_t w;
    std::memcpy(&w, p, 8);
    h = (h ^ w) * kMul;
    h ^= h >> 32;
  }
  std::uint64_t tail = 0;
  for (std::size_t i = 0; i < n; ++i) {
    tail |= static_cast<std::uint64_t>(static_cast<unsigned char>(p[i])) << (8 * i);
  }
  h = (h ^ tail) * kMul;
  h ^= h >> 29;
  return static_cast<std::size_t>(h);
}

// The top `bits` bits of a multiplicative hash of the pair.
std::size_t Aggregator::number_slot(std::int64_t pid, std::int64_t tid, int bits) noexcept {
  std::uint64_t h = static_cast<std::uint64_t>(pid) * 0x9E3779B97F4A7C15ull;
  h = (h ^ (h >> 29) ^ static_cast<std::uint64_t>(tid)) * 0xD6E8FEB86659FD93ull;
  return static_cast<std::size_t>(h >> (64 - bits));
}

std::uint32_t Aggregator::name_in(NameIndex& index, std::string_view name) {
  const std::size_t hash = SvHash{}(name);
  std::uint32_t& slot = index.cache[hash >> (8 * sizeof hash - NameIndex::kCacheBits)];
  if (slot != kNone && names_[slot].name == name) return slot;
  if (auto it = index.map.find(name); it != index.map.end()) return slot = it->second;
  const auto id = static_cast<std::uint32_t>(names_.size());
  names_.emplace_back().name = std::string(name);
  index.map.emplace(std::string(name), id);
  return slot = id;
}

std::uint32_t Aggregator::unit_id(bool has_pid, const Id& pid, std::string_view compile_id) {
  unit_key_.clear();
  append_owned(unit_key_, has_pid, pid);
  unit_key_.append(compile_id);
  if (auto it = units_index_.find(unit_key_); it != units_index_.end()) return it->second;
  const auto id = static_cast<std::uint32_t>(units_.size());
  UnitStats& u = units_.emplace_back();
  u.has_pid = has_pid;
  if (has_pid) u.pid = pid;
  u.id = std::string(compile_id);
  units_index_.emplace(unit_key_, id);
  return id;
}

std::uint32_t Aggregator::unit_id(std::uint32_t thread, std::string_view compile_id) {
  ThreadState& t = threads_[thread];
  if (t.last_unit != kNone && compile_id == t.last_compile_id) return t.last_unit;
  t.last_unit = unit_id(t.has_pid, t.pid, compile_id);
  t.last_compile_id = compile_id;
  return t.last_unit;
}

std::uint32_t Aggregator::thread_id(const tools::DecodedEvent& ev) {
  const bool numbers = ev.has_pid && ev.has_tid && !ev.pid.is_string && !ev.tid.is_string;
  NumberSlot* slot = nullptr;
  if (numbers) {
    slot = &threads_by_number_[number_slot(ev.pid.number, ev.tid.number, 8)];
    if (slot->id != kNone && slot->pid == ev.pid.number && slot->tid == ev.tid.number)
      return slot->id;
  }
  key_.clear();
  append_id(key_, ev.has_pid, ev.pid);
  append_id(key_, ev.has_tid, ev.tid);
  std::uint32_t id;
  if (last_thread_ != kNone && key_ == last_thread_key_) {
    id = last_thread_;
  } else if (auto it = threads_index_.find(key_); it != threads_index_.end()) {
    id = it->second;
  } else {
    id = static_cast<std::uint32_t>(threads_.size());
    ThreadState& t = threads_.emplace_back();
    t.has_pid = ev.has_pid;
    t.pid = owned(ev.has_pid, ev.pid);
    t.tid = owned(ev.has_tid, ev.tid);
    threads_index_.emplace(key_, id);
  }
  if (slot != nullptr) *slot = NumberSlot{ev.pid.number, ev.tid.number, id};
  last_thread_ = id;
  last_thread_key_ = key_;
  return id;
}

std::uint32_t Aggregator::note_process(const tools::DecodedEvent& ev) {
  NumberSlot* slot = nullptr;
  if (!ev.pid.is_string) {
    slot = &processes_by_number_[number_slot(ev.pid.number, 0, 6)];
    if (slot->id != kNone && slot->pid == ev.pid.number) return slot->id;
  }
  key_.clear();
  append_id(key_, ev.has_pid, ev.pid);
  auto it = processes_index_.find(key_);
  if (it == processes_index_.end()) {
    it = processes_index_.emplace(key_, static_cast<std::uint32_t>(process_names_.size())).first;
    process_names_.emplace_back();
  }
  if (slot != nullptr) *slot = NumberSlot{ev.pid.number, 0, it->second};
  return it->second;
}

void Aggregator::add(const tools::DecodedEvent& ev, tools::EventDecoder& decoder) {
  if (ev.ph.size() == 1 && static_cast<unsigned char>(ev.ph[0]) < 128) {
    ++ph_small_[static_cast<unsigned char>(ev.ph[0])];
  } else {
    ++ph_counts_[std::string(ev.ph)];
  }
  const std::uint32_t process = ev.has_pid ? note_process(ev) : kNone;
  const bool meta = ev.ph == "M";
  if (meta) {
    metadata(ev, decoder, process);
    return;
  }
  if (ev.has_ts) {
    std::int64_t end;
    if (__builtin_add_overflow(ev.ts_ns, ev.has_dur && ev.dur_ns > 0 ? ev.dur_ns : 0, &end)) {
      // ts + dur beyond int64 ns (hostile input): the event is skipped.
      ++end_overflow_;
      if (ev.ph.size() == 1 && ev.has_pid && ev.has_tid) ++threads_[thread_id(ev)].events;
      return;
    }
    if (!header_.has_time) {
      header_.has_time = true;
      header_.begin_ns = ev.ts_ns;
      header_.end_ns = end;
    } else {
      header_.begin_ns = std::min(header_.begin_ns, ev.ts_ns);
      header_.end_ns = std::max(header_.end_ns, end);
    }
  }
  if (ev.ph.size() != 1) return;
  switch (ev.ph[0]) {
    case 'X': {
      if (!ev.has_ts) {
        ++spans_without_ts_;
        return;
      }
      const std::uint32_t t = thread_id(ev);
      ThreadState& th = threads_[t];
      ++th.events;
      const bool gpu_side = ev.has_device && ev.has_stream;
      // What CUPTI recorded on a host thread (the SDK writes it with its
      // correlation id): CUDA's time, not the compiler's; beside the GPU
      // work, out of the host tables.
      const bool cuda_call =
          !gpu_side && ((ev.cat == "cuda" && ev.has_correlation) || ev.cat == "cupti");
      const std::int64_t dur = ev.has_dur && ev.dur_ns > 0 ? ev.dur_ns : 0;
      // Self time's tie rule: did this thread's slices come in end order?
      if (th.has_x && ev.ts_ns + dur < th.last_x_end) th.x_end_ordered = false;
      th.has_x = true;
      th.last_x_end = ev.ts_ns + dur;
      const std::string_view cid = ev.has_compile_id ? ev.compile_id : std::string_view();
      const std::uint32_t name = span(t, ev.name, ev.cat, ev.ts_ns, dur, cid, ev.attached,
                                      gpu_side    ? Side::kGpu
                                      : cuda_call ? Side::kCudaCall
                                                  : Side::kHost,
                                      order_++, true);
      if (gpu_side) {
        gpu_slice(ev, name);
      } else if (cuda_call) {
        names_[name].gpu = GpuWork::kCall;
      } else if (ev.has_args) {
        if (ev.cat == "compile_unit" && ev.has_compile_id) {
          unit_slice_args(unit_id(t, cid), ev);
        } else if (ev.cat == "jitscope.process" && ev.name == "spawn") {
          spawn_note(t, ev, decoder);
        } else {
          classify_pass(name, ev, decoder);
          ir_sizes(name, dur, ev, decoder, -1);
          span_marks(t, name, ev.ts_ns, dur, cid, ev, decoder, nullptr);
        }
      }
      return;
    }
    case 'B': begin(thread_id(ev), ev, decoder); return;
    case 'E': end(thread_id(ev), ev, decoder); return;
    case 'I':
    case 'i':
      if (ev.cat == "jitscope" && ev.name.substr(0, 7) == "crash: ") crash_instant(ev, decoder);
      if (ev.name == "cache_lookup" && ev.has_args) cache_lookup(ev, decoder);
      if (ev.name == "unit_waits" && ev.has_args) waits_.add(ev, decoder);
      if (ev.name.starts_with("autotune_")) autotune_.add(ev, decoder);
      if (ev.has_pid && ev.has_tid) ++threads_[thread_id(ev)].events;
      return;
    case 'C':
      // A counter belongs to its process (Chrome's format; the Perfetto
      // form's counter track hangs under the process, with no thread):
      // its tid names no thread, so both forms count the same threads.
      return;
    default:
      if (ev.has_pid && ev.has_tid) ++threads_[thread_id(ev)].events;
      return;
  }
}

void Aggregator::begin(std::uint32_t t, const tools::DecodedEvent& ev,
                       tools::EventDecoder& decoder) {
  ThreadState& th = threads_[t];
  ++th.events;
  if (th.begins_beyond > 0 || th.begins.size() >= opt_.max_open_begins ||
      open_begins_ >= opt_.max_open_begins_total) {
    // Past the bound (and once past it, until those B's close: the stack
    // stays in B order): counted, and its E will be matched to it.
    ++th.begins_beyond;
    ++begins_beyond_;
    return;
  }
  ThreadState::Begin b;
  b.unit_slice = ev.cat == "compile_unit" && ev.has_compile_id;
  if (b.unit_slice) {
    b.name = kNone;
    th.unit_slice_names.emplace_back(ev.name);
  } else {
    b.name = name_id(ev.name);
  }
  b.unit = ev.has_compile_id ? unit_id(t, ev.compile_id) : kNone;
  b.ts = ev.has_ts ? ev.ts_ns : 0;
  b.has_ts = ev.has_ts;  // kept all the same: its E closes it, not the B below
  b.order = order_++;
  b.attached = ev.attached;
  b.failed = false;
  b.ir_before = -1;
  if (ev.has_args) {
    if (b.unit_slice) {
      unit_slice_args(b.unit, ev);
    } else {
      classify_pass(b.name, ev, decoder);
      if (names_[b.name].pass == NameStats::Pass::kYes) {
        b.ir_before = ir_size_arg(decoder, ev, "ir_size_before");
      }
      b.failed = ev.failed;
      // Rare: its reason waits beside the stack for its E.
      if (b.failed) th.failed_reasons.push_back(fail_reason_of(ev, decoder));
    }
  }
  th.begins.push_back(b);
  ++open_begins_;
}

void Aggregator::end(std::uint32_t t, const tools::DecodedEvent& ev, tools::EventDecoder& decoder) {
  ThreadState& th = threads_[t];
  ++th.events;
  if (th.begins_beyond > 0) {  // closes the innermost B, which was not kept
    --th.begins_beyond;
    return;
  }
  if (th.begins.empty()) {
    ++unmatched_ends_;
    return;
  }
  const ThreadState::Begin b = th.begins.back();
  th.begins.pop_back();
  --open_begins_;
  std::string b_reason;  // a failed B's reason, taken off beside it
  if (b.failed && !th.failed_reasons.empty()) {
    b_reason = std::move(th.failed_reasons.back());
    th.failed_reasons.pop_back();
  }
  std::string slice_name;  // a unit slice's, likewise
  if (b.unit_slice && !th.unit_slice_names.empty()) {
    slice_name = std::move(th.unit_slice_names.back());
    th.unit_slice_names.pop_back();
  }
  if (!b.has_ts || !ev.has_ts) {  // a pair without a time: no span, and no other pair thrown off
    ++spans_without_ts_;
    return;
  }
  std::int64_t dur;
  if (__builtin_sub_overflow(ev.ts_ns, b.ts, &dur)) {  // E - B beyond int64 ns: skipped
    ++end_overflow_;
    return;
  }
  std::uint32_t unit = b.unit;
  if (unit == kNone && ev.has_compile_id) unit = unit_id(t, ev.compile_id);
  // Copies: span() may grow names_/units_ and invalidate references.
  const std::string name = b.unit_slice ? std::move(slice_name) : names_[b.name].name;
  const std::string cid = unit == kNone ? std::string() : units_[unit].id;
  const std::uint32_t name_index =
      span(t, name, b.unit_slice ? std::string_view("compile_unit") : std::string_view(), b.ts,
           std::max<std::int64_t>(0, dur), cid, b.attached, Side::kHost, b.order, false);
  if (b.unit_slice) {
    if (ev.has_args) unit_slice_args(unit, ev);
  } else if (b.failed || ev.has_args) {
    classify_pass(name_index, ev, decoder);  // args on the E only
    ir_sizes(name_index, std::max<std::int64_t>(0, dur), ev, decoder, b.ir_before);
    span_marks(t, name_index, b.ts, std::max<std::int64_t>(0, dur), cid, ev, decoder,
               b.failed ? &b_reason : nullptr);
  }
}

void Aggregator::unit_slice_args(std::uint32_t unit, const tools::DecodedEvent& ev) {
  UnitStats& u = units_[unit];
  if (u.unit_key.empty()) u.unit_key = ev.unit_key;
  if (u.frame.empty()) u.frame = ev.frame;
  if (ev.incomplete) u.incomplete = true;
}

void Aggregator::span_marks(std::uint32_t thread, std::uint32_t name, std::int64_t start,
                            std::int64_t dur, std::string_view compile_id,
                            const tools::DecodedEvent& ev, tools::EventDecoder& decoder,
                            const std::string* begin_reason) {
  const bool failed = begin_reason != nullptr || ev.failed;
  const bool incomplete = ev.incomplete;
  if (!failed && !incomplete) return;
  const std::uint32_t unit = compile_id.empty() ? kNone : unit_id(thread, compile_id);
  if (failed) {
    ++failed_total_;
    if (failed_.size() < Report::kMaxFailedPasses) {
      // A B/E pair's from its B, else from this event.
      std::string reason = begin_reason != nullptr && !begin_reason->empty()
                               ? *begin_reason
                               : fail_reason_of(ev, decoder);
      failed_.push_back(FailedSpan{name, thread, unit, start, dur, std::move(reason)});
    }
  }
  if (incomplete) {
    // The innermost: the latest start (of equal starts, the first written).
    ThreadState& th = threads_[thread];
    if (!th.has_incomplete || start > th.incomplete_start) {
      th.has_incomplete = true;
      th.incomplete_start = start;
      th.incomplete_dur = dur;
      th.incomplete_name = name;
      th.incomplete_unit = unit;
    }
  }
}

void Aggregator::crash_instant(const tools::DecodedEvent& ev, tools::EventDecoder& decoder) {
  key_.clear();
  append_id(key_, ev.has_pid, ev.pid);
  // The first crash of a process is the one.
  if (!crash_index_.emplace(key_, static_cast<std::uint32_t>(crashes_.size())).second) return;
  CrashNote c;
  c.has_tid = ev.has_tid;
  c.tid = owned(ev.has_tid, ev.tid);
  // "SIGSEGV at 0x0 on thread 4242", "std::terminate: std::runtime_error: boom on thread 7".
  c.text = std::string(ev.name.substr(7));
  std::string s;
  if (decoder.arg_string(ev, "exception", &s)) c.text += ": " + s;
  if (decoder.arg_string(ev, "address", &s)) c.text += " at " + s;
  if (ev.has_tid) c.text += " on thread " + c.tid.str();
  c.text = capped(std::move(c.text));
  crashes_.push_back(std::move(c));
}

const Aggregator::CrashNote* Aggregator::crash_of(bool has_pid, const Id& pid) const {
  std::string key;
  append_owned(key, has_pid, pid);
  const auto it = crash_index_.find(key);
  return it == crash_index_.end() ? nullptr : &crashes_[it->second];
}

namespace {
// An integer arg of a metadata event, if it has one.
void count_arg(tools::EventDecoder& decoder, const tools::DecodedEvent& ev, const char* key,
               std::optional<std::int64_t>& out) {
  std::int64_t n = 0;
  if (decoder.arg_integer(ev, key, &n)) out = n;
}
}  // namespace

void Aggregator::metadata(const tools::DecodedEvent& ev, tools::EventDecoder& decoder,
                          std::uint32_t process) {
  if (ev.name == "thread_name") {
    if (!ev.arg_name.empty()) threads_[thread_id(ev)].name = std::string(ev.arg_name);
  } else if (ev.name == "process_name") {
    if (process != kNone) process_names_[process] = std::string(ev.arg_name);
  } else if (ev.name == "jitscope_session") {
    SessionInfo s;
    decoder.arg_string(ev, "version", &s.version);
    decoder.arg_string(ev, "clock", &s.clock);
    std::string_view cupti;
    if (decoder.arg(ev, "cupti", &cupti)) {
      simdjson::dom::parser p;
      simdjson::dom::object o;
      if (p.parse(cupti.data(), cupti.size()).get_object().get(o) == simdjson::SUCCESS) {
        std::string_view v;
        if (o["state"].get_string().get(v) == simdjson::SUCCESS) s.cupti_state = std::string(v);
        if (o["reason"].get_string().get(v) == simdjson::SUCCESS) s.cupti_reason = std::string(v);
        if (o["timestamps"].get_string().get(v) == simdjson::SUCCESS)
          s.cupti_timestamps = std::string(v);
      }
    }
    ProcessStats& p = process_stats(process);
    if (!p.has_session) session_processes_.push_back(process);
    p.has_session = true;
    p.cupti_state = s.cupti_state;
    if (!header_.session) header_.session = std::move(s);
  } else if (ev.name == "jitscope_snapshot") {
    SnapshotInfo s;
    decoder.arg_string(ev, "trigger", &s.trigger);
    decoder.arg_string(ev, "compile_id", &s.compile_id);  // an alarm's unit
    if (ev.has_pid) s.pid = owned(true, ev.pid);
    count_arg(decoder, ev, "spans_open", s.spans_open);
    count_arg(decoder, ev, "bytes_dropped_from_window", s.bytes_dropped_from_window);
    header_.snapshot = std::move(s);
  } else if (ev.name == "jitscope_stats") {
    ProcessStats& p = process_stats(process);
    count_arg(decoder, ev, "events_dropped", p.events_dropped);
    count_arg(decoder, ev, "compile_records_dropped", p.compile_records_dropped);
  }
}

Aggregator::ProcessStats& Aggregator::process_stats(std::uint32_t process) {
  if (process == kNone) return pidless_stats_;
  if (process >= process_stats_.size()) process_stats_.resize(process_names_.size());
  return process_stats_[process];
}

namespace {
void add_to(std::optional<std::int64_t>& sum, const std::optional<std::int64_t>& n) {
  if (n) sum = sum.value_or(0) + *n;
}
}  // namespace

Report Aggregator::finish(const std::string& input, std::uint64_t bytes, std::uint64_t events,
                          bool unterminated, std::uint64_t fields_ignored,
                          const MetricsFile* metrics, const tools::InputRepairs& repairs) {
  self_.finish([this](std::uint32_t t) { return threads_[t].x_end_ordered; }, *this);
  credit_children();
  std::uint64_t unclosed = 0;
  for (const ThreadState& t : threads_) unclosed += t.begins.size();
  Report r;
  r.header = std::move(header_);
  Header& h = r.header;
  const auto sum_drops = [&h](const ProcessStats& p) {
    add_to(h.events_dropped, p.events_dropped);
    add_to(h.compile_records_dropped, p.compile_records_dropped);
  };
  for (const ProcessStats& p : process_stats_) sum_drops(p);
  sum_drops(pidless_stats_);
  std::uint64_t without_stats = 0;  // sessions whose process wrote no jitscope_stats
  for (const std::uint32_t process : session_processes_) {
    // process_stats() grew the vector past it when its session came.
    const ProcessStats& p = process == kNone ? pidless_stats_ : process_stats_[process];
    if (!p.events_dropped) ++without_stats;
    ++h.sessions;
    const std::string state = p.cupti_state.empty() ? "unknown" : p.cupti_state;
    auto it = std::find_if(h.cupti_states.begin(), h.cupti_states.end(),
                           [&](const auto& c) { return c.first == state; });
    if (it == h.cupti_states.end()) {
      h.cupti_states.emplace_back(state, 1);
    } else {
      ++it->second;
    }
  }
  h.input = input;
  h.bytes = bytes;
  h.events = events;
  h.unterminated = unterminated;
  h.processes = process_names_.size();
  for (const ThreadState& t : threads_) h.threads += t.events > 0 ? 1 : 0;
  std::map<std::string, std::uint64_t> phs(ph_counts_.begin(), ph_counts_.end());
  for (int c = 0; c < 128; ++c) {
    if (ph_small_[c] != 0) phs[std::string(1, static_cast<char>(c))] += ph_small_[c];
  }
  h.phase_counts.assign(phs.begin(), phs.end());
  auto warn = [&](std::uint64_t n, const std::string& what) {
    if (n > 0) h.warnings.push_back(std::to_string(n) + " " + what);
  };
  for (std::string& w : tools::repair_warnings(repairs)) h.warnings.push_back(std::move(w));
  warn(self_.overlapping(), "spans overlap a span on their thread without nesting in it");
  warn(self_.lost(), "spans lost to a read error of the self-time temporary file (no self time)");
  warn(unmatched_ends_, "'E' events with no open 'B' on their thread (ignored)");
  warn(spawns_beyond_,
       "child-process spawns beyond the first 1,000,000 (not matched to their "
       "children: their time stays unexplained)");
  warn(unclosed, "'B' events never closed (ignored)");
  warn(begins_beyond_, "'B' events beyond " + std::to_string(opt_.max_open_begins) +
                           " open on one thread or " + std::to_string(opt_.max_open_begins_total) +
                           " on all (ignored, with their 'E')");
  warn(spans_without_ts_, "spans without a usable ts (ignored)");
  warn(end_overflow_, "events whose end (ts + dur, or E - B) does not fit in int64 ns (ignored)");
  warn(fields_ignored, "event fields of an unexpected type (ignored)");
  if (h.compile_records_dropped && *h.compile_records_dropped > 0) {
    warn(static_cast<std::uint64_t>(*h.compile_records_dropped),
         "compile records dropped by the jitscope writer (jitscope_stats): the metrics file lacks "
         "them, so as many units have no record");
  }
  if (h.events_dropped && *h.events_dropped > 0) {
    warn(static_cast<std::uint64_t>(*h.events_dropped),
         "events dropped by the jitscope writer (jitscope_stats)");
  }
  if (h.sessions > 1 && without_stats > 0) {
    h.warnings.push_back(std::to_string(without_stats) + " of " + std::to_string(h.sessions) +
                         " processes wrote no jitscope_stats (cut off before their session "
                         "stopped?): their dropped events are not counted above");
  }

  PidKeys unit_pids;  // distinct pid keys of the rows
  unit_rows(r, metrics, unit_pids);
  top_rows(r);
  gpu_rows(r, unit_pids);  // before name_rows: it sets r.gpu whole, name_rows adds r.gpu.names
  name_rows(r);
  pipeline_rows(r);
  ir_growth_rows(r);
  failed_rows(r);
  r.caches = caches_.rows();
  autotune_rows(r);
  r.critical_path = find_critical_path(r.units, waits_);
  r.multi_process_units = unit_pids.size() > 1;
  return r;
}

// The tuning sessions, a trial's compile units' times looked up among
// the units' rows by (pid, compile id).
void Aggregator::autotune_rows(Report& r) const {
  std::unordered_map<std::string, AutotuneSessions::UnitTimes> units;
  const auto key = [](const std::optional<Id>& pid, const std::string& id) {
    return key_in_process(pid_text(pid), id);
  };
  if (autotune_.any()) {
    for (const UnitRow& u : r.units) {
      if (u.in_trace) units[key(u.pid, u.compile_id)] = {u.wall_ns, u.compile_end_ns};
    }
  }
  r.autotune =
      autotune_.rows([&](const std::optional<Id>& pid,
                         const std::string& id) -> std::optional<AutotuneSessions::UnitTimes> {
        const auto it = units.find(key(pid, id));
        if (it == units.end()) return std::nullopt;
        return it->second;
      });
  r.autotune_events_beyond = autotune_.events_beyond();
}

}  // namespace jitscope::report
