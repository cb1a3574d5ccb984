// Compile units: compile ids (frame/attempt), unit names (model, graph-name
// stack, nth graph), recompile context hooks, the unit's trace slice and
// its record from open to close.
#include "base/boundary.hpp"
#include "base/compile_id.hpp"
#include "base/immortal.hpp"
#include "base/json_writer.hpp"
#include "base/log.hpp"
#include "clock/clock.hpp"
#include "compile/artifacts.hpp"
#include "compile/state.hpp"
#include "ring/producer.hpp"

#include <cxxabi.h>

#include <charconv>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <map>
#include <memory>
#include <new>
#include <typeinfo>

namespace jitscope::detail {
namespace {

struct UnitRegistry {
  std::mutex mutex;
  UnitState* live = nullptr;  // the live units, newest first
  std::map<std::string, std::pair<std::uint32_t, std::uint32_t>, std::less<>>
      frames;  // id, compiles
  std::uint32_t next_frame = 0;
  std::uint64_t nth_graph = 0;
  std::string model_name = "model";
  std::vector<std::function<std::string()>> hooks;
};

UnitRegistry& units() noexcept { return immortal<UnitRegistry>(); }

// This thread's graph-name stack (GraphNameScope and open units).
thread_local std::vector<std::string> t_graphs [[gnu::tls_model("initial-exec")]];

std::uint64_t pack(const CompileId& id) noexcept { return pack_compile_id(id.frame, id.attempt); }

// Cuts `s` to at most `max` bytes without splitting a UTF-8 sequence.
std::string cap_utf8(std::string s, std::size_t max) {
  if (s.size() <= max) return s;
  std::size_t cut = max;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
  s.resize(cut);
  return s;
}

// Throws only for its own allocations (the caller's boundary); a hook that
// throws is the record's data, "<hook failed: ...>", not an error.
std::vector<std::string> run_recompile_hooks(
    const std::vector<std::function<std::string()>>& hooks) {
  std::vector<std::string> out;
  // Reserved, so the push_back below cannot throw.
  out.reserve(hooks.size());
  for (const auto& hook : hooks) {  // outside the lock: a hook may do anything
    std::string text;
    // Not a boundary: the hook's exception is recorded as data, by its type.
    try {
      text = hook();
    } catch (const std::exception& e) {
      if (!guarded("quoting a recompile context hook's exception",
                   [&] { text = std::string("<hook failed: ") + e.what() + ">"; })) {
        text = "<hook failed>";  // fits in the string itself: no allocation
      }
    } catch (...) {
      text = "<hook failed>";
    }
    out.push_back(cap_utf8(std::move(text), kRecompileContextMaxChars));
  }
  return out;
}

struct FreeDeleter {
  void operator()(char* p) const noexcept { std::free(p); }
};

std::string demangled(const char* mangled) {
  int status = 0;
  // Owned before the copy below can throw, so it is freed either way.
  const std::unique_ptr<char, FreeDeleter> name(
      abi::__cxa_demangle(mangled, nullptr, nullptr, &status));
  return status == 0 && name != nullptr ? name.get() : mangled;
}

// Opens the thread side of a unit: its trace slice (with `args`, written
// with its Begin) and its event frame.
void enter_unit(UnitState& state, EventFrame& frame, const Arg* args, std::size_t arg_count,
                bool attached) {
  frame.unit = &state;
  frame.attached = attached;
  frame.column_base = t_compile.column_depth;
  frame.name = state.display.c_str();
  const std::uint32_t s = session_word();
  frame.session = s;
  if (s != 0) {
    frame.begin_ticks = read_clock(s);
    frame.token = begin_marked(s, frame.begin_ticks, nullptr, state.display.view(), kFlagUnit,
                               state.packed_id, args, arg_count);
  }
  push_frame(frame);
  frame.open = true;
}

}  // namespace

void leave_unit(EventFrame& frame) noexcept {
  leave_unit(frame, frame.session != 0 ? read_clock(frame.session) : 0);
}

void leave_unit(EventFrame& frame, std::uint64_t end_ticks) noexcept {
  if (!frame.open || !on_owning_thread(frame, "leaving a compile unit")) return;
  frame.open = false;
  if (frame.data != nullptr) flush_frame_data(frame);
  if (frame.token.session() != 0) end_span(frame.token, end_ticks);
  pop_frame(frame);
  delete frame.data;
  frame.data = nullptr;
}

void UnitDisplay::assign(const CompileId& id, std::string_view name) {
  constexpr int kDigits = 10;                  // a 32-bit decimal's most
  char prefix[1 + kDigits + 1 + kDigits + 2];  // "[frame/attempt] "
  char* p = prefix;
  *p++ = '[';
  p = std::to_chars(p, p + kDigits, id.frame).ptr;
  *p++ = '/';
  p = std::to_chars(p, p + kDigits, id.attempt).ptr;
  *p++ = ']';
  *p++ = ' ';
  const auto prefix_size = static_cast<std::size_t>(p - prefix);
  const std::size_t size = prefix_size + name.size();
  char* out = inline_;
  if (size >= kInline) {
    heap_ = std::make_unique<char[]>(size + 1);
    out = heap_.get();
  }
  std::memcpy(out, prefix, prefix_size);
  if (!name.empty()) std::memcpy(out + prefix_size, name.data(), name.size());
  out[size] = '\0';
  data_ = out;
  size_ = size;
  name_at_ = prefix_size;
}

// Default-initialized, not value-initialized: the record's members set
// themselves, with no zeroing pass over its 536 bytes first (a `rep stos`
// that was most of this constructor's time, perf).
UnitState::UnitState()
    : record_block(std::make_shared_for_overwrite<CompileRecord>()), record(*record_block) {}

namespace {
// Links a new unit on the live list; the caller holds the registry's mutex
// (open() links it in the critical section it takes anyway).
void link_live(UnitRegistry& reg, UnitState& u) noexcept {
  u.live_next = reg.live;
  if (u.live_next != nullptr) u.live_next->live_prev = &u;
  reg.live = &u;
}
}  // namespace

UnitState::~UnitState() {
  UnitRegistry& reg = units();
  std::lock_guard<std::mutex> lock(reg.mutex);
  if (live_prev == nullptr && reg.live != this) return;  // open() failed before linking it
  if (live_prev != nullptr) {
    live_prev->live_next = live_next;
  } else {
    reg.live = live_next;
  }
  if (live_next != nullptr) live_next->live_prev = live_prev;
}

// No unit is made or freed while the registry's mutex is held, and no code
// takes the registry's mutex while it holds a unit's: the units' mutexes
// come after it, in list order.
void lock_units_for_fork() noexcept {
  UnitRegistry& reg = units();
  reg.mutex.lock();
  for (UnitState* u = reg.live; u != nullptr; u = u->live_next) u->mutex.lock();
}

void unlock_units_after_fork() noexcept {
  UnitRegistry& reg = units();
  for (UnitState* u = reg.live; u != nullptr; u = u->live_next) u->mutex.unlock();
  reg.mutex.unlock();
}

void reset_units() noexcept {
  UnitRegistry& reg = units();
  std::lock_guard<std::mutex> lock(reg.mutex);
  reg.frames.clear();
  reg.next_frame = 0;
  reg.nth_graph = 0;
}

namespace {
std::atomic<FirstUnitHook> g_first_unit_hook{nullptr};
}  // namespace

void set_first_unit_hook(FirstUnitHook hook) noexcept {
  // release: pairs with the exchange in open(); the hook reads what its setter wrote.
  g_first_unit_hook.store(hook, std::memory_order_release);
}

}  // namespace jitscope::detail

namespace jitscope {

using namespace detail;

void set_model_name(std::string_view name) noexcept {
  guarded("setting the model name", [&] {
    UnitRegistry& reg = units();
    std::lock_guard<std::mutex> lock(reg.mutex);
    reg.model_name.assign(name.data(), name.size());
  });
}

std::string model_name() {
  UnitRegistry& reg = units();
  std::lock_guard<std::mutex> lock(reg.mutex);
  return reg.model_name;
}

GraphNameScope::GraphNameScope(std::string_view graph) noexcept {
  if (!guarded("pushing a graph name", [&] { t_graphs.emplace_back(graph); })) {
    t_graphs.clear();  // keep push/pop balanced: an empty stack just names less
  }
}

GraphNameScope::~GraphNameScope() {
  if (!t_graphs.empty()) t_graphs.pop_back();
}

void register_recompile_context_hook(std::function<std::string()> hook) noexcept {
  if (!hook) return;
  // Failing, the hook is not called.
  guarded("registering a recompile context hook", [&] {
    UnitRegistry& reg = units();
    std::lock_guard<std::mutex> lock(reg.mutex);
    reg.hooks.push_back(std::move(hook));
  });
}

void clear_recompile_context_hooks() noexcept {
  UnitRegistry& reg = units();
  std::lock_guard<std::mutex> lock(reg.mutex);
  reg.hooks.clear();
}

void CompileUnit::open(const CompileUnitOptions& options) noexcept {
  uncaught_at_open_ = std::uncaught_exceptions();
  // Failing, the unit is not recorded.
  const bool opened = guarded("opening a compile unit", [&] {
    auto state = std::make_shared<UnitState>();
    CompileRecord& r = state->record;
    UnitRegistry& reg = units();
    std::uint64_t nth = 0;
    char nth_text[kMaxDecimalDigits];
    std::size_t nth_size = 0;
    std::vector<std::function<std::string()>> hooks;
    {
      std::lock_guard<std::mutex> lock(reg.mutex);
      if (options.frame.empty()) {
        state->id = {reg.next_frame++, 0};
      } else if (auto it = reg.frames.find(options.frame); it != reg.frames.end()) {
        state->id = {it->second.first, it->second.second++};
      } else {
        state->id = {reg.next_frame, 0};
        reg.frames.emplace(std::string(options.frame), std::make_pair(reg.next_frame++, 1u));
      }
      nth = reg.nth_graph++;
      // The name is model__graphs_nth (this unit's graph pushed below),
      // built in a string sized once: a short one stays in the string (no
      // allocation), a long one is allocated once.
      nth_size = static_cast<std::size_t>(
          std::to_chars(nth_text, nth_text + sizeof nth_text, nth).ptr - nth_text);
      std::size_t name_size = reg.model_name.size() + 2 + options.graph.size() + 1 + nth_size;
      for (const std::string& g : t_graphs) name_size += g.size() + 1;  // and its '_'
      r.name.reserve(name_size);
      r.name = reg.model_name;
      if (state->id.attempt > 0) hooks = reg.hooks;  // called outside the lock
      link_live(reg, *state);
    }
    state->self = state;
    t_graphs.emplace_back(options.graph);
    graph_pushed_ = true;
    r.name += "__";
    const std::size_t graphs_at = r.name.size();
    for (const std::string& g : t_graphs) {
      if (r.name.size() != graphs_at) r.name += '_';
      r.name += g;
    }
    const std::size_t graphs_end = r.name.size();
    r.name += '_';
    r.name.append(nth_text, nth_size);
    r.frame.assign(options.frame.data(), options.frame.size());
    if (!options.key.empty()) {
      r.unit_key.assign(options.key.data(), options.key.size());
    } else if (!options.frame.empty()) {
      r.unit_key = r.frame;
    } else {
      r.unit_key.assign(r.name, 0, graphs_end);
    }
    r.has_compile_id = true;
    r.compile_id = state->id;
    r.is_forward = options.is_forward;
    r.recompile_reason.assign(options.recompile_reason.data(), options.recompile_reason.size());
    if (!hooks.empty()) r.recompile_user_contexts = run_recompile_hooks(hooks);
    state->packed_id = pack(state->id);
    state->display.assign(state->id, r.name);
    // Runtime overheads since the last compile end here, as their own record.
    flush_runtime_record();
    // Each arg made in its slot: copying one made beside them stalled on
    // the store forwarding of its narrow fields (perf: a tenth of open).
    Arg args[4] = {Arg("unit_key", std::string_view(r.unit_key)),
                   Arg("is_forward", options.is_forward), Arg("frame", options.frame),
                   Arg("recompile_reason", options.recompile_reason)};
    std::size_t n = options.frame.empty() ? 2 : 3;
    if (!options.recompile_reason.empty()) {
      if (n == 2) args[2] = args[3];  // no frame: the reason moves up
      ++n;
    }
    enter_unit(*state, frame_, args, n, false);
    // The slice's begin, in Unix time: one clock read serves both.
    r.start_time_us = unix_ns_at(frame_.session, frame_.begin_ticks) / 1000;
    // Only a recorded unit takes the hook: the mark must sit in its slice.
    // relaxed first: units after the first pay one load; the exchange makes
    // it once.
    if (frame_.token.recorded() && g_first_unit_hook.load(std::memory_order_relaxed) != nullptr) {
      if (const FirstUnitHook hook =
              g_first_unit_hook.exchange(nullptr, std::memory_order_acq_rel)) {
        hook();
      }
    }
    if (serving()) [[unlikely]] {
      // A compile while serving: said now, with where it was opened: the
      // span open under the unit's own (a plain span too, read back from
      // this thread's ring), else the phase or unit it is inside.
      state->after_ready = true;
      std::string launched_in;
      if (frame_.session == 0 || !open_span_name(frame_.session, 1, launched_in)) {
        const EventFrame* in = frame_.below;
        if (in != nullptr && in->name != nullptr) launched_in = in->name;
      }
      raise_unit_alarm(r, UnitAlarm::kServingBegin, launched_in);
    }
    state_ = std::move(state);
  });
  if (!opened) {
    leave_unit(frame_);  // nothing throws once it is entered; if that changes, no frame dangles
    if (graph_pushed_ && !t_graphs.empty()) t_graphs.pop_back();
    graph_pushed_ = false;
    state_.reset();
  }
}

CompileId CompileUnit::id() const noexcept { return state_ ? state_->id : CompileId{}; }

const std::string& CompileUnit::name() const noexcept {
  static const std::string kNone;
  if (!state_) return kNone;
  UnitState& s = *state_;
  const bool made = guarded("naming a compile unit", [&] {
    std::lock_guard<std::mutex> lock(s.mutex);
    if (s.name.empty()) s.name = s.display.view().substr(s.display.name_at());
  });
  // Once made it never changes: the reference stays good outside the lock.
  return made ? s.name : kNone;
}

void CompileUnit::fail(std::string_view type, std::string_view reason) noexcept {
  if (!state_) return;
  guarded("recording a compile error in its unit", [&] {
    std::lock_guard<std::mutex> lock(state_->mutex);
    if (state_->closed) return;
    state_->record.failed = true;
    state_->record.fail_type.assign(type.data(), type.size());
    state_->record.fail_reason.assign(reason.data(), reason.size());
  });
}

void CompileUnit::fail_with_current_exception() noexcept {
  std::exception_ptr e = std::current_exception();
  if (!e) {
    fail("unknown", "fail_with_current_exception() called outside a catch block");
    return;
  }
  // Not a boundary: the exception is the record's data (its type and what()).
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& ex) {
    std::string type;
    if (!guarded("naming the type of a compile error",
                 [&] { type = demangled(typeid(ex).name()); })) {
      type = "std::exception";  // fits in the string itself: no allocation
    }
    fail(type, ex.what());
  } catch (...) {
    fail("unknown exception", "a non-std::exception was thrown");
  }
}

namespace {
void cache_event(UnitState* state, std::string_view key, std::string_view cache,
                 bool hit) noexcept {
  if (state == nullptr) return;
  MissStormHit storm;
  std::string name;  // a storm's unit, for its alarm
  std::string frame;
  guarded("recording a cache hit or miss", [&] {
    std::lock_guard<std::mutex> lock(state->mutex);
    if (state->closed) return;
    CacheCounts& c = state->record.caches[std::string(cache.empty() ? "cache" : cache)];
    if (hit) {
      ++c.hits;
      c.hit_keys.emplace(key);
      return;
    }
    ++c.misses;
    c.miss_keys.emplace(key);
    storm = note_cache_miss();
    if (storm.misses == 0) return;  // the usual case: nothing more
    name = state->record.name;
    frame = state->record.frame;
  });
  if (storm.misses == 0) return;
  // Rare (once per storm), and outside the unit's lock: the alarm writes a
  // line and asks for a snapshot.
  guarded("raising a cache-miss storm alarm", [&] {
    CompileRecord who;
    who.has_compile_id = true;
    who.compile_id = state->id;
    who.name = std::move(name);
    who.frame = std::move(frame);
    std::string what;
    append_decimal(what, storm.misses);
    what += " cache misses in ";
    append_decimal(what, storm.span_us / 1000);
    what += " ms, the last in cache '";
    what += cache.empty() ? std::string_view("cache") : cache;
    what += "' (key '";
    what += cap_utf8(std::string(key), 80);
    what += "')";
    raise_unit_alarm(who, UnitAlarm::kMissStorm, what);
  });
}

Status metric_op(UnitState* state, FieldOp op, std::string_view key, const FieldValue& value,
                 bool overwrite) noexcept {
  if (state == nullptr) return Status::error("the compile unit was not opened");
  return guarded_status("adding a metric", [&] {
    std::lock_guard<std::mutex> lock(state->mutex);
    if (state->closed) return Status::error("the compile unit has already closed");
    std::string e = apply_metric(state->record, op, key, value, overwrite);
    return e.empty() ? Status() : Status::error(std::move(e));
  });
}
}  // namespace

void CompileUnit::cache_hit(std::string_view key, std::string_view cache) noexcept {
  cache_event(state_.get(), key, cache, true);
}
void CompileUnit::cache_miss(std::string_view key, std::string_view cache) noexcept {
  cache_event(state_.get(), key, cache, false);
}

void CompileUnit::cache_lookup(std::string_view layer, const CacheKeyPart* key, std::size_t parts,
                               CacheOutcome outcome) noexcept {
  UnitState* state = state_.get();
  if (state == nullptr) return;
  const bool hit = outcome == CacheOutcome::kHit;
  std::string text;  // the record's key: name=value;...
  if (!guarded("describing a cache key", [&] {
        for (std::size_t i = 0; i < parts; ++i) {
          if (i > 0) text.push_back(';');
          text.append(key[i].name);
          text.push_back('=');
          text.append(key[i].value);
        }
      })) {
    return;
  }
  cache_event(state, text, layer, hit);
  if (!active()) return;  // the trace's form of the key only with a session
  guarded("recording a cache lookup", [&] {
    std::string json;  // key_parts: {"name":"value",...}
    JsonWriter w(json);
    w.begin_object();
    for (std::size_t i = 0; i < parts; ++i) {
      w.key(key[i].name);
      w.value(key[i].value);
    }
    w.end_object();
    const std::string unit = state->id.str();
    instant("cache_lookup", {{"layer", layer.empty() ? std::string_view("cache") : layer},
                             {"hit", hit},
                             {"unit", std::string_view(unit)},
                             {"key_parts", std::string_view(json)}});
  });
}

Status CompileUnit::set(std::string_view key, const FieldValue& value, bool overwrite) noexcept {
  return metric_op(state_.get(), FieldOp::kSet, key, value, overwrite);
}
Status CompileUnit::increment(std::string_view key, std::int64_t by) noexcept {
  return metric_op(state_.get(), FieldOp::kIncrement, key, FieldValue(by), false);
}
Status CompileUnit::add_to_set(std::string_view key, const FieldValue& value) noexcept {
  return metric_op(state_.get(), FieldOp::kAddToSet, key, value, false);
}

Status CompileUnit::artifact(std::string_view kind, std::string_view content,
                             std::string_view extension) noexcept {
  if (!state_) return Status::error("the compile unit was not opened");
  return record_artifact(*state_, kind, content, extension);
}

CompileUnitRef CompileUnit::ref() const noexcept {
  CompileUnitRef r;
  r.state_ = state_;
  return r;
}

void CompileUnit::close() noexcept {
  if (!state_ || !frame_.open || !on_owning_thread(frame_, "closing a compile unit")) return;
  UnitState& s = *state_;
  const bool unwinding = std::uncaught_exceptions() > uncaught_at_open_;
  end_phases_inside(frame_);  // before the record is closed: their time is the unit's
  bool have_record = false;
  // The slice's end and the record's: one clock read serves both.
  const std::uint64_t end_ticks = frame_.session != 0 ? read_clock(frame_.session) : 0;
  // Failing, its record is lost.
  guarded("closing a compile unit", [&] {
    {
      std::lock_guard<std::mutex> lock(s.mutex);
      if (unwinding && !s.record.failed) {
        s.record.failed = true;
        s.record.fail_type = "exception";
        s.record.fail_reason =
            "an exception left the compile unit (call fail_with_current_exception() in a catch "
            "block to record its type and message)";
      }
      s.record.end_time_us = unix_ns_at(frame_.session, end_ticks) / 1000;
      merge_unit_columns(s);
      // From here on nothing writes the record (every writer checks
      // `closed` under the mutex): it is shared as it is, never copied.
      s.closed = true;
      have_record = true;
    }
    const CompileRecord& done = s.record;
    if (frame_.token.recorded()) {
      // Made in place, as in open().
      const Arg args[3] = {Arg("duration_us", done.duration_us),
                           Arg("fail_type", std::string_view(done.fail_type)),
                           Arg("fail_reason", std::string_view(done.fail_reason))};
      add_args(frame_.token, args, done.failed ? 3 : 1);
    }
  });
  leave_unit(frame_, end_ticks);
  if (graph_pushed_ && !t_graphs.empty()) t_graphs.pop_back();
  graph_pushed_ = false;
  // The block goes to the ring and the queue: a CompileUnitRef or a
  // LoadScope that keeps the unit alive does not keep its record (every
  // writer checks `closed` first and never touches `record` after it).
  // One unit, one snapshot: a slow or failed one takes it for its own alarm.
  if (have_record && s.after_ready && !closing_alarm_due(s.record)) {
    raise_unit_alarm(s.record, UnitAlarm::kServingEnd, {});
  }
  if (have_record) finish_record(std::move(s.record_block));
}

UnitScope::UnitScope(const CompileUnitRef& unit) noexcept {
  if constexpr (!kCompiledIn) return;
  if (!unit.state_) return;
  state_ = unit.state_;
  if (!guarded("attaching a thread to a compile unit", [&] {
        const Arg attached("attached", true);
        enter_unit(*state_, frame_, &attached, 1, true);
      })) {
    state_.reset();
  }
}

UnitScope::~UnitScope() { leave_unit(frame_); }

LoadScope::LoadScope(const CompileUnitRef& unit) noexcept {
  if constexpr (!kCompiledIn) return;
  if (!unit.state_) return;
  frame_ = new (std::nothrow) LoadFrame;
  if (frame_ == nullptr) {
    log_unique("crediting CUDA loads to a compile unit: out of memory");
    return;
  }
  frame_->unit = unit.state_;
  frame_->owner = &t_compile;
  frame_->below = t_compile.load_top;
  t_compile.load_top = frame_;
}

LoadScope::~LoadScope() {
  if (frame_ == nullptr) return;
  if (frame_->owner != &t_compile) {
    // Its own thread unlinks and frees it; nothing here touches it after.
    log_unique(
        "a LoadScope destroyed on another thread than the one that made it: it ends at that "
        "thread's next load");
    frame_->ended.store(true, std::memory_order_release);
    return;
  }
  // Unlinked wherever it is: scopes may end in any order.
  for (LoadFrame** link = &t_compile.load_top; *link != nullptr; link = &(*link)->below) {
    if (*link == frame_) {
      *link = frame_->below;
      break;
    }
  }
  delete frame_;
}

detail::UnitState* detail::loading_unit_state() noexcept {
  // Scopes ended on other threads go first (see LoadFrame).
  for (LoadFrame** link = &t_compile.load_top; *link != nullptr;) {
    LoadFrame* f = *link;
    if (!f->ended.load(std::memory_order_acquire)) return f->unit.get();
    *link = f->below;
    delete f;
  }
  return current_unit_state();
}

CompileUnitRef current_compile_unit() noexcept {
  CompileUnitRef r;
  // Frames hold raw pointers; find the owning handle through the frame's unit.
  UnitState* u = current_unit_state();
  if (u == nullptr) return r;
  r.state_ = u->self.lock();
  return r;
}

bool current_compile_id(CompileId* out) noexcept {
  UnitState* u = current_unit_state();
  if (u == nullptr) return false;
  if (out != nullptr) *out = u->id;
  return true;
}

}  // namespace jitscope
