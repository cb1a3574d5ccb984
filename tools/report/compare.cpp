// compare(): per-run statistics of every key, the sides' medians and
// spreads, the flag test, the rows in order of the size of the change
// (compare.hpp says the rules), and the gate's verdict line.
#include "compare.hpp"

#include "distribution.hpp"
#include "render_internal.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>

namespace jitscope::report {
namespace {

// key -> its stats in each run of one side (none where a run lacks it).
using PerRun = std::map<std::string, std::vector<std::optional<KeyStats>>>;

// What the units of one key share, over all runs of both sides.
struct UnitKeyInfo {
  std::string frame;
  bool by_key = false;
};

// A unit's key: its unit_key, else its name (older traces), else "[<compile_id>]".
std::string unit_key(const UnitRow& u) {
  if (!u.unit_key.empty()) return u.unit_key;
  return u.name.empty() ? "[" + u.compile_id + "]" : u.name;
}

// The three kinds of keys of one Report.
void collect(const Report& r, std::size_t run, std::size_t runs, PerRun* names, PerRun* passes,
             PerRun* pipelines, PerRun* units, PerRun* kernels,
             std::map<std::string, UnitKeyInfo>* unit_info) {
  auto slot = [&](PerRun* m, const std::string& key) -> std::optional<KeyStats>& {
    auto& v = (*m)[key];
    v.resize(runs);
    return v[run];
  };
  for (const NameRow& n : r.names) {  // passes have their own section
    slot(n.pass ? passes : names, n.name) =
        KeyStats{n.count, n.total_ns, n.mean_ns(), n.p50_ns, n.p90_ns, n.self_ns};
  }
  for (const NameRow& n : r.pipelines) {  // a pipeline's time is its passes': self = total
    slot(pipelines, n.name) =
        KeyStats{n.count, n.total_ns, n.mean_ns(), n.p50_ns, n.p90_ns, n.total_ns};
  }
  for (const NameRow& n : r.gpu.names) {  // GPU work does not nest: its self time is its total
    slot(kernels, n.name) =
        KeyStats{n.count, n.total_ns, n.mean_ns(), n.p50_ns, n.p90_ns, n.total_ns};
  }
  struct Times {
    Distribution walls;
    std::int64_t self = 0;
  };
  std::map<std::string, Times> by_key;
  for (const UnitRow& u : r.units) {
    std::int64_t wall = 0, self = 0;
    if (u.in_trace) {
      wall = u.wall_ns;
      self = u.self_ns;
    } else if (u.metrics && u.metrics->duration_ns) {
      wall = self = *u.metrics->duration_ns;  // no slice: nothing is known to nest in it
    } else {
      continue;
    }
    const std::string key = unit_key(u);
    Times& t = by_key[key];
    t.walls.add(wall);
    t.self = sat_add(t.self, self);
    UnitKeyInfo& info = (*unit_info)[key];
    if (info.frame.empty()) info.frame = u.frame;
    info.by_key = info.by_key || !u.unit_key.empty();
  }
  for (const auto& [key, t] : by_key) {
    const Summary s = t.walls.summary();
    slot(units, key) = KeyStats{s.count, s.total_ns, s.mean_ns, s.p50_ns, s.p90_ns, t.self};
  }
}

// The median of v (the mean of the middle two for an even size); v is reordered.
std::int64_t median(std::vector<std::int64_t> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  if (n == 0) return 0;
  if (n % 2 == 1) return v[n / 2];
  // Halves first: the sum of two int64 may not fit.
  return v[n / 2 - 1] / 2 + v[n / 2] / 2 + (v[n / 2 - 1] % 2 + v[n / 2] % 2) / 2;
}

SideStats side(const std::vector<std::optional<KeyStats>>& runs) {
  SideStats s;
  std::vector<std::int64_t> count, total, mean, p50, p90, self;
  for (const auto& r : runs) {
    const KeyStats k = r.value_or(KeyStats{});
    s.present = s.present || r.has_value();
    count.push_back(static_cast<std::int64_t>(k.count));
    total.push_back(k.total_ns);
    mean.push_back(k.mean_ns);
    p50.push_back(k.p50_ns);
    p90.push_back(k.p90_ns);
    self.push_back(k.self_ns);
  }
  s.run_totals_ns = total;
  s.run_selfs_ns = self;
  if (!total.empty()) {
    s.total_min_ns = *std::min_element(total.begin(), total.end());
    s.total_max_ns = *std::max_element(total.begin(), total.end());
    s.self_min_ns = *std::min_element(self.begin(), self.end());
    s.self_max_ns = *std::max_element(self.begin(), self.end());
  }
  s.median = KeyStats{static_cast<std::uint64_t>(median(count)),
                      median(total),
                      median(mean),
                      median(p50),
                      median(p90),
                      median(self)};
  return s;
}

// |d| as unsigned: -INT64_MIN does not fit.
std::uint64_t magnitude(std::int64_t d) {
  return d < 0 ? static_cast<std::uint64_t>(-(d + 1)) + 1 : static_cast<std::uint64_t>(d);
}

CompareSection section(std::string key, std::string title, const PerRun& base, const PerRun& next,
                       std::size_t base_runs, std::size_t new_runs, const CompareOptions& opt,
                       const std::map<std::string, UnitKeyInfo>* unit_info, Comparison* c) {
  CompareSection out{std::move(key), std::move(title), {}};
  std::map<std::string, bool> keys;
  for (const auto& [k, v] : base) keys[k] = true;
  for (const auto& [k, v] : next) keys[k] = true;
  const std::vector<std::optional<KeyStats>> none_base(base_runs), none_new(new_runs);
  // Kernels do not nest: gated on self time, theirs is their total.
  const GateOn on = opt.gate_on;
  for (const auto& [k, unused] : keys) {
    CompareRow row;
    row.name = k;
    if (unit_info != nullptr) {
      if (auto it = unit_info->find(k); it != unit_info->end()) {
        row.frame = it->second.frame;
        row.by_key = it->second.by_key;
      }
    }
    auto b = base.find(k);
    auto n = next.find(k);
    row.base = side(b == base.end() ? none_base : b->second);
    row.next = side(n == next.end() ? none_new : n->second);
    if (!row.base.present) {
      row.change = Change::kAdded;
      ++c->added;
    } else if (!row.next.present) {
      row.change = Change::kRemoved;
      ++c->removed;
    } else {
      ++c->compared;
      row.change =
          judge(row.base, row.next, opt.threshold_pct, opt.min_change_ns, opt.spread_factor, on);
      if (row.change == Change::kSlower) ++c->slower;
      if (row.change == Change::kFaster) ++c->faster;
      if (opt.fail_if_slower_pct &&
          judge(row.base, row.next, *opt.fail_if_slower_pct, opt.min_change_ns, opt.spread_factor,
                on) == Change::kSlower) {
        row.fails = true;
        ++c->failing;
      }
    }
    out.rows.push_back(std::move(row));
  }
  std::sort(out.rows.begin(), out.rows.end(), [on](const CompareRow& a, const CompareRow& b) {
    const std::uint64_t da = magnitude(a.delta_ns(on)), db = magnitude(b.delta_ns(on));
    return da != db ? da > db : a.name < b.name;
  });
  return out;
}

std::optional<double> pct_of(std::int64_t delta, std::int64_t base) {
  if (base == 0) return std::nullopt;
  return 100.0 * static_cast<double>(delta) / static_cast<double>(base);
}

// How far d lies beyond 0 must exceed pct % of the base, min_ns and the noise.
bool beyond(std::int64_t d, std::int64_t base, double pct, std::int64_t min_ns, double noise) {
  const auto dd = static_cast<double>(d);
  return d > 0 && d >= min_ns && dd > std::fabs(static_cast<double>(base)) * pct / 100.0 &&
         dd > noise;
}

}  // namespace

const char* change_name(Change c) {
  switch (c) {
    case Change::kSlower: return "slower";
    case Change::kFaster: return "faster";
    case Change::kAdded: return "added";
    case Change::kRemoved: return "removed";
    case Change::kUnchanged: break;
  }
  return "unchanged";
}

std::optional<double> CompareRow::delta_pct() const {
  return pct_of(delta_total_ns(), base.median.total_ns);
}
std::optional<double> CompareRow::delta_self_pct() const {
  return pct_of(delta_self_ns(), base.median.self_ns);
}

Change judge(const SideStats& base, const SideStats& next, double pct, std::int64_t min_ns,
             double spread_factor, GateOn on) {
  const std::int64_t b = base.gated(on), d = sat_sub(next.gated(on), b);
  // The noise: the larger of the two sides' run-to-run spreads.
  const double noise =
      spread_factor * static_cast<double>(std::max(base.spread(on), next.spread(on)));
  if (beyond(d, b, pct, min_ns, noise)) return Change::kSlower;
  if (d < 0 && beyond(d == INT64_MIN ? INT64_MAX : -d, b, pct, min_ns, noise))
    return Change::kFaster;
  return Change::kUnchanged;
}

Comparison compare(const std::vector<Report>& base, const std::vector<Report>& next,
                   const CompareOptions& options) {
  Comparison c;
  c.options = options;
  PerRun names[2], passes[2], pipelines[2], units[2], kernels[2];
  std::map<std::string, UnitKeyInfo> unit_info;
  const std::vector<Report>* sides[2] = {&base, &next};
  for (int s = 0; s < 2; ++s) {
    const std::vector<Report>& runs = *sides[s];
    for (std::size_t i = 0; i < runs.size(); ++i) {
      const Report& r = runs[i];
      (s == 0 ? c.base_inputs : c.new_inputs).push_back(r.header.input);
      for (const std::string& w : r.header.warnings)
        c.warnings.push_back(r.header.input + ": " + w);
      collect(r, i, runs.size(), &names[s], &passes[s], &pipelines[s], &units[s], &kernels[s],
              &unit_info);
    }
  }
  c.sections.push_back(section("names", "Span names (count, total, mean, p50, p90 per run)",
                               names[0], names[1], base.size(), next.size(), options, nullptr, &c));
  c.sections.push_back(
      section("pipelines", "Pass pipelines (by the span that ran them: time in their passes)",
              pipelines[0], pipelines[1], base.size(), next.size(), options, nullptr, &c));
  c.sections.push_back(section("passes", "Compiler passes (LLVM and MLIR adapters' pass spans)",
                               passes[0], passes[1], base.size(), next.size(), options, nullptr,
                               &c));
  c.sections.push_back(section("units", "Compile units (matched by unit_key, else by name)",
                               units[0], units[1], base.size(), next.size(), options, &unit_info,
                               &c));
  c.sections.push_back(
      section("kernels", "GPU work and CUDA calls (kernels, copies, sets, host calls)", kernels[0],
              kernels[1], base.size(), next.size(), options, nullptr, &c));
  return c;
}

std::string verdict(const Comparison& c, std::size_t top) {
  const GateOn on = c.options.gate_on;
  struct Offender {
    const char* kind;
    const CompareRow* row;
  };
  std::vector<Offender> all;
  for (const CompareSection& s : c.sections) {
    const char* kind = s.key == "units"       ? "unit"
                       : s.key == "kernels"   ? "kernel"
                       : s.key == "passes"    ? "pass"
                       : s.key == "pipelines" ? "pipeline"
                                              : "span";
    for (const CompareRow& r : s.rows) {
      if (r.fails) all.push_back(Offender{kind, &r});
    }
  }
  std::stable_sort(all.begin(), all.end(), [on](const Offender& a, const Offender& b) {
    return a.row->delta_ns(on) > b.row->delta_ns(on);
  });
  char pct[32];
  std::snprintf(pct, sizeof pct, "%g", c.options.fail_if_slower_pct.value_or(0));
  std::string line = "jitscope-report: regression: " + std::to_string(c.failing) +
                     " of the compared names, passes, pipelines, units and kernels are slower than "
                     "--fail-if-slower " +
                     pct + "% (" + (on == GateOn::kSelf ? "self" : "total") + " time; " +
                     std::to_string(c.compared) + " compared; by at least " +
                     human_ns(c.options.min_change_ns) + " and the runs' spread)";
  for (std::size_t i = 0; i < all.size() && i < top; ++i) {
    const CompareRow& r = *all[i].row;
    const std::int64_t d = r.delta_ns(on);
    line += i == 0 ? ": " : ", ";
    line += std::string(all[i].kind) + " \"" + visible(r.name) + "\" +" + human_ns(d);
    if (const auto p = r.delta_pct(on)) {
      char buf[32];
      std::snprintf(buf, sizeof buf, " (%+.1f%%)", *p);
      line += buf;
    }
  }
  if (all.size() > top) line += ", and " + std::to_string(all.size() - top) + " more";
  return line;
}

}  // namespace jitscope::report
