// The tuning sessions' figures, and their "record":"autotune" lines
// (autotune_ledger.hpp; the fields are in docs/autotuning.md).
#include "compile/autotune_ledger.hpp"

#include "base/boundary.hpp"
#include "base/immortal.hpp"
#include "base/json_writer.hpp"
#include "clock/clock.hpp"
#include "compile/state.hpp"

#include <algorithm>
#include <mutex>
#include <new>
#include <unordered_map>
#include <utility>
#include <vector>

namespace jitscope::detail {
namespace {

// Every trial's figures are kept (the winner's may come late); its text
// only for the first kLedgerRowsKept.
struct TrialFigures {
  std::uint64_t compile_ns = 0, benchmark_ns = 0;
  std::uint64_t last_end = 0;  // its last step's end (session clock); 0: no step
  double result = 0;
  bool has_result = false, failed = false;
};

struct TrialText {
  std::string config, fail_reason;
  std::vector<std::string> units;
  std::uint64_t units_not_kept = 0;
};

struct Tune {
  std::string kernel, unit;
  std::uint32_t session = 0;
  std::uint64_t begin = 0;
  std::vector<TrialFigures> figures;
  std::vector<TrialText> text;  // the first kLedgerRowsKept trials'
};

struct Ledger {
  std::mutex mutex;
  std::unordered_map<std::uint64_t, Tune> tunes;
};

// Immortal: an Autotune may end during exit.
Ledger& ledger() noexcept { return immortal<Ledger>(); }

// `text` cut to kLedgerTextBytes, between characters, then "…" (a copy:
// made before the ledger's lock is taken).
std::string kept_text(std::string_view text) {
  if (text.size() <= kLedgerTextBytes) return std::string(text);
  std::size_t n = kLedgerTextBytes;
  while (n > 0 && (static_cast<unsigned char>(text[n]) & 0xC0) == 0x80) --n;
  std::string out(text.substr(0, n));
  out += "\xE2\x80\xA6";
  return out;
}

// `f(figures, text or nullptr)` under the lock, for a trial the ledger holds.
template <class F>
void with_trial(std::uint64_t tune, std::uint32_t trial, const char* what, F&& f) noexcept {
  Ledger& l = ledger();
  guarded(what, [&] {
    std::lock_guard<std::mutex> lock(l.mutex);
    const auto it = l.tunes.find(tune);
    if (it == l.tunes.end() || trial >= it->second.figures.size()) return;
    Tune& t = it->second;
    f(t.figures[trial], trial < t.text.size() ? &t.text[trial] : nullptr);
  });
}

std::string render(const Tune& t, std::uint64_t tune, std::uint32_t trials, std::int64_t winner,
                   std::uint64_t end) {
  const auto ns_since_begin = [&](std::uint64_t at) {
    return tick_delta_to_ns(t.session, at >= t.begin ? at - t.begin : 0);
  };
  std::uint64_t compile_ns = 0, benchmark_ns = 0, not_won_ns = 0, failed = 0;
  for (std::size_t i = 0; i < t.figures.size(); ++i) {
    const TrialFigures& f = t.figures[i];
    compile_ns += f.compile_ns;
    benchmark_ns += f.benchmark_ns;
    if (static_cast<std::int64_t>(i) != winner) not_won_ns += f.compile_ns + f.benchmark_ns;
    failed += f.failed ? 1 : 0;
  }
  const TrialFigures* won = winner >= 0 && static_cast<std::size_t>(winner) < t.figures.size()
                                ? &t.figures[static_cast<std::size_t>(winner)]
                                : nullptr;
  std::string out;
  JsonWriter w(out);
  w.begin_object();
  w.member("record", "autotune");
  // Not a unit's record: readers that key records by compile_id pass it by.
  w.key("compile_id");
  w.null();
  w.member("tune", tune);
  w.member("kernel", std::string_view(t.kernel));
  if (!t.unit.empty()) w.member("unit", std::string_view(t.unit));
  w.member("start_time_us", unix_ns_at(t.session, t.begin) / 1000);
  w.member("end_time_us", unix_ns_at(t.session, end) / 1000);
  w.member("wall_ns", ns_since_begin(end));
  w.member("trials", std::max<std::uint64_t>(trials, t.figures.size()));
  w.member("failed", failed);
  // The steps' own times: a compile done by a unit (compiled_by) is in the
  // unit's record, its id in the trial's units (jitscope-report adds it).
  w.member("compile_steps_ns", compile_ns);
  w.member("benchmark_ns", benchmark_ns);
  w.member("not_won_steps_ns", not_won_ns);
  if (won != nullptr) {
    w.member("winner", winner);
    const std::size_t wi = static_cast<std::size_t>(winner);
    if (wi < t.text.size()) w.member("winner_config", std::string_view(t.text[wi].config));
    if (won->has_result) w.member("winner_result", won->result);
    if (won->last_end != 0) w.member("winner_last_step_ns", ns_since_begin(won->last_end));
  } else {
    w.key("winner");
    w.null();
  }
  w.key("trial_rows");
  w.begin_array();
  for (std::size_t i = 0; i < t.text.size(); ++i) {
    const TrialFigures& f = t.figures[i];
    const TrialText& x = t.text[i];
    w.begin_object();
    w.member("trial", static_cast<std::uint64_t>(i));
    w.member("config", std::string_view(x.config));
    w.member("compile_steps_ns", f.compile_ns);
    w.member("benchmark_ns", f.benchmark_ns);
    if (f.has_result) w.member("result", f.result);
    if (f.failed) w.member("failed", std::string_view(x.fail_reason));
    if (!x.units.empty()) {
      w.key("units");
      w.begin_array();
      for (const std::string& id : x.units) w.value(std::string_view(id));
      w.end_array();
    }
    if (x.units_not_kept != 0) w.member("units_not_kept", x.units_not_kept);
    w.end_object();
  }
  w.end_array();
  if (t.figures.size() > t.text.size()) {
    w.member("trial_rows_dropped", static_cast<std::uint64_t>(t.figures.size() - t.text.size()));
  }
  w.end_object();
  return out;
}

}  // namespace

void ledger_open(std::uint64_t tune, std::string_view kernel, std::string unit,
                 std::uint32_t session, std::uint64_t begin) noexcept {
  if (!metrics_output_on()) return;  // no file to write the record to
  Ledger& l = ledger();
  guarded("keeping an autotuning session's figures", [&] {
    Tune t;
    t.kernel = kept_text(kernel);
    t.unit = std::move(unit);
    t.session = session;
    t.begin = begin;
    std::lock_guard<std::mutex> lock(l.mutex);
    l.tunes.insert_or_assign(tune, std::move(t));
  });
}

void ledger_trial(std::uint64_t tune, std::uint32_t trial, std::string_view config) noexcept {
  Ledger& l = ledger();
  guarded("keeping an autotuning trial's figures", [&] {
    std::string text = trial < kLedgerRowsKept ? kept_text(config) : std::string();
    std::lock_guard<std::mutex> lock(l.mutex);
    const auto it = l.tunes.find(tune);
    if (it == l.tunes.end()) return;
    Tune& t = it->second;
    if (trial >= t.figures.size()) t.figures.resize(std::size_t{trial} + 1);
    if (trial < kLedgerRowsKept) {
      if (trial >= t.text.size()) t.text.resize(std::size_t{trial} + 1);
      t.text[trial].config = std::move(text);
    }
  });
}

void ledger_step(std::uint64_t tune, std::uint32_t trial, bool benchmark, std::uint64_t ns,
                 std::uint64_t end) noexcept {
  with_trial(tune, trial, "keeping an autotuning step's time", [&](TrialFigures& f, TrialText*) {
    (benchmark ? f.benchmark_ns : f.compile_ns) += ns;
    f.last_end = std::max(f.last_end, end);
  });
}

void ledger_unit(std::uint64_t tune, std::uint32_t trial, std::string_view compile_id) noexcept {
  std::string id;
  if (!guarded("keeping an autotuning trial's unit", [&] { id = kept_text(compile_id); })) return;
  with_trial(tune, trial, "keeping an autotuning trial's unit", [&](TrialFigures&, TrialText* x) {
    if (x == nullptr) return;
    if (x->units.size() < kLedgerUnitsKept) {
      x->units.push_back(std::move(id));
    } else {
      ++x->units_not_kept;
    }
  });
}

void ledger_result(std::uint64_t tune, std::uint32_t trial, double value) noexcept {
  with_trial(tune, trial, "keeping an autotuning result", [&](TrialFigures& f, TrialText*) {
    f.result = value;
    f.has_result = true;
  });
}

void ledger_failed(std::uint64_t tune, std::uint32_t trial, std::string_view reason) noexcept {
  std::string why;
  if (!guarded("keeping an autotuning failure", [&] { why = kept_text(reason); })) why.clear();
  with_trial(tune, trial, "keeping an autotuning failure", [&](TrialFigures& f, TrialText* x) {
    f.failed = true;
    if (x != nullptr) x->fail_reason = std::move(why);
  });
}

void lock_ledger_for_fork() noexcept { ledger().mutex.lock(); }
void unlock_ledger_after_fork() noexcept { ledger().mutex.unlock(); }

void ledger_forget_in_child() noexcept {
  Ledger& l = ledger();
  guarded_quiet([&] {  // out of memory here only keeps the parent's figures
    std::lock_guard<std::mutex> lock(l.mutex);
    l.tunes.clear();
  });
}

std::size_t ledger_open_count() noexcept {
  Ledger& l = ledger();
  std::lock_guard<std::mutex> lock(l.mutex);
  return l.tunes.size();
}

void ledger_close(std::uint64_t tune, std::uint32_t trials, std::int64_t winner, std::uint64_t end,
                  bool write) noexcept {
  Ledger& l = ledger();
  Tune t;
  bool found = false;
  {
    std::lock_guard<std::mutex> lock(l.mutex);
    const auto it = l.tunes.find(tune);
    if (it != l.tunes.end()) {
      t = std::move(it->second);  // moves: no allocation
      l.tunes.erase(it);
      found = true;
    }
  }
  if (!found || !write) return;
  std::string line;
  if (guarded("writing an autotuning session's record",
              [&] { line = render(t, tune, trials, winner, end); })) {
    finish_metrics_line(std::move(line));
  }
}

}  // namespace jitscope::detail
