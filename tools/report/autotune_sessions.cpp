// Autotuning sessions from their instants (autotune_sessions.hpp).
#include "autotune_sessions.hpp"

#include "utf8_repair.hpp"

#include <algorithm>
#include <cstdlib>
#include <set>

namespace jitscope::report {
namespace {

// An integer arg (written as a number, or a number in a string).
bool arg_uint(tools::EventDecoder& decoder, const tools::DecodedEvent& ev, std::string_view key,
              std::uint64_t* out) {
  return decoder.arg_integer(ev, key, out, tools::EventDecoder::Quoted::kToo);
}

bool arg_double(tools::EventDecoder& decoder, const tools::DecodedEvent& ev, std::string_view key,
                double* out) {
  std::string_view raw;
  if (!decoder.arg(ev, key, &raw) || raw.empty() || raw.front() == '"') return false;
  const std::string text(raw);
  char* end = nullptr;
  *out = std::strtod(text.c_str(), &end);
  return end == text.c_str() + text.size();
}

std::int64_t saturating_add(std::int64_t a, std::int64_t b) {
  return a > INT64_MAX - b ? INT64_MAX : a + b;
}

}  // namespace

AutotuneSessions::Session* AutotuneSessions::session(const tools::DecodedEvent& ev,
                                                     std::uint64_t tune) {
  std::optional<Id> pid;
  if (ev.has_pid) {
    Id id;
    id.is_string = ev.pid.is_string;
    id.number = ev.pid.number;
    id.text = std::string(ev.pid.text);
    pid = std::move(id);
  }
  auto key = std::make_pair(pid ? pid->str() : std::string(), tune);
  auto it = sessions_.find(key);
  if (it != sessions_.end()) return &it->second;
  if (sessions_.size() >= kMaxSessions) {
    ++events_beyond_;
    return nullptr;
  }
  Session& s = sessions_[std::move(key)];
  s.pid = std::move(pid);
  s.tune = tune;
  return &s;
}

AutotuneSessions::Trial* AutotuneSessions::trial(Session& s, std::uint32_t index) {
  auto it = s.trials.find(index);
  if (it != s.trials.end()) return &it->second;
  if (index >= s.trials_seen) s.trials_seen = std::uint64_t{index} + 1;
  if (s.trials.size() >= kMaxTrials) return nullptr;  // summed in the bucket (add)
  return &s.trials[index];
}

void AutotuneSessions::add(const tools::DecodedEvent& ev, tools::EventDecoder& decoder) {
  const std::string_view what = ev.name.substr(9);  // after "autotune_"
  std::uint64_t tune = 0;
  if (!ev.has_args || !arg_uint(decoder, ev, "tune", &tune)) return;  // another tool's
  Session* s = session(ev, tune);
  if (s == nullptr) return;
  if (what == "start") {
    s->start_ns = ev.ts_ns;
    std::string kernel;
    if (decoder.arg_string(ev, "kernel", &kernel))
      s->kernel = tools::cut_utf8(kernel, kMaxTextBytes);
    return;
  }
  if (what == "end") {
    s->end_ns = ev.ts_ns;
    return;
  }
  std::uint64_t index = 0;
  if (!arg_uint(decoder, ev, "trial", &index) || index >= UINT32_MAX) return;
  const auto i = static_cast<std::uint32_t>(index);
  if (what == "winner") {
    s->winner = i;
    return;
  }
  Trial* t = trial(*s, i);
  if (t == nullptr) {
    // Not kept: its steps and units still count in the session's sums,
    // through one bucket (not a trial of its own: not the winner's).
    Trial& lost = s->trials[kBucket];
    if (what == "step") {
      std::uint64_t ns = 0;
      std::string step;
      if (arg_uint(decoder, ev, "ns", &ns) && ns <= INT64_MAX &&
          decoder.arg_string(ev, "step", &step)) {
        std::int64_t& sum = step == "benchmark" ? lost.benchmark_ns : lost.compile_ns;
        sum = saturating_add(sum, static_cast<std::int64_t>(ns));
      }
    } else if (what == "compiled_by" && lost.units.size() < kMaxTrials) {
      std::string id;
      if (decoder.arg_string(ev, "compile_id", &id))
        lost.units.push_back(tools::cut_utf8(id, kMaxTextBytes));
    }
    return;
  }
  if (what == "trial") {
    std::string config;
    if (decoder.arg_string(ev, "config", &config))
      t->config = tools::cut_utf8(config, kMaxTextBytes);
  } else if (what == "step") {
    std::uint64_t ns = 0;
    std::string step;
    if (!arg_uint(decoder, ev, "ns", &ns) || ns > INT64_MAX ||
        !decoder.arg_string(ev, "step", &step)) {
      return;
    }
    std::int64_t& sum = step == "benchmark" ? t->benchmark_ns : t->compile_ns;
    sum = saturating_add(sum, static_cast<std::int64_t>(ns));
    if (!t->last_end_ns || ev.ts_ns > *t->last_end_ns) t->last_end_ns = ev.ts_ns;
  } else if (what == "compiled_by" && t->units.size() < kMaxTrials) {
    std::string id;
    if (decoder.arg_string(ev, "compile_id", &id))
      t->units.push_back(tools::cut_utf8(id, kMaxTextBytes));
  } else if (what == "result") {
    double v = 0;
    if (arg_double(decoder, ev, "value", &v)) t->result = v;
  } else if (what == "failed") {
    std::string reason;
    decoder.arg_string(ev, "reason", &reason);
    t->failed = tools::cut_utf8(reason, kMaxTextBytes);
  }
}

std::vector<AutotuneRow> AutotuneSessions::rows(const UnitLookup& unit) const {
  std::vector<AutotuneRow> out;
  out.reserve(sessions_.size());
  for (const auto& [key, s] : sessions_) {
    AutotuneRow row;
    row.pid = s.pid;
    row.tune = s.tune;
    row.kernel = s.kernel;
    row.trials = s.trials_seen;
    const std::size_t kept = s.trials.size() - s.trials.count(kBucket);
    row.trials_beyond = s.trials_seen - std::min<std::uint64_t>(s.trials_seen, kept);
    row.winner = s.winner;
    // A unit named by several trials (shared) counts once in the session's
    // compile time, and in its time not won only if no winning trial named it.
    const Trial* won_trial = nullptr;
    if (s.winner) {
      const auto w = s.trials.find(*s.winner);
      if (w != s.trials.end()) won_trial = &w->second;
    }
    std::set<std::string> units_counted;
    std::optional<std::int64_t> winner_end;
    for (const auto& [index, t] : s.trials) {
      const bool won = won_trial == &t;
      std::int64_t compile_ns = t.compile_ns;  // the trial's own: steps and units
      std::int64_t session_compile_ns = t.compile_ns, not_won_ns = won ? 0 : t.compile_ns;
      std::optional<std::int64_t> last_end = t.last_end_ns;
      AutotuneTrialRow tr;
      for (const std::string& id : t.units) {
        const std::optional<UnitTimes> u = unit(s.pid, id);
        if (!u) {
          ++tr.units_missing;
          continue;
        }
        compile_ns = saturating_add(compile_ns, u->wall_ns);
        if (!last_end || u->end_ns > *last_end) last_end = u->end_ns;
        if (!units_counted.insert(id).second) continue;
        session_compile_ns = saturating_add(session_compile_ns, u->wall_ns);
        const bool winners = won_trial != nullptr &&
                             std::find(won_trial->units.begin(), won_trial->units.end(), id) !=
                                 won_trial->units.end();
        if (!winners) not_won_ns = saturating_add(not_won_ns, u->wall_ns);
      }
      row.compile_ns = saturating_add(row.compile_ns, session_compile_ns);
      row.benchmark_ns = saturating_add(row.benchmark_ns, t.benchmark_ns);
      if (!won) not_won_ns = saturating_add(not_won_ns, t.benchmark_ns);
      row.waste_ns = saturating_add(row.waste_ns, not_won_ns);
      if (won) {
        winner_end = last_end;
        row.winner_config = t.config;
      }
      if (index == kBucket) continue;  // the trials not kept: sums only
      tr.trial = index;
      tr.config = t.config;
      tr.compile_ns = compile_ns;
      tr.benchmark_ns = t.benchmark_ns;
      tr.result = t.result;
      tr.failed = t.failed;
      tr.units = t.units;
      tr.winner = won;
      row.trial_rows.push_back(std::move(tr));
    }
    if (s.start_ns && s.end_ns && *s.end_ns >= *s.start_ns) row.wall_ns = *s.end_ns - *s.start_ns;
    if (s.start_ns && winner_end)
      row.time_to_winner_ns = std::max<std::int64_t>(0, *winner_end - *s.start_ns);
    out.push_back(std::move(row));
  }
  std::stable_sort(out.begin(), out.end(), [](const AutotuneRow& a, const AutotuneRow& b) {
    if (a.wall_ns.has_value() != b.wall_ns.has_value()) return a.wall_ns.has_value();
    return a.wall_ns.value_or(0) > b.wall_ns.value_or(0);
  });
  return out;
}

}  // namespace jitscope::report
