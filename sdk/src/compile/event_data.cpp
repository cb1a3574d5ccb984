// Event data on open phases and units (CompileEventLogger): the three levels,
// set / increment / add-to-set, and their misuse errors.
#include "base/boundary.hpp"
#include "base/json_writer.hpp"
#include "base/record_keys.hpp"
#include "compile/state.hpp"
#include "ring/producer.hpp"

#include <array>

namespace jitscope::detail {
namespace {

const char* type_name(FieldValue::Type t) noexcept {
  switch (t) {
    case FieldValue::Type::kInt: return "an integer";
    case FieldValue::Type::kDouble: return "a number";
    case FieldValue::Type::kBool: return "a bool";
    case FieldValue::Type::kString: return "a string";
  }
  return "a value";
}

// Appended, not `"'" + std::string(s)`: GCC 12 warns (-Wrestrict) on that at -O2, wrongly.
std::string quoted(std::string_view s) {
  std::string out = "'";
  out += s;
  out += '\'';
  return out;
}

// Args jitscope writes on slices; event data must not shadow them.
constexpr std::array<std::string_view, 3> kReservedSliceArgs = {"compile_id", "incomplete",
                                                                "jitscope_truncated"};
constexpr std::array<std::string_view, 6> kReservedUnitArgs = {
    "is_forward", "recompile_reason", "duration_us", "fail_type", "fail_reason", "attached"};
constexpr std::array<std::string_view, 3> kReservedEventKeys = {"name", "start_time_us",
                                                                "duration_us"};

template <std::size_t N>
bool one_of(std::string_view key, const std::array<std::string_view, N>& keys) noexcept {
  for (std::string_view k : keys) {
    if (key == k) return true;
  }
  return false;
}

bool is_column(std::string_view key) noexcept {
  return key.size() > 3 && key.substr(key.size() - 3) == "_us";
}

void write_value(JsonWriter& w, const FieldValue& v) {
  switch (v.type()) {
    case FieldValue::Type::kInt: w.value(v.as_int()); break;
    case FieldValue::Type::kDouble: w.value(v.as_double()); break;
    case FieldValue::Type::kBool: w.value(v.as_bool()); break;
    case FieldValue::Type::kString: w.value(std::string_view(v.as_string())); break;
  }
}

}  // namespace

std::string apply_field(Fields& fields, FieldOp op, std::string_view key, const FieldValue& value,
                        bool overwrite) {
  if (key.empty()) return "a field key must not be empty";
  auto it = fields.find(key);
  const bool exists = it != fields.end();
  switch (op) {
    case FieldOp::kSet:
      if (exists && !overwrite) {
        return "field " + quoted(key) + " is already set (pass overwrite=true to replace it)";
      }
      if (!exists) it = fields.emplace(std::string(key), Field{}).first;
      it->second.is_set = false;
      it->second.members.clear();
      it->second.value = value;
      return {};
    case FieldOp::kIncrement:
      if (value.type() != FieldValue::Type::kInt) return "increment takes an integer";
      if (exists && (it->second.is_set || it->second.value.type() != FieldValue::Type::kInt)) {
        return "field " + quoted(key) + " holds " +
               (it->second.is_set ? std::string("a set") : type_name(it->second.value.type())) +
               "; only an integer field can be incremented";
      }
      if (!exists) it = fields.emplace(std::string(key), Field{}).first;
      it->second.value = FieldValue(it->second.value.as_int() + value.as_int());
      return {};
    case FieldOp::kAddToSet:
      if (exists && !it->second.is_set) {
        return "field " + quoted(key) + " holds " + type_name(it->second.value.type()) +
               ", not a set";
      }
      if (!exists) {
        it = fields.emplace(std::string(key), Field{}).first;
        it->second.is_set = true;
      }
      it->second.members.insert(value);
      return {};
  }
  return "unknown operation";
}

bool is_reserved_record_key(std::string_view key) noexcept { return is_record_key(key); }

std::string apply_metric(CompileRecord& record, FieldOp op, std::string_view key,
                         const FieldValue& value, bool overwrite) {
  if (key.empty()) return "a field key must not be empty";
  if (is_record_key(key)) return "field " + quoted(key) + " is written by jitscope itself";
  if (is_column(key)) {
    if (value.type() != FieldValue::Type::kInt || value.as_int() < 0) {
      return "field " + quoted(key) + " ends in \"_us\": it is a column of whole microseconds";
    }
    const auto us = static_cast<std::uint64_t>(value.as_int());
    auto it = record.columns.find(std::string(key));
    switch (op) {
      case FieldOp::kSet:
        if (it != record.columns.end() && !overwrite) {
          return "column " + quoted(key) + " is already set (pass overwrite=true to replace it)";
        }
        record.columns[std::string(key)] = us;
        return {};
      case FieldOp::kIncrement: record.columns[std::string(key)] += us; return {};
      case FieldOp::kAddToSet: return "column " + quoted(key) + " holds microseconds, not a set";
    }
  }
  return apply_field(record.fields, op, key, value, overwrite);
}

void write_fields(JsonWriter& w, const Fields& fields) {
  for (const auto& [key, field] : fields) {
    w.key(key);
    if (field.is_set) {
      w.begin_array();  // std::set: already sorted
      for (const FieldValue& m : field.members) write_value(w, m);
      w.end_array();
    } else {
      write_value(w, field.value);
    }
  }
}

std::string render_members(const Fields& fields) {
  if (fields.empty()) return {};
  std::string out;
  JsonWriter w(out);
  w.begin_object();
  write_fields(w, fields);
  w.end_object();
  return out.substr(1, out.size() - 2);  // the members without the braces
}

void flush_frame_data(EventFrame& frame) noexcept {
  if (frame.data == nullptr || frame.session == 0 || !frame.token.recorded()) return;
  // Failing, the slice goes without its data.
  guarded("writing event data into a trace slice", [&] {
    const std::string members = render_members(frame.data->trace);
    if (!members.empty()) add_json_members(frame.token, members);
  });
}

namespace {

// Applies `op` at `level` to `frame`. Checks everything before changing
// anything, so a refused call leaves no partial data behind.
std::string apply_event(EventFrame* frame, DataLevel level, FieldOp op, std::string_view key,
                        const FieldValue& value, bool overwrite) {
  // Only frames on this thread's stack are touched: a kept EventRef whose
  // event ended (or that came from another thread) is refused unread.
  bool on_this_thread = false;
  for (const EventFrame* f = t_compile.top; f != nullptr && !on_this_thread; f = f->below) {
    on_this_thread = f == frame;
  }
  if (frame == nullptr || !on_this_thread || !frame->open) {
    return "that event is no longer open on this thread";
  }
  if (key.empty()) return "a field key must not be empty";
  if (one_of(key, kReservedSliceArgs) ||
      (frame->unit != nullptr && one_of(key, kReservedUnitArgs))) {
    return "key " + quoted(key) + " is written by jitscope itself";
  }
  const bool compile_event = frame->phase != nullptr && frame->phase->compile_event;
  if (level != DataLevel::kTrace && compile_event && one_of(key, kReservedEventKeys)) {
    return "key " + quoted(key) + " is written by jitscope itself in a compile event";
  }
  if (level == DataLevel::kCompileEvent &&
      (frame->phase == nullptr || !frame->phase->compile_event)) {
    return "event " + quoted(frame->name) +
           " is not a compile event (open its phase with PhaseOptions{.compile_event = true})";
  }
  if (frame->data == nullptr) frame->data = new EventFrame::Data();
  EventFrame::Data& d = *frame->data;
  const bool to_event =
      level != DataLevel::kTrace && frame->phase != nullptr && frame->phase->compile_event;
  // Dry runs first, so the levels succeed or fail together.
  auto dry_run = [&](const Fields& fields) {
    Fields copy;
    if (auto it = fields.find(key); it != fields.end()) copy.emplace(it->first, it->second);
    return apply_field(copy, op, key, value, overwrite);
  };
  if (std::string e = dry_run(d.trace); !e.empty()) return e;
  if (to_event) {
    if (std::string e = dry_run(d.event); !e.empty()) return e;
  }
  if (level == DataLevel::kMetric) {
    EventFrame* top = outermost_frame();
    if (frame != top) {
      return "event " + quoted(frame->name) + " is not the outermost open event (" +
             quoted(top != nullptr ? top->name : "?") +
             " is): metric data goes on the outermost event";
    }
    UnitState* unit = frame->unit != nullptr ? frame->unit : current_unit_state();
    if (unit == nullptr) return "no compile unit is open on this thread: metric data needs one";
    std::lock_guard<std::mutex> lock(unit->mutex);
    if (unit->closed) return "the compile unit has already closed";
    if (std::string e = apply_metric(unit->record, op, key, value, overwrite); !e.empty()) return e;
  }
  if (to_event) (void)apply_field(d.event, op, key, value, overwrite);
  return apply_field(d.trace, op, key, value, overwrite);
}

Status as_status(std::string&& error) {
  return error.empty() ? Status() : Status::error(std::move(error));
}

}  // namespace
}  // namespace jitscope::detail

namespace jitscope {

using namespace detail;

EventRef event(std::string_view name) noexcept {
  EventRef ref;
  for (EventFrame* f = t_compile.top; f != nullptr; f = f->below) {
    if (f->name != nullptr && name == f->name) {
      ref.frame_ = f;
      return ref;
    }
  }
  guarded(kExplainingLookup, [&] {
    ref.error_ = "no open phase or compile unit named '" + std::string(name) + "' on this thread";
  });
  return ref;
}

EventRef toplevel_event() noexcept {
  EventRef ref;
  ref.frame_ = outermost_frame();
  if (ref.frame_ == nullptr) {
    guarded(kExplainingLookup,
            [&] { ref.error_ = "no phase or compile unit is open on this thread"; });
  }
  return ref;
}

namespace {
Status run(const EventRef& ref, EventFrame* frame, DataLevel level, FieldOp op,
           std::string_view key, const FieldValue& value, bool overwrite) noexcept {
  return guarded_status("adding event data", [&] {
    if (frame == nullptr) return Status::error(ref.lookup_error());
    return as_status(apply_event(frame, level, op, key, value, overwrite));
  });
}
}  // namespace

Status EventRef::set(DataLevel level, std::string_view key, const FieldValue& value,
                     bool overwrite) const noexcept {
  return run(*this, frame_, level, FieldOp::kSet, key, value, overwrite);
}
Status EventRef::increment(DataLevel level, std::string_view key, std::int64_t by) const noexcept {
  return run(*this, frame_, level, FieldOp::kIncrement, key, FieldValue(by), false);
}
Status EventRef::add_to_set(DataLevel level, std::string_view key,
                            const FieldValue& value) const noexcept {
  return run(*this, frame_, level, FieldOp::kAddToSet, key, value, false);
}
void EventRef::try_set(DataLevel level, std::string_view key, const FieldValue& value,
                       bool overwrite) const noexcept {
  (void)set(level, key, value, overwrite);
}
void EventRef::try_increment(DataLevel level, std::string_view key,
                             std::int64_t by) const noexcept {
  (void)increment(level, key, by);
}
void EventRef::try_add_to_set(DataLevel level, std::string_view key,
                              const FieldValue& value) const noexcept {
  (void)add_to_set(level, key, value);
}

}  // namespace jitscope
