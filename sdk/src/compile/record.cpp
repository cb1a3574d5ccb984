// Compile records (CompilationMetrics): their JSON line, the runtime record,
// the ring of recent records and the queue of records for the metrics file.
#include "base/boundary.hpp"
#include "base/compile_id.hpp"
#include "base/immortal.hpp"
#include "base/json_writer.hpp"
#include "base/log.hpp"
#include "clock/clock.hpp"
#include "compile/state.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <mutex>
#include <new>
#include <optional>
#include <utility>
#include <vector>

namespace jitscope {

std::string CompileId::str() const { return detail::compile_id_text(frame, attempt); }

std::string CompileId::display() const {
  std::string out = "[";
  detail::append_compile_id(out, frame, attempt);
  out += ']';
  return out;
}

namespace {
// `"key":["a","b",...]` in the container's order.
template <class Strings>
void write_string_array(detail::JsonWriter& w, std::string_view key, const Strings& strings) {
  w.key(key);
  w.begin_array();
  for (const std::string& s : strings) w.value(std::string_view(s));
  w.end_array();
}
}  // namespace

std::string CompileRecord::to_json() const {
  using detail::JsonWriter;
  std::string out;
  JsonWriter w(out);
  w.begin_object();
  if (has_compile_id) {
    w.member("compile_id", std::string_view(compile_id.str()));
    w.member("frame_id", compile_id.frame);
    w.member("attempt", compile_id.attempt);
  } else {
    w.key("compile_id");
    w.null();
  }
  w.member("name", std::string_view(name));
  if (!unit_key.empty()) w.member("unit_key", std::string_view(unit_key));
  if (!frame.empty()) w.member("frame", std::string_view(frame));
  w.member("is_runtime", is_runtime);
  w.member("is_forward", is_forward);
  w.member("start_time_us", start_time_us);
  w.member("end_time_us", end_time_us);
  w.member("duration_us", duration_us);
  for (const auto& [column, us] : columns) w.member(column, us);
  if (!recompile_reason.empty()) w.member("recompile_reason", std::string_view(recompile_reason));
  if (!recompile_user_contexts.empty()) {
    write_string_array(w, "recompile_user_contexts", recompile_user_contexts);
  }
  if (failed) {
    w.member("fail_type", std::string_view(fail_type));
    w.member("fail_reason", std::string_view(fail_reason));
  }
  if (!caches.empty()) {
    w.key("caches");
    w.begin_object();
    for (const auto& [cache, c] : caches) {
      w.key(cache);
      w.begin_object();
      w.member("hits", c.hits);
      w.member("misses", c.misses);
      write_string_array(w, "hit_keys", c.hit_keys);  // std::set: sorted
      write_string_array(w, "miss_keys", c.miss_keys);
      w.end_object();
    }
    w.end_object();
  }
  if (!waits.empty()) {
    w.key("waits");
    w.begin_object();
    for (const auto& [wait, t] : waits) {
      w.key(wait);
      w.begin_object();
      w.member("count", t.count);
      w.member("total_us", t.total_us);
      w.end_object();
    }
    w.end_object();
  }
  if (!compile_events.empty()) {
    w.key("compile_events");
    w.begin_array();
    for (const CompileEvent& e : compile_events) {
      w.begin_object();
      w.member("name", std::string_view(e.name));
      w.member("start_time_us", e.start_time_us);
      w.member("duration_us", e.duration_us);
      detail::write_fields(w, e.fields);
      w.end_object();
    }
    w.end_array();
  }
  if (compile_events_dropped != 0) w.member("compile_events_dropped", compile_events_dropped);
  if (!artifacts.empty()) {
    w.key("artifacts");
    w.begin_array();
    for (const ArtifactEntry& a : artifacts) {
      w.begin_object();
      w.member("kind", std::string_view(a.kind));
      w.member("path", std::string_view(a.path));
      w.member("bytes", a.bytes);
      w.member("fnv1a", std::string_view(a.fnv1a));
      w.end_object();
    }
    w.end_array();
  }
  detail::write_fields(w, fields);
  w.end_object();
  return out;
}

}  // namespace jitscope

namespace jitscope::detail {
namespace {

// Records are small and rare next to spans: the queue holds what a
// compiler closing units in a tight loop makes between two drains (a
// 1-KiB record in memory: about 65,000), and wakes the flusher every
// kWakeEveryRecords so that it rarely gets near the bound. Past it a record
// is dropped and counted (jitscope_stats' compile_records_dropped,
// SessionStats), never lost silently. The flusher writes each record's
// JSON: a unit's close only hands its record's block here.
constexpr std::size_t kMaxQueuedMetricsBytes = std::size_t{64} << 20;
constexpr std::size_t kWakeEveryRecords = 4096;

// The last kRecentRecordCapacity records, oldest first from `next` once
// full: a fixed ring, so that a record in makes no allocation and the one
// it pushes out goes back to the caller (freed after the lock).
class RecentRecords {
 public:
  [[nodiscard]] SharedRecord push(SharedRecord record) noexcept {
    SharedRecord out = std::exchange(slots_[next_], std::move(record));
    next_ = (next_ + 1) % slots_.size();
    if (count_ < slots_.size()) ++count_;
    return out;
  }
  std::size_t size() const noexcept { return count_; }
  template <class Visit>
  void each_oldest_first(Visit visit) const {
    const std::size_t oldest = count_ < slots_.size() ? 0 : next_;
    for (std::size_t i = 0; i < count_; ++i) visit(*slots_[(oldest + i) % slots_.size()]);
  }
  void clear() noexcept {
    for (SharedRecord& r : slots_) r.reset();
    next_ = count_ = 0;
  }

 private:
  std::array<SharedRecord, kRecentRecordCapacity> slots_;
  std::size_t next_ = 0;  // the slot the next record takes
  std::size_t count_ = 0;
};

struct RecordSinks {
  std::mutex mutex;
  RecentRecords recent;
  std::vector<SharedRecord> metrics_queue;  // waiting for the flusher
  std::vector<std::string> metrics_lines;   // finish_metrics_line's, waiting too
  std::size_t queued_bytes = 0;             // approx_bytes() of both
  bool metrics_on = false;
  // Since metrics output was last turned on or off. relaxed: a count, read
  // without the lock (the flusher's stats, also in a crash cycle, where
  // the lock may be held by the crashed thread).
  std::atomic<std::uint64_t> dropped{0};
};

std::atomic<void (*)()> g_metrics_wake{nullptr};

// Immortal: units may close during exit.
RecordSinks& sinks() noexcept { return immortal<RecordSinks>(); }

struct RuntimeState {
  std::mutex mutex;
  CompileRecord record;
  bool charged = false;  // anything since the last flush
  // `charged`, readable without the lock: a unit's open checks it on every
  // compile, and the runtime record is rarely charged. relaxed: a unit
  // opening as a phase ends on another thread may miss that phase's time
  // (the next flush takes it), as it could with the lock.
  std::atomic<bool> maybe_charged{false};
};

RuntimeState& runtime_state() noexcept { return immortal<RuntimeState>(); }

}  // namespace

std::uint64_t unix_us_now() noexcept { return realtime_ns() / 1000; }

void charge_column(CompileRecord& record, const std::string& column, std::uint64_t column_us,
                   std::uint64_t duration_us) {
  record.columns[column] += column_us;
  record.duration_us += duration_us;
}

bool charge_unit_column(UnitState& unit, const PhaseStats& phase, std::uint64_t column_us,
                        std::uint64_t duration_us, bool attached) noexcept {
  if (!attached) {
    std::uint32_t i = 0;
    while (i < unit.owner_used && unit.owner_slots[i].phase != &phase) ++i;
    if (i == unit.owner_used) {
      if (i == UnitState::kColumnSlots) return false;
      unit.owner_slots[i] = {&phase, 0};
      ++unit.owner_used;
    }
    unit.owner_slots[i].us += column_us;
    unit.owner_duration_us += duration_us;
    return true;
  }
  for (UnitState::SharedSlot& slot : unit.shared_slots) {
    // acquire/acq_rel: a slot's phase pointer is published once; seeing it
    // set means it is that phase's slot for good.
    const PhaseStats* owner = slot.phase.load(std::memory_order_acquire);
    if (owner == nullptr &&
        slot.phase.compare_exchange_strong(owner, &phase, std::memory_order_acq_rel)) {
      owner = &phase;
    }
    if (owner != &phase) continue;
    // relaxed: an independent sum, read once at close with an exchange; a
    // charge that lands after that is too late for the record anyway.
    slot.us.fetch_add(column_us, std::memory_order_relaxed);
    return true;  // attached threads never add to duration_us
  }
  return false;
}

void merge_unit_columns(UnitState& unit) {
  for (std::uint32_t i = 0; i < unit.owner_used; ++i) {
    unit.record.columns[unit.owner_slots[i].phase->column] += unit.owner_slots[i].us;
  }
  unit.owner_used = 0;
  unit.record.duration_us += unit.owner_duration_us;
  unit.owner_duration_us = 0;
  for (UnitState::SharedSlot& slot : unit.shared_slots) {
    // acquire: pairs with the claiming CAS, so phase->column is readable.
    const PhaseStats* phase = slot.phase.load(std::memory_order_acquire);
    if (phase == nullptr) break;
    // relaxed: see charge_unit_column.
    unit.record.columns[phase->column] += slot.us.exchange(0, std::memory_order_relaxed);
  }
}

void add_compile_event(CompileRecord& record, CompileEvent event) {
  if (record.compile_events.size() >= kMaxCompileEventsPerRecord) {
    ++record.compile_events_dropped;
    return;
  }
  record.compile_events.push_back(std::move(event));
}

void add_wait(CompileRecord& record, const std::string& name, std::uint64_t us) {
  WaitTotals& t = record.waits[name];
  ++t.count;
  t.total_us += us;
}

std::mutex& runtime_mutex() noexcept { return runtime_state().mutex; }

CompileRecord& runtime_record_locked(std::uint64_t span_us) noexcept {
  RuntimeState& rt = runtime_state();
  const std::uint64_t now = unix_us_now();
  const std::uint64_t began = now - std::min(now, span_us);
  if (!rt.charged) {
    rt.charged = true;
    rt.maybe_charged.store(true, std::memory_order_relaxed);
    rt.record = CompileRecord();
    rt.record.is_runtime = true;
    rt.record.name = "runtime";
    rt.record.start_time_us = began;
  }
  rt.record.start_time_us = std::min(rt.record.start_time_us, began);
  rt.record.end_time_us = now;
  return rt.record;
}

namespace {
std::size_t text_bytes(const FieldValue& v) noexcept {
  return v.type() == FieldValue::Type::kString ? v.as_string().size() : 0;
}

std::size_t fields_bytes(const Fields& fields) noexcept {
  std::size_t n = 0;
  for (const auto& [key, field] : fields) {
    n += 64 + key.size() + 48 * field.members.size();
    n += text_bytes(field.value);
    for (const FieldValue& m : field.members) n += text_bytes(m);
  }
  return n;
}
}  // namespace

// What the record holds in memory, near enough to bound a queue of them:
// its strings and its containers' nodes, at a flat cost per node.
std::size_t approx_bytes(const CompileRecord& r) noexcept {
  constexpr std::size_t kNode = 64;
  std::size_t n = sizeof(CompileRecord) + r.name.size() + r.unit_key.size() + r.frame.size() +
                  r.recompile_reason.size() + r.fail_type.size() + r.fail_reason.size() +
                  fields_bytes(r.fields);
  for (const auto& [column, us] : r.columns) n += kNode + column.size();
  for (const std::string& c : r.recompile_user_contexts) n += 32 + c.size();
  for (const auto& [layer, counts] : r.caches) {
    n += kNode + layer.size();
    for (const std::string& k : counts.hit_keys) n += kNode + k.size();
    for (const std::string& k : counts.miss_keys) n += kNode + k.size();
  }
  for (const auto& [name, wait] : r.waits) n += kNode + name.size();
  for (const CompileEvent& e : r.compile_events) {
    n += sizeof(CompileEvent) + e.name.size() + fields_bytes(e.fields);
  }
  for (const ArtifactEntry& a : r.artifacts) {
    n += sizeof(ArtifactEntry) + a.kind.size() + a.path.size() + a.fnv1a.size();
  }
  return n;
}

void finish_record(CompileRecord&& record) noexcept {
  SharedRecord shared;
  // Failing, this record is lost; the host goes on.
  if (guarded("writing a compile record",
              [&] { shared = std::make_shared<const CompileRecord>(std::move(record)); })) {
    finish_record(std::move(shared));
  }
}

namespace {

struct UnitAlarms {
  std::atomic<std::uint64_t> slow_us{0};
  std::atomic<bool> failed{false};
  std::atomic<UnitAlarmHook> hook{nullptr};
  std::atomic<bool> serving{false};
};
UnitAlarms g_unit_alarms;

// The alarm a closed unit trips, if any.
std::optional<UnitAlarm> closing_alarm(const CompileRecord& r) noexcept {
  if (r.is_runtime) return std::nullopt;
  if (r.failed && g_unit_alarms.failed.load(std::memory_order_relaxed)) return UnitAlarm::kFailed;
  const std::uint64_t slow = g_unit_alarms.slow_us.load(std::memory_order_relaxed);
  if (slow != 0 && r.end_time_us >= r.start_time_us + slow) return UnitAlarm::kSlow;
  return std::nullopt;
}

// During a session (the hook is set for mark_ready() too): three atomic
// loads a closed unit, and no call unless an alarm trips.
void check_unit_alarms(const CompileRecord& r) noexcept {
  // acquire: pairs with set_unit_alarms' release; the thresholds set before it.
  const UnitAlarmHook hook = g_unit_alarms.hook.load(std::memory_order_acquire);
  if (hook == nullptr) return;
  if (const std::optional<UnitAlarm> alarm = closing_alarm(r)) hook(r, *alarm, {});
}

}  // namespace

bool closing_alarm_due(const CompileRecord& record) noexcept {
  // acquire: as check_unit_alarms.
  return g_unit_alarms.hook.load(std::memory_order_acquire) != nullptr &&
         closing_alarm(record).has_value();
}

void raise_unit_alarm(const CompileRecord& record, UnitAlarm alarm,
                      std::string_view opened_in) noexcept {
  // acquire: as check_unit_alarms.
  if (const UnitAlarmHook hook = g_unit_alarms.hook.load(std::memory_order_acquire)) {
    hook(record, alarm, opened_in);
  }
}

namespace {
// The times of the last `count` misses, a ring under its own mutex (a
// leaf: nothing else is taken while it is held).
struct MissStorm {
  std::atomic<std::uint32_t> count{0};  // relaxed: the check each miss makes first
  std::mutex mutex;
  std::vector<std::uint64_t> times_us;
  std::size_t next = 0;  // the slot the next miss takes; once full, the oldest
  std::size_t held = 0;
  std::uint64_t window_us = 0;
};

MissStorm& miss_storm() noexcept { return immortal<MissStorm>(); }
}  // namespace

void set_miss_storm(std::uint32_t count, std::uint64_t window_us) noexcept {
  MissStorm& m = miss_storm();
  std::lock_guard<std::mutex> lock(m.mutex);
  m.next = m.held = 0;
  m.window_us = window_us;
  // Failing, the alarm is off.
  if (!guarded("arming the cache-miss storm alarm", [&] { m.times_us.assign(count, 0); })) {
    count = 0;
  }
  m.count.store(count, std::memory_order_relaxed);
}

void miss_storm_forget_in_child() noexcept {
  MissStorm& m = miss_storm();
  m.count.store(0, std::memory_order_relaxed);
  new (&m.mutex) std::mutex;  // no thread of the child holds it
  m.next = m.held = 0;
}

MissStormHit note_cache_miss() noexcept {
  MissStorm& m = miss_storm();
  if (m.count.load(std::memory_order_relaxed) == 0) return {};
  std::lock_guard<std::mutex> lock(m.mutex);
  // Under the lock: the ring's times stay in order.
  const std::uint64_t now = monotonic_ns() / 1000;
  const std::size_t n = m.times_us.size();
  if (n == 0) return {};
  m.times_us[m.next] = now;
  m.next = (m.next + 1) % n;
  if (m.held < n) ++m.held;
  if (m.held < n) return {};
  const std::uint64_t oldest = m.times_us[m.next];  // full: the next slot holds the oldest
  if (now - oldest > m.window_us) return {};
  m.held = 0;
  return {static_cast<std::uint32_t>(n), now - oldest};
}

void set_serving(bool on) noexcept { g_unit_alarms.serving.store(on, std::memory_order_relaxed); }
bool serving() noexcept { return g_unit_alarms.serving.load(std::memory_order_relaxed); }

namespace {

// Room for `bytes` more in the metrics queue (under s.mutex), taken; false:
// dropped and counted. Bounded: the flusher takes the queue every interval
// and when woken; if it cannot keep up (or is gone), records are dropped
// and counted, never piled up.
bool queue_room_locked(RecordSinks& s, std::size_t bytes, const char* what) {
  if (s.queued_bytes + bytes > kMaxQueuedMetricsBytes) {
    s.dropped.fetch_add(1, std::memory_order_relaxed);
    log_unique(std::string(what) +
               " are arriving faster than the metrics file is written; some are "
               "dropped (counted: compile_records_dropped in the trace's jitscope_stats)");
    return false;
  }
  s.queued_bytes += bytes;
  return true;
}

void wake_metrics_writer() noexcept {
  // acquire: pairs with set_metrics_wake's release.
  if (void (*hook)() = g_metrics_wake.load(std::memory_order_acquire)) hook();
}

}  // namespace

void set_unit_alarms(std::uint64_t slow_us, bool failed, UnitAlarmHook hook) noexcept {
  g_unit_alarms.slow_us.store(slow_us, std::memory_order_relaxed);
  g_unit_alarms.failed.store(failed, std::memory_order_relaxed);
  g_unit_alarms.hook.store(hook, std::memory_order_release);
}

void finish_record(SharedRecord shared) noexcept {
  if (!shared) return;
  // Before the record goes on (the unit's slice is in its ring already):
  // a snapshot an alarm asks for holds the unit.
  check_unit_alarms(*shared);
  RecordSinks& s = sinks();
  // Failing, this record is lost; the host goes on.
  bool wake = false;
  // The record the ring lets go of, freed after the lock (declared first:
  // destroyed last).
  SharedRecord evicted;
  guarded("writing a compile record", [&] {
    std::lock_guard<std::mutex> lock(s.mutex);
    // Shared by the recent ring and the metrics queue: made once, never copied.
    if (!s.metrics_on) {
      evicted = s.recent.push(std::move(shared));
      return;
    }
    evicted = s.recent.push(shared);
    if (!queue_room_locked(s, approx_bytes(*shared), "compile records")) return;
    s.metrics_queue.push_back(std::move(shared));
    wake = s.metrics_queue.size() % kWakeEveryRecords == 0;
  });
  if (wake) wake_metrics_writer();
}

void finish_metrics_line(std::string line) noexcept {
  RecordSinks& s = sinks();
  bool wake = false;
  guarded("writing a metrics line", [&] {
    std::lock_guard<std::mutex> lock(s.mutex);
    if (!s.metrics_on || !queue_room_locked(s, line.size(), "autotuning records")) return;
    s.metrics_lines.push_back(std::move(line));
    wake = s.metrics_lines.size() % kWakeEveryRecords == 0;
  });
  if (wake) wake_metrics_writer();
}

void finish_record(const CompileRecord& record) noexcept {
  CompileRecord copy;
  if (guarded("copying a compile record", [&] { copy = record; })) finish_record(std::move(copy));
}

void flush_runtime_record() noexcept {
  RuntimeState& rt = runtime_state();
  if (!rt.maybe_charged.load(std::memory_order_relaxed)) return;
  CompileRecord done;
  {
    std::lock_guard<std::mutex> lock(rt.mutex);
    if (!rt.charged) return;
    rt.charged = false;
    rt.maybe_charged.store(false, std::memory_order_relaxed);
    done = std::move(rt.record);
  }
  finish_record(std::move(done));
}

void set_metrics_output(bool on) noexcept {
  RecordSinks& s = sinks();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.metrics_on = on;
  s.dropped.store(0, std::memory_order_relaxed);  // a session's own count (stop reads it first)
  if (!on) {
    s.metrics_queue.clear();
    s.metrics_lines.clear();
    s.queued_bytes = 0;
  }
}

bool metrics_output_on() noexcept {
  RecordSinks& s = sinks();
  std::lock_guard<std::mutex> lock(s.mutex);
  return s.metrics_on;
}

void set_metrics_wake(void (*wake)()) noexcept {
  g_metrics_wake.store(wake, std::memory_order_release);  // release: see finish_record
}

std::uint64_t metrics_records_dropped() noexcept {
  return sinks().dropped.load(std::memory_order_relaxed);
}

void add_metrics_records_dropped(std::uint64_t n) noexcept {
  sinks().dropped.fetch_add(n, std::memory_order_relaxed);  // relaxed: see RecordSinks::dropped
}

namespace {
void take_locked(RecordSinks& s, MetricsBatch& out) {
  out.records.swap(s.metrics_queue);
  out.lines.swap(s.metrics_lines);
  s.queued_bytes = 0;
}
}  // namespace

void take_metrics_records(MetricsBatch& out) {
  out.clear();
  RecordSinks& s = sinks();
  std::lock_guard<std::mutex> lock(s.mutex);
  take_locked(s, out);
}

bool try_take_metrics_records(MetricsBatch& out) {
  out.clear();
  RecordSinks& s = sinks();
  std::unique_lock<std::mutex> lock(s.mutex, std::try_to_lock);
  if (!lock.owns_lock()) return false;
  take_locked(s, out);
  return true;
}

void lock_runtime_for_fork() noexcept { runtime_state().mutex.lock(); }
void unlock_runtime_after_fork() noexcept { runtime_state().mutex.unlock(); }
void lock_record_sinks_for_fork() noexcept { sinks().mutex.lock(); }
void unlock_record_sinks_after_fork() noexcept { sinks().mutex.unlock(); }

void reset_records() noexcept {
  {
    RecordSinks& s = sinks();
    std::lock_guard<std::mutex> lock(s.mutex);
    s.recent.clear();
  }
  RuntimeState& rt = runtime_state();
  std::lock_guard<std::mutex> lock(rt.mutex);
  rt.charged = false;
  rt.maybe_charged.store(false, std::memory_order_relaxed);
  rt.record = CompileRecord();
}

}  // namespace jitscope::detail

namespace jitscope {

std::vector<CompileRecord> recent_compile_records() {
  detail::RecordSinks& s = detail::sinks();
  std::lock_guard<std::mutex> lock(s.mutex);
  std::vector<CompileRecord> out;
  out.reserve(s.recent.size());
  s.recent.each_oldest_first([&](const CompileRecord& r) { out.push_back(r); });
  return out;
}

CompileRecord runtime_record() {
  detail::RuntimeState& rt = detail::runtime_state();
  std::lock_guard<std::mutex> lock(rt.mutex);
  if (rt.charged) return rt.record;
  CompileRecord empty;
  empty.is_runtime = true;
  empty.name = "runtime";
  return empty;
}

}  // namespace jitscope
