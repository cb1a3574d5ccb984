// The calls of <jitscope/compile.hpp> compiled out (JITSCOPE_DISABLE):
// inline no-ops. Units, phases and wait counters measure and record
// nothing; data calls return ok (nothing to misuse); queries are empty and
// tables are empty strings. Internal: included by <jitscope/compile.hpp>.
#pragma once

#if !defined(JITSCOPE_DISABLE)
#error "detail/disabled_compile.hpp is for JITSCOPE_DISABLE builds only"
#endif

JITSCOPE_NAMESPACE_BEGIN

// Appended, not "[" + str() + "]": GCC 12 at -O2 and -O3 warns -Wrestrict
// on a literal + std::string&& (a known false positive), an error under
// -Werror in the user's build.
inline std::string CompileId::str() const {
  std::string out = std::to_string(frame);
  out += '/';
  out += std::to_string(attempt);
  return out;
}
inline std::string CompileId::display() const {
  std::string out = "[";
  out += str();
  out += ']';
  return out;
}
// No record is ever made: an empty object.
inline std::string CompileRecord::to_json() const { return "{}"; }

inline void set_model_name(std::string_view name) noexcept { static_cast<void>(name); }
inline std::string model_name() { return "model"; }  // the default, never changed
inline GraphNameScope::GraphNameScope(std::string_view graph) noexcept { static_cast<void>(graph); }
inline GraphNameScope::~GraphNameScope() = default;

inline CompileUnitRef current_compile_unit() noexcept { return {}; }
inline bool current_compile_id(CompileId* out) noexcept {
  static_cast<void>(out);
  return false;
}

inline CompileId CompileUnit::id() const noexcept { return {}; }
inline const std::string& CompileUnit::name() const noexcept {
  static const std::string empty;
  return empty;
}
inline void CompileUnit::fail(std::string_view type, std::string_view reason) noexcept {
  static_cast<void>(type), static_cast<void>(reason);
}
inline void CompileUnit::fail_with_current_exception() noexcept {}
inline void CompileUnit::cache_hit(std::string_view key, std::string_view cache) noexcept {
  static_cast<void>(key), static_cast<void>(cache);
}
inline void CompileUnit::cache_miss(std::string_view key, std::string_view cache) noexcept {
  static_cast<void>(key), static_cast<void>(cache);
}
inline void CompileUnit::cache_lookup(std::string_view layer, const CacheKeyPart* key,
                                      std::size_t parts, CacheOutcome outcome) noexcept {
  static_cast<void>(layer), static_cast<void>(key), static_cast<void>(parts),
      static_cast<void>(outcome);
}
inline Status CompileUnit::waits_for(CompileId on, std::int64_t pid) noexcept {
  static_cast<void>(on), static_cast<void>(pid);
  return {};
}
inline Status CompileUnit::set(std::string_view key, const FieldValue& value,
                               bool overwrite) noexcept {
  static_cast<void>(key), static_cast<void>(value), static_cast<void>(overwrite);
  return {};
}
inline Status CompileUnit::increment(std::string_view key, std::int64_t by) noexcept {
  static_cast<void>(key), static_cast<void>(by);
  return {};
}
inline Status CompileUnit::add_to_set(std::string_view key, const FieldValue& value) noexcept {
  static_cast<void>(key), static_cast<void>(value);
  return {};
}
inline Status CompileUnit::artifact(std::string_view kind, std::string_view content,
                                    std::string_view extension) noexcept {
  static_cast<void>(kind), static_cast<void>(content), static_cast<void>(extension);
  return {};
}
inline CompileUnitRef CompileUnit::ref() const noexcept { return {}; }
inline void CompileUnit::close() noexcept {}

inline UnitScope::UnitScope(const CompileUnitRef& unit) noexcept { static_cast<void>(unit); }
inline UnitScope::~UnitScope() = default;
inline LoadScope::LoadScope(const CompileUnitRef& unit) noexcept { static_cast<void>(unit); }
inline LoadScope::~LoadScope() = default;

inline EventRef event(std::string_view name) noexcept {
  static_cast<void>(name);
  return {};
}
inline EventRef toplevel_event() noexcept { return {}; }

inline PhaseKey::PhaseKey(std::string_view key, const PhaseOptions& options) noexcept {
  static_cast<void>(key), static_cast<void>(options);
}
inline Phase::Phase(std::string_view key, const PhaseOptions& options) noexcept {
  static_cast<void>(key), static_cast<void>(options);
}
inline void Phase::end() noexcept {}
inline EventRef Phase::event() noexcept { return {}; }

inline void PhaseHandle::adopt(Phase* phase) noexcept { static_cast<void>(phase); }
inline void PhaseHandle::end() noexcept {}
inline void PhaseHandle::end_or_keep() noexcept {}
inline EventRef PhaseHandle::event() noexcept { return {}; }
inline PhaseHandle begin_phase(const PhaseKey& key, std::initializer_list<Arg> args) noexcept {
  static_cast<void>(key), static_cast<void>(args);
  return {};
}
inline PhaseHandle begin_phase(std::string_view key, const PhaseOptions& options) noexcept {
  static_cast<void>(key), static_cast<void>(options);
  return {};
}
inline void ThreadAttachment::adopt(UnitScope* scope) noexcept { static_cast<void>(scope); }
inline void ThreadAttachment::detach() noexcept {}
inline void ThreadAttachment::detach_or_keep() noexcept {}
inline ThreadAttachment attach_thread(const CompileUnitRef& unit) noexcept {
  static_cast<void>(unit);
  return {};
}

inline Status EventRef::set(DataLevel level, std::string_view key, const FieldValue& value,
                            bool overwrite) const noexcept {
  static_cast<void>(level), static_cast<void>(key), static_cast<void>(value);
  static_cast<void>(overwrite);
  return {};
}
inline Status EventRef::increment(DataLevel level, std::string_view key,
                                  std::int64_t by) const noexcept {
  static_cast<void>(level), static_cast<void>(key), static_cast<void>(by);
  return {};
}
inline Status EventRef::add_to_set(DataLevel level, std::string_view key,
                                   const FieldValue& value) const noexcept {
  static_cast<void>(level), static_cast<void>(key), static_cast<void>(value);
  return {};
}
inline void EventRef::try_set(DataLevel level, std::string_view key, const FieldValue& value,
                              bool overwrite) const noexcept {
  static_cast<void>(set(level, key, value, overwrite));
}
inline void EventRef::try_increment(DataLevel level, std::string_view key,
                                    std::int64_t by) const noexcept {
  static_cast<void>(increment(level, key, by));
}
inline void EventRef::try_add_to_set(DataLevel level, std::string_view key,
                                     const FieldValue& value) const noexcept {
  static_cast<void>(add_to_set(level, key, value));
}

inline WaitCounter::WaitCounter(std::string_view name) noexcept { static_cast<void>(name); }
inline void WaitCounter::Guard::end() noexcept { stats_ = nullptr; }
inline WaitCounter::Guard WaitCounter::wait() noexcept { return Guard(nullptr, 0); }
inline std::uint64_t WaitCounter::count() const noexcept { return 0; }
inline std::uint64_t WaitCounter::total_ns() const noexcept { return 0; }

// The hook is never called (there is no recompile): it is not kept.
inline void register_recompile_context_hook(std::function<std::string()> hook) noexcept {
  static_cast<void>(hook);
}
inline void clear_recompile_context_hooks() noexcept {}

inline std::vector<CompileRecord> recent_compile_records() { return {}; }
inline CompileRecord runtime_record() {
  CompileRecord record;
  record.is_runtime = true;
  return record;
}
inline std::vector<PhaseTimes> phase_times() { return {}; }
inline std::string compile_times(TableFormat format, bool aggregate) {
  static_cast<void>(format), static_cast<void>(aggregate);
  return {};
}
inline std::string cumulative_time_report(TableFormat format) {
  static_cast<void>(format);
  return {};
}
inline void reset_compile_state() noexcept {}

JITSCOPE_NAMESPACE_END
