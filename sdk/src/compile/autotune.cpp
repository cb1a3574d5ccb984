// Autotuning sessions, trials and steps as instants and spans
// (<jitscope/autotune.hpp>; jitscope-report sums them).
#include <jitscope/autotune.hpp>

#include "base/boundary.hpp"
#include "base/log.hpp"
#include "clock/clock.hpp"
#include "compile/autotune_ledger.hpp"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <vector>

JITSCOPE_NAMESPACE_BEGIN
namespace {

// Process-unique tuning session ids, from 1 (0: records nothing).
std::uint64_t next_tune_id() noexcept {
  static std::atomic<std::uint64_t> last{0};
  return last.fetch_add(1, std::memory_order_relaxed) + 1;  // relaxed: uniqueness only
}

// True when `session` (the one an Autotune or step was made in) still
// records: an event of a later session would not be its.
bool still_on(std::uint32_t session) noexcept {
  return session != 0 && session == detail::session_word();
}

// The timeline's slices of a tuning session go on tracks of their own
// (async_slice), never on the thread's: written when they end, a slice on
// the thread would start after every event the thread wrote meanwhile (the
// writer keeps a thread's events in order), and came out empty. One track
// for the session, one per trial for its steps (steps of different trials
// may overlap on a pool). Above 2^52, where a host's own tracks (its
// objects' addresses) never are, and below 2^53, as the trace's ids are.
std::uint64_t tune_track(std::uint64_t tune, std::int64_t trial) noexcept {
  constexpr std::uint64_t kBase = std::uint64_t{1} << 52;
  constexpr std::uint64_t kTrialBits = 20;  // a trial past 2^20 - 2 shares the last track
  const std::uint64_t slot = trial < 0
                                 ? 0
                                 : std::min<std::uint64_t>(static_cast<std::uint64_t>(trial) + 1,
                                                           (std::uint64_t{1} << kTrialBits) - 1);
  return kBase | ((tune & ((std::uint64_t{1} << 31) - 1)) << kTrialBits) | slot;
}

// A slice from `begin` (the session's clock, read on any thread) to now.
void tune_slice(std::uint32_t session, std::uint64_t begin, std::uint64_t track,
                std::string_view name, std::span<const Arg> args) noexcept {
  AsyncBegin begun;
  begun.session = session;
  begun.ticks = begin;
  (void)async_slice(track, name, begun, args);
}

bool reserved_key(const char* key) noexcept {
  const std::string_view k(key != nullptr ? key : "");
  return k == "tune" || k == "trial" || k == "config";
}

// Appends an arg's value as text ("128", "0.5", "true", "bf16").
void append_value(std::string& out, const Arg& a) {
  char buf[32];
  switch (a.type) {
    case detail::ValueType::kInt: out += std::to_string(a.i64); return;
    case detail::ValueType::kUint: out += std::to_string(a.u64); return;
    case detail::ValueType::kDouble:
      std::snprintf(buf, sizeof buf, "%.17g", a.f64);
      out += buf;
      return;
    case detail::ValueType::kBool: out += a.b ? "true" : "false"; return;
    case detail::ValueType::kString: out += a.str; return;
    default: return;
  }
}

// An instant of a tuning session's at `ticks` (the session's clock; 0: now),
// with the session's and (trial >= 0) the trial's ids before `extra`. The
// start, step and end instants take the clock readings the metrics record
// sums (converted to ns apart, they may differ by a rounding).
void tune_instant(std::uint32_t session, const char* name, std::uint64_t tune, std::int64_t trial,
                  std::span<const Arg> extra, std::uint64_t ticks = 0) {
  std::vector<Arg> args;
  args.reserve(extra.size() + 2);
  args.emplace_back("tune", tune);
  if (trial >= 0) args.emplace_back("trial", static_cast<std::uint64_t>(trial));
  args.insert(args.end(), extra.begin(), extra.end());
  detail::instant(session, ticks != 0 ? ticks : detail::read_clock(session), name, {}, args.data(),
                  args.size());
}

}  // namespace

// ---- Autotune ----------------------------------------------------------------

Autotune::Autotune(std::string_view kernel) noexcept {
  const std::uint32_t s = detail::session_word();
  if (s == 0) return;
  detail::guarded("recording an autotuning session", [&] {
    kernel_ = std::string(kernel);
    const Arg args[] = {{"kernel", std::string_view(kernel_)}};
    session_ = s;
    begin_ = detail::read_clock(s);
    id_ = next_tune_id();
    tune_instant(s, "autotune_start", id_, -1, args, begin_);
    CompileId unit;
    detail::ledger_open(id_, kernel_, current_compile_id(&unit) ? unit.str() : std::string(), s,
                        begin_);
  });
}

Autotune::~Autotune() {
  if (id_ == 0) return;
  if (!still_on(session_)) {
    detail::ledger_close(id_, trials_, -1, 0, /*write=*/false);  // its session is gone: forgotten
    return;
  }
  const std::uint64_t end = detail::read_clock(session_);
  detail::ledger_close(id_, trials_, winner_, end, /*write=*/true);  // its metrics record
  detail::guarded("recording an autotuning session", [&] {
    const Arg end_args[] = {{"trials", trials_}};
    tune_instant(session_, "autotune_end", id_, -1, end_args, end);
    const Arg span_args[] = {{"kernel", std::string_view(kernel_)},
                             {"tune", id_},
                             {"trials", trials_},
                             {"winner", winner_}};
    tune_slice(session_, begin_, tune_track(id_, -1), "autotune session",
               std::span<const Arg>(span_args, winner_ >= 0 ? 4 : 3));
  });
}

AutotuneTrial Autotune::trial(std::span<const Arg> config) noexcept {
  AutotuneTrial t;
  t.index_ = trials_++;
  if (id_ == 0) return t;
  t.tune_ = id_;
  t.session_ = session_;
  if (!still_on(session_)) return t;
  detail::guarded("recording an autotuning trial", [&] {
    std::string text;
    std::vector<Arg> args;
    args.reserve(config.size() + 1);
    args.emplace_back("config", std::string_view());  // its text, set below
    for (const Arg& a : config) {
      // The event's own keys: a parameter of one of those names would hide it.
      if (reserved_key(a.key)) {
        detail::log_unique("jitscope::Autotune::trial: a parameter named \"" + std::string(a.key) +
                           "\" was left out (tune, trial and config are the event's own args)");
        continue;
      }
      args.push_back(a);
      if (!text.empty()) text += ", ";
      text += a.key;
      text += '=';
      append_value(text, a);
    }
    args[0].str = text;
    tune_instant(session_, "autotune_trial", id_, t.index_, args);
    detail::ledger_trial(id_, t.index_, text);
  });
  return t;
}

void Autotune::winner(const AutotuneTrial& trial) noexcept {
  if (id_ == 0 || trial.tune_ != id_ || !still_on(session_)) return;
  winner_ = trial.index_;
  detail::guarded("recording an autotuning winner",
                  [&] { tune_instant(session_, "autotune_winner", id_, trial.index_, {}); });
}

// ---- AutotuneTrial -----------------------------------------------------------

AutotuneStep AutotuneTrial::compile() const noexcept {
  return AutotuneStep(session_, tune_, index_, false);
}
AutotuneStep AutotuneTrial::benchmark() const noexcept {
  return AutotuneStep(session_, tune_, index_, true);
}

void AutotuneTrial::compiled_by(const CompileId& unit) const noexcept {
  const std::uint32_t s = session_;
  if (tune_ == 0 || !still_on(s)) return;
  detail::guarded("recording an autotuning trial's unit", [&] {
    const std::string id = unit.str();
    const Arg args[] = {{"compile_id", std::string_view(id)}};
    tune_instant(s, "autotune_compiled_by", tune_, index_, args);
    detail::ledger_unit(tune_, index_, id);
  });
}

void AutotuneTrial::result(double value) const noexcept {
  const std::uint32_t s = session_;
  if (tune_ == 0 || !still_on(s)) return;
  detail::guarded("recording an autotuning result", [&] {
    const Arg args[] = {{"value", value}};
    tune_instant(s, "autotune_result", tune_, index_, args);
    detail::ledger_result(tune_, index_, value);
  });
}

void AutotuneTrial::failed(std::string_view reason) const noexcept {
  const std::uint32_t s = session_;
  if (tune_ == 0 || !still_on(s)) return;
  detail::guarded("recording an autotuning failure", [&] {
    const Arg args[] = {{"reason", reason}};
    tune_instant(s, "autotune_failed", tune_, index_, args);
    detail::ledger_failed(tune_, index_, reason);
  });
}

// ---- AutotuneStep ------------------------------------------------------------

AutotuneStep::AutotuneStep(std::uint32_t session, std::uint64_t tune, std::uint32_t trial,
                           bool benchmark) noexcept
    : trial_(trial), benchmark_(benchmark) {
  if (tune == 0 || !still_on(session)) return;
  tune_ = tune;
  session_ = session;
  begin_ = detail::read_clock(session);
}

AutotuneStep::AutotuneStep(AutotuneStep&& other) noexcept
    : tune_(other.tune_),
      trial_(other.trial_),
      session_(other.session_),
      begin_(other.begin_),
      benchmark_(other.benchmark_) {
  other.tune_ = 0;
}

void AutotuneStep::end() noexcept {
  if (tune_ == 0) return;
  const std::uint64_t tune = tune_;
  tune_ = 0;
  if (!still_on(session_)) return;
  detail::guarded("recording an autotuning step", [&] {
    const std::uint64_t end = detail::read_clock(session_);
    const std::uint64_t ns = detail::tick_delta_to_ns(session_, end >= begin_ ? end - begin_ : 0);
    const char* step = benchmark_ ? "benchmark" : "compile";
    const Arg span_args[] = {{"tune", tune}, {"trial", trial_}};
    tune_slice(session_, begin_, tune_track(tune, trial_),
               benchmark_ ? "autotune benchmark" : "autotune compile", span_args);
    const Arg args[] = {{"step", step}, {"ns", ns}};
    tune_instant(session_, "autotune_step", tune, trial_, args, end);
    detail::ledger_step(tune, trial_, benchmark_, ns, end);
  });
}

JITSCOPE_NAMESPACE_END
