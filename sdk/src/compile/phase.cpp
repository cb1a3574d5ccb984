// Phases (dynamo_timed): the registry of phase keys, the per-thread event
// stack, phase begin/end with their bookkeeping, and the compile-times tables.
#include "base/boundary.hpp"
#include "base/csv_cell.hpp"
#include "base/immortal.hpp"
#include "base/json_writer.hpp"
#include "base/log.hpp"
#include "clock/clock.hpp"
#include "compile/state.hpp"
#include "ring/producer.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>

namespace jitscope::detail {

constinit thread_local CompileThread t_compile [[gnu::tls_model("initial-exec")]];

namespace {

struct PhaseRegistry {
  std::mutex mutex;
  std::map<std::string, std::unique_ptr<PhaseStats>, std::less<>> by_key;
  std::vector<PhaseStats*> in_order;  // registration order: the tables' row order
};

// Immortal: phases may end during exit, and names must outlive rings.
PhaseRegistry& phase_registry() noexcept { return immortal<PhaseRegistry>(); }

std::string check_options(std::string_view key, const PhaseOptions& options) {
  if (key.empty()) return "a phase key must not be empty";
  const std::string_view c = options.column;
  if (!c.empty() && (c.size() < 4 || c.substr(c.size() - 3) != "_us")) {
    return "phase '" + std::string(key) + "': metrics column '" + std::string(c) +
           "' must end in \"_us\" (columns hold microseconds); the phase runs without it";
  }
  if (is_reserved_record_key(c)) {
    return "phase '" + std::string(key) + "': metrics column '" + std::string(c) +
           "' is a field jitscope writes itself; the phase runs without it";
  }
  return {};
}

// PhaseKey and Phase(key): both lines read the same, so they are said once.
constexpr std::string_view kRegisteringPhase = "registering a phase";

}  // namespace

PhaseStats* find_or_add_phase(std::string_view key, const PhaseOptions& options, Status* status) {
  std::string problem = check_options(key, options);
  if (key.empty()) {
    if (status) *status = Status::error(problem);
    return nullptr;
  }
  PhaseRegistry& reg = phase_registry();
  std::lock_guard<std::mutex> lock(reg.mutex);
  auto it = reg.by_key.find(key);
  if (it == reg.by_key.end()) {
    auto stats = std::make_unique<PhaseStats>();
    stats->key.assign(key.data(), key.size());
    if (problem.empty()) stats->column.assign(options.column.data(), options.column.size());
    stats->compile_event = options.compile_event;
    stats->exclusive = problem.empty() && !options.column.empty() && options.exclusive;
    stats->record_flags =
        static_cast<std::uint8_t>(kFlagPhase | (options.compile_event ? kFlagCompileEvent : 0));
    PhaseStats* raw = stats.get();
    reg.in_order.push_back(raw);
    reg.by_key.emplace(raw->key, std::move(stats));
    if (status) *status = problem.empty() ? Status() : Status::error(problem);
    return raw;
  }
  PhaseStats* existing = it->second.get();
  const bool exclusive = !options.column.empty() && options.exclusive;
  if (problem.empty() &&
      (existing->column != options.column || existing->compile_event != options.compile_event ||
       existing->exclusive != exclusive)) {
    problem = "phase '" + std::string(key) + "' was first registered with column '" +
              existing->column +
              "', compile_event=" + (existing->compile_event ? "true" : "false") +
              " and exclusive=" + (existing->exclusive ? "true" : "false") + "; those stay";
  }
  if (status) *status = problem.empty() ? Status() : Status::error(problem);
  return existing;
}

void push_frame(EventFrame& frame) noexcept {
  frame.owner = &t_compile;
  frame.below = t_compile.top;
  t_compile.top = &frame;
}

bool on_owning_thread(const EventFrame& frame, std::string_view what) noexcept {
  if (frame.owner == &t_compile) [[likely]]
    return true;
  guarded("refusing an end on another thread", [&] {
    log_unique(std::string(what) +
               " on a thread other than the one that opened it: refused (it stays open there "
               "until that thread ends it)");
  });
  return false;
}

void pop_frame(EventFrame& frame) noexcept {
  if (t_compile.top == &frame) [[likely]] {
    t_compile.top = frame.below;
    return;
  }
  // Ended out of order (end() before an inner one): unlink it in place.
  for (EventFrame* f = t_compile.top; f != nullptr; f = f->below) {
    if (f->below == &frame) {
      f->below = frame.below;
      return;
    }
  }
}

EventFrame* outermost_frame() noexcept {
  EventFrame* f = t_compile.top;
  while (f != nullptr && f->below != nullptr) f = f->below;
  return f;
}

EventFrame* current_unit_frame() noexcept {
  for (EventFrame* f = t_compile.top; f != nullptr; f = f->below) {
    if (f->unit != nullptr) return f;
  }
  return nullptr;
}

UnitState* current_unit_state() noexcept {
  const EventFrame* f = current_unit_frame();
  return f != nullptr ? f->unit : nullptr;
}

void lock_phases_for_fork() noexcept {
  PhaseRegistry& reg = phase_registry();
  reg.mutex.lock();
  // Registered phases are never freed, and none registers while the mutex is held.
  for (PhaseStats* p : reg.in_order) {
    for (PhaseShard& shard : p->shards) shard.lock.lock();
  }
}

void unlock_phases_after_fork() noexcept {
  PhaseRegistry& reg = phase_registry();
  for (PhaseStats* p : reg.in_order) {
    for (PhaseShard& shard : p->shards) shard.lock.unlock();
  }
  reg.mutex.unlock();
}

void reset_phase_times() noexcept {
  PhaseRegistry& reg = phase_registry();
  std::lock_guard<std::mutex> lock(reg.mutex);
  for (PhaseStats* p : reg.in_order) {
    for (PhaseShard& shard : p->shards) {
      std::lock_guard<SpinLock> guard(shard.lock);
      shard.runs.clear();
      shard.runs.shrink_to_fit();
      shard.count = shard.total_ns = shard.max_ns = shard.outermost_ns = shard.self_ns = 0;
    }
    p->listed_runs.store(0, std::memory_order_relaxed);
  }
}

namespace {

std::uint64_t read_phase_clock(std::uint32_t session) noexcept {
  return session != 0 ? read_clock(session) : monotonic_ns();
}

[[gnu::cold, gnu::noinline]] void say_duration_not_listed() noexcept {
  log_unique("listing a phase's duration failed: out of memory");
}

[[gnu::cold, gnu::noinline]] std::uint32_t assign_phase_shard() noexcept {
  // Round robin: the first kPhaseShards threads to end a phase get a shard
  // each; relaxed, as any spread is correct and only contention differs.
  static std::atomic<std::uint32_t> next{0};
  t_compile.phase_shard = next.fetch_add(1, std::memory_order_relaxed) % kPhaseShards;
  return t_compile.phase_shard;
}

void record_duration(PhaseStats& p, std::uint64_t end, std::uint64_t ns, std::uint64_t self_ns,
                     bool outermost) noexcept {
  std::uint32_t index = t_compile.phase_shard;
  if (index >= kPhaseShards) [[unlikely]]
    index = assign_phase_shard();
  PhaseShard& shard = p.shards[index];
  bool listed = true;
  {
    std::lock_guard<SpinLock> guard(shard.lock);
    ++shard.count;
    shard.total_ns += ns;
    shard.self_ns += self_ns;
    if (outermost) shard.outermost_ns += ns;
    shard.max_ns = std::max(shard.max_ns, ns);
    // The lists' bound: PhaseStats::listed_runs. relaxed: a count, read as
    // a bound; the lock orders nothing with it.
    if (shard.runs.size() < kMaxDurationsPerKey &&
        p.listed_runs.load(std::memory_order_relaxed) < kMaxDurationsPerKey) {
      // Quiet here, said below: threads sharing the shard wait on the spin
      // lock, so the line is written once it is released. Failing, the
      // aggregates stay exact; the list is only shorter ("N more" in the table).
      listed = guarded_quiet([&] { shard.runs.push_back({end, ns}); });
      if (listed && shard.runs.size() % kListedChunk == 0) {
        p.listed_runs.fetch_add(kListedChunk, std::memory_order_relaxed);
      }
    }
  }
  if (!listed) say_duration_not_listed();  // cold: the branch is laid out as unlikely
}

// A column phase's µs go to the current unit, else to the runtime record:
// `column_ns` to its column, `duration_ns` (outermost phases) to duration_us.
void charge_phase(UnitState* unit, bool attached, const PhaseStats& p, std::uint64_t ns,
                  std::uint64_t column_ns, std::uint64_t duration_ns, CompileEvent* event) {
  const std::uint64_t column_us = column_ns / 1000;
  const std::uint64_t duration_us = duration_ns / 1000;
  // The common case, a column phase in a unit, takes no lock.
  if (unit != nullptr && event == nullptr &&
      charge_unit_column(*unit, p, column_us, duration_us, attached)) {
    return;
  }
  if (unit != nullptr) {
    std::lock_guard<std::mutex> lock(unit->mutex);
    if (unit->closed) return;  // attached after the unit closed: too late for its record
    if (!p.column.empty()) charge_column(unit->record, p.column, column_us, duration_us);
    if (event != nullptr) add_compile_event(unit->record, std::move(*event));
    return;
  }
  with_runtime_record(ns / 1000, [&](CompileRecord& r) {
    if (!p.column.empty()) charge_column(r, p.column, column_us, duration_us);
    if (event != nullptr) add_compile_event(r, std::move(*event));
  });
}

// The column phase a column phase ending now was opened inside (the nearest
// open one below it on this thread), whose self time excludes it.
EventFrame* enclosing_column_phase(EventFrame* below) noexcept {
  for (EventFrame* g = below; g != nullptr; g = g->below) {
    if (g->phase != nullptr && g->column_depth_counted) return g;
  }
  return nullptr;
}

// Column phase `f` ends before column phases opened inside it (an end out of
// order): the part of their time inside `f` so far is nested in `f`, and is
// not counted again by the phase they will end inside.
void hand_over_open_children(EventFrame& f) noexcept {
  for (EventFrame* g = t_compile.top; g != nullptr && g != &f; g = g->below) {
    if (g->phase == nullptr || !g->column_depth_counted || enclosing_column_phase(g->below) != &f) {
      continue;
    }
    const std::uint64_t now = read_phase_clock(g->session);
    const std::uint64_t so_far =
        tick_delta_to_ns(g->session, now >= g->begin_ticks ? now - g->begin_ticks : 0);
    f.nested_column_ns += so_far;
    g->counted_by_outer_ns = so_far;
  }
}

}  // namespace

}  // namespace jitscope::detail

namespace jitscope {

using namespace detail;

PhaseKey::PhaseKey(std::string_view key, const PhaseOptions& options) noexcept {
  status_ = guarded_status(kRegisteringPhase, [&] {
    Status st;
    stats_ = find_or_add_phase(key, options, &st);
    return st;
  });
  if (!status_) log_unique(status_.message());
}

Phase::Phase(std::string_view key, const PhaseOptions& options) noexcept {
  if constexpr (!kCompiledIn) return;
  PhaseStats* stats = nullptr;
  const bool found = guarded(kRegisteringPhase, [&] {
    Status st;
    stats = find_or_add_phase(key, options, &st);
    if (!st) log_unique(st.message());
  });
  if (found) open(stats, nullptr, 0);
}

void Phase::open(PhaseStats* stats, const Arg* args, std::size_t count) noexcept {
  if (stats == nullptr) return;
  EventFrame& f = frame_;
  f.phase = stats;
  f.name = stats->key.c_str();
  f.nested_column_ns = 0;
  f.counted_by_outer_ns = 0;
  const std::uint32_t s = session_word();
  f.session = s;
  f.begin_ticks = read_phase_clock(s);
  if (s != 0) {
    f.token = begin_marked(s, f.begin_ticks, f.name, {}, stats->record_flags, 0);
    if (f.token.recorded()) {
      for (std::size_t i = 0; i < count; ++i) add_arg(f.token, args[i]);
    }
  }
  if (!stats->column.empty()) {
    f.column_base = t_compile.column_depth++;
    f.column_depth_counted = true;
  }
  push_frame(f);
  f.open = true;
}

void Phase::end() noexcept {
  if (!frame_.open || !on_owning_thread(frame_, "ending a phase")) return;
  end_phase(frame_);
}

}  // namespace jitscope

namespace jitscope::detail {
namespace {
// The first unit frame below `f` on this thread: the unit `f` was opened in.
const EventFrame* unit_below(const EventFrame& f) noexcept {
  for (const EventFrame* g = f.below; g != nullptr; g = g->below) {
    if (g->unit != nullptr) return g;
  }
  return nullptr;
}
}  // namespace

void end_phases_inside(const EventFrame& unit_frame) noexcept {
  for (;;) {
    EventFrame* inner = nullptr;  // the innermost open phase of this unit
    for (EventFrame* f = t_compile.top; f != nullptr && f != &unit_frame; f = f->below) {
      if (f->phase != nullptr && f->open && unit_below(*f) == &unit_frame) {
        inner = f;
        break;
      }
    }
    if (inner == nullptr) return;
    if (inner->token.recorded()) add_arg(inner->token, Arg("jitscope_ended_with_unit", true));
    end_phase(*inner);  // unlinks it: the next pass finds the next one
  }
}

void end_phase(EventFrame& f) noexcept {
  f.open = false;
  const std::uint64_t end_ticks = read_phase_clock(f.session);
  PhaseStats& p = *f.phase;
  if (f.data != nullptr) flush_frame_data(f);
  // Only a span that began (token.session() != 0) ends: an end without its
  // begin would close another span (or pop another NVTX range).
  if (f.token.session() != 0) end_span(f.token, end_ticks);
  if (f.column_depth_counted && t_compile.top != &f) hand_over_open_children(f);
  pop_frame(f);
  const std::uint64_t ns =
      tick_delta_to_ns(f.session, end_ticks >= f.begin_ticks ? end_ticks - f.begin_ticks : 0);
  // duration_us: outermost column phases on the unit's own thread (or, for
  // the runtime record, on any thread) — attached workers run in parallel.
  // The unit the phase was opened in, also when a unit opened inside it is
  // still open (an end out of order): the first unit frame below it.
  const EventFrame* unit_frame =
      f.column_depth_counted || p.compile_event ? unit_below(f) : nullptr;
  bool outermost = false;
  std::uint64_t self_ns = ns;
  if (f.column_depth_counted) {
    // Outermost within the unit (a column phase around the unit is outside
    // it), by the depth it opened at: right also when ends come out of order.
    --t_compile.column_depth;
    outermost = unit_frame == nullptr
                    ? f.column_base == 0
                    : f.column_base == unit_frame->column_base && !unit_frame->attached;
    self_ns = ns - std::min(ns, f.nested_column_ns);
    if (EventFrame* outer = enclosing_column_phase(f.below)) {
      outer->nested_column_ns += ns - std::min(ns, f.counted_by_outer_ns);
    }
  }
  const bool tsc = (f.session & kSessionTscBit) != 0;  // no session: CLOCK_MONOTONIC
  record_duration(p, end_ticks | (tsc ? PhaseRun::kTscEnd : 0), ns, self_ns, outermost);
  if (f.column_depth_counted || p.compile_event) {
    // Failing, the trace and the per-key times are kept.
    guarded("adding a phase to its compile record", [&] {
      CompileEvent event;
      CompileEvent* ev = nullptr;
      if (p.compile_event) {
        event.name = p.key;
        event.duration_us = ns / 1000;
        const std::uint64_t now_us = unix_ns_at(f.session, end_ticks) / 1000;
        event.start_time_us = now_us - std::min(now_us, event.duration_us);
        if (f.data != nullptr) event.fields = std::move(f.data->event);
        ev = &event;
      }
      charge_phase(unit_frame != nullptr ? unit_frame->unit : nullptr,
                   unit_frame != nullptr && unit_frame->attached, p, ns, p.exclusive ? self_ns : ns,
                   outermost ? ns : 0, ev);
    });
  }
  delete f.data;
  f.data = nullptr;
}

}  // namespace jitscope::detail

namespace jitscope {

EventRef Phase::event() noexcept {
  EventRef ref;
  if (frame_.open) {
    ref.frame_ = &frame_;
  } else {
    guarded(kExplainingLookup, [&] { ref.error_ = "the phase is not open"; });
  }
  return ref;
}

// ---- queries and tables ----

namespace {

// A PhaseRun's end on CLOCK_MONOTONIC: TSC ticks are placed by their
// distance from `now` (a TSC tick and CLOCK_MONOTONIC read together), at
// the process's TSC rate.
std::uint64_t end_on_monotonic(std::uint64_t end, const ClockPoint& now) noexcept {
  if ((end & PhaseRun::kTscEnd) == 0) return end;
  const std::uint64_t ticks = end & ~PhaseRun::kTscEnd;
  if (ticks >= now.ticks) return now.ns;
  const std::uint64_t ago = tick_delta_to_ns(kSessionTscBit, now.ticks - ticks);
  return now.ns - std::min(now.ns, ago);
}

}  // namespace

std::vector<PhaseTimes> phase_times() {
  std::vector<PhaseTimes> out;
  PhaseRegistry& reg = phase_registry();
  std::lock_guard<std::mutex> lock(reg.mutex);
  std::vector<PhaseRun> runs;
  const ClockPoint now = sample_clock_point();
  for (PhaseStats* p : reg.in_order) {
    PhaseTimes t;
    runs.clear();
    for (PhaseShard& shard : p->shards) {
      std::lock_guard<SpinLock> guard(shard.lock);
      t.count += shard.count;
      t.total_ns += shard.total_ns;
      t.max_ns = std::max(t.max_ns, shard.max_ns);
      t.outermost_ns += shard.outermost_ns;
      t.self_ns += shard.self_ns;
      runs.insert(runs.end(), shard.runs.begin(), shard.runs.end());
    }
    if (t.count == 0) continue;
    // By when they ended, on CLOCK_MONOTONIC (stable: one thread's runs that
    // end on the same tick keep their order), then the first kMaxDurationsPerKey.
    for (PhaseRun& r : runs) r.end = end_on_monotonic(r.end, now);
    std::stable_sort(runs.begin(), runs.end(),
                     [](const PhaseRun& a, const PhaseRun& b) { return a.end < b.end; });
    const std::size_t listed = std::min(runs.size(), kMaxDurationsPerKey);
    t.durations_ns.reserve(listed);
    for (std::size_t i = 0; i < listed; ++i) t.durations_ns.push_back(runs[i].ns);
    t.key = p->key;
    t.column = p->column;
    t.exclusive = p->exclusive;
    out.push_back(std::move(t));
  }
  return out;
}

namespace {

std::string seconds(std::uint64_t ns, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, static_cast<double>(ns) / 1e9);
  return buf;
}

// Left-aligned columns separated by two spaces, a dashed rule under the header.
std::string text_table(const std::vector<std::vector<std::string>>& rows) {
  std::vector<std::size_t> width;
  for (const auto& row : rows) {
    width.resize(std::max(width.size(), row.size()), 0);
    for (std::size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
  }
  std::string out;
  auto line = [&](const std::vector<std::string>& row) {
    std::string l;
    for (std::size_t i = 0; i < row.size(); ++i) {
      l += row[i];
      if (i + 1 < row.size()) l.append(width[i] - row[i].size() + 2, ' ');
    }
    out += l + "\n";
  };
  for (std::size_t r = 0; r < rows.size(); ++r) {
    line(rows[r]);
    if (r == 0) {
      std::vector<std::string> rule;
      for (std::size_t w : width) rule.emplace_back(w, '-');
      line(rule);
    }
  }
  return out;
}

std::string csv_table(const std::vector<std::vector<std::string>>& rows) {
  std::string out;
  for (const auto& row : rows) {
    for (std::size_t i = 0; i < row.size(); ++i) {
      if (i) out.push_back(',');
      out += detail::csv_cell(row[i]);
    }
    out.push_back('\n');
  }
  return out;
}

}  // namespace

std::string compile_times(TableFormat format, bool aggregate) {
  const std::vector<PhaseTimes> times = phase_times();
  std::vector<std::vector<std::string>> rows;
  const bool text = format == TableFormat::kText;
  if (aggregate) {
    rows.push_back({"phase", "count", "total_s", "mean_s", "max_s"});
    for (const PhaseTimes& t : times) {
      rows.push_back({t.key, std::to_string(t.count), seconds(t.total_ns, 6),
                      seconds(t.total_ns / t.count, 6), seconds(t.max_ns, 6)});
    }
  } else if (text) {
    rows.push_back({"phase", "durations_s"});
    for (const PhaseTimes& t : times) {
      std::string list;
      for (std::uint64_t ns : t.durations_ns) list += (list.empty() ? "" : ", ") + seconds(ns, 4);
      if (t.count > t.durations_ns.size()) {
        list += ", ... (" + std::to_string(t.count - t.durations_ns.size()) + " more)";
      }
      rows.push_back({t.key, list});
    }
  } else {
    // Long form: one row per run, easy to load into a data frame.
    rows.push_back({"phase", "run", "seconds"});
    for (const PhaseTimes& t : times) {
      for (std::size_t i = 0; i < t.durations_ns.size(); ++i) {
        rows.push_back({t.key, std::to_string(i), seconds(t.durations_ns[i], 9)});
      }
    }
  }
  if (!text) return csv_table(rows);
  return "jitscope compile times:\n" + text_table(rows);
}

std::string cumulative_time_report(TableFormat format) {
  const std::vector<PhaseTimes> times = phase_times();
  std::vector<std::vector<std::string>> rows;
  rows.push_back({"phase", "column", "total_s"});
  for (const PhaseTimes& t : times) {
    if (t.column.empty()) continue;
    rows.push_back({t.key, t.column, seconds(t.exclusive ? t.self_ns : t.total_ns, 6)});
  }
  // Outermost column phases only, so nested phases are not counted twice.
  std::uint64_t outermost_ns = 0;
  for (const PhaseTimes& t : times) outermost_ns += t.outermost_ns;
  rows.push_back({"total", "duration_us", seconds(outermost_ns, 6)});
  if (format == TableFormat::kCsv) return csv_table(rows);
  return "jitscope cumulative compile time:\n" + text_table(rows);
}

void reset_compile_state() noexcept {
  reset_phase_times();
  reset_units();
  reset_records();
}

}  // namespace jitscope
