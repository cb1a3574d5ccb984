// compare(): per-run statistics of every key, the sides' medians and
// spreads, the flag test, the rows in order of the size of the change
// (compare.hpp says the rules).
#include "compare.hpp"

#include "distribution.hpp"

#include <algorithm>
#include <cstdlib>
#include <map>

namespace jitscope::report {
namespace {

// key -> its stats in each run of one side (zeros where a run lacks it).
using PerRun = std::map<std::string, std::vector<std::optional<KeyStats>>>;

KeyStats from_summary(const Summary& s) {
  return KeyStats{s.count, s.total_ns, s.mean_ns, s.p50_ns, s.p90_ns};
}

std::string unit_key(const UnitRow& u) {
  return u.name.empty() ? "[" + u.compile_id + "]" : u.name;
}

// The three kinds of keys of one Report.
void collect(const Report& r, std::size_t run, std::size_t runs, PerRun* names, PerRun* units,
             PerRun* kernels) {
  auto slot = [&](PerRun* m, const std::string& key) -> std::optional<KeyStats>& {
    auto& v = (*m)[key];
    v.resize(runs);
    return v[run];
  };
  for (const NameRow& n : r.names) {
    slot(n.gpu_kernel ? kernels : names, n.name) =
        KeyStats{n.count, n.total_ns, n.mean_ns(), n.p50_ns, n.p90_ns};
  }
  std::map<std::string, Distribution> by_name;
  for (const UnitRow& u : r.units) {
    if (u.in_trace) {
      by_name[unit_key(u)].add(u.wall_ns);
    } else if (u.metrics && u.metrics->duration_ns) {
      by_name[unit_key(u)].add(*u.metrics->duration_ns);
    }
  }
  for (const auto& [name, d] : by_name) slot(units, name) = from_summary(d.summary());
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
  std::vector<std::int64_t> count, total, mean, p50, p90;
  for (const auto& r : runs) {
    const KeyStats k = r.value_or(KeyStats{});
    s.present = s.present || r.has_value();
    count.push_back(static_cast<std::int64_t>(k.count));
    total.push_back(k.total_ns);
    mean.push_back(k.mean_ns);
    p50.push_back(k.p50_ns);
    p90.push_back(k.p90_ns);
  }
  s.run_totals_ns = total;
  if (!total.empty()) {
    s.total_min_ns = *std::min_element(total.begin(), total.end());
    s.total_max_ns = *std::max_element(total.begin(), total.end());
  }
  s.median = KeyStats{static_cast<std::uint64_t>(median(count)), median(total), median(mean),
                      median(p50), median(p90)};
  return s;
}

// How far x lies beyond `edge` must exceed pct % of the edge and min_ns.
bool beyond(std::int64_t distance, std::int64_t edge, double pct, std::int64_t min_ns) {
  return distance > 0 && distance >= min_ns &&
         static_cast<double>(distance) > static_cast<double>(edge) * pct / 100.0;
}

CompareSection section(std::string key, std::string title, const PerRun& base, const PerRun& next,
                       std::size_t base_runs, std::size_t new_runs, const CompareOptions& opt,
                       Comparison* c) {
  CompareSection out{std::move(key), std::move(title), {}};
  std::map<std::string, bool> keys;
  for (const auto& [k, v] : base) keys[k] = true;
  for (const auto& [k, v] : next) keys[k] = true;
  const std::vector<std::optional<KeyStats>> none_base(base_runs), none_new(new_runs);
  for (const auto& [k, unused] : keys) {
    CompareRow row;
    row.name = k;
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
      row.change = judge(row.base, row.next, opt.threshold_pct, opt.min_change_ns);
      if (row.change == Change::kSlower) ++c->slower;
      if (row.change == Change::kFaster) ++c->faster;
      if (opt.fail_if_slower_pct && judge(row.base, row.next, *opt.fail_if_slower_pct,
                                          opt.min_change_ns) == Change::kSlower) {
        row.fails = true;
        ++c->failing;
      }
    }
    out.rows.push_back(std::move(row));
  }
  std::sort(out.rows.begin(), out.rows.end(), [](const CompareRow& a, const CompareRow& b) {
    // |delta| as unsigned: -INT64_MIN does not fit.
    auto mag = [](std::int64_t d) {
      return d < 0 ? static_cast<std::uint64_t>(-(d + 1)) + 1 : static_cast<std::uint64_t>(d);
    };
    const std::uint64_t da = mag(a.delta_total_ns()), db = mag(b.delta_total_ns());
    return da != db ? da > db : a.name < b.name;
  });
  return out;
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
  if (base.median.total_ns == 0) return std::nullopt;
  return 100.0 * static_cast<double>(delta_total_ns()) / static_cast<double>(base.median.total_ns);
}

Change judge(const SideStats& base, const SideStats& next, double pct, std::int64_t min_ns) {
  const std::int64_t x = next.median.total_ns;
  if (beyond(sat_sub(x, base.total_max_ns), base.total_max_ns, pct, min_ns)) return Change::kSlower;
  if (beyond(sat_sub(base.total_min_ns, x), base.total_min_ns, pct, min_ns)) return Change::kFaster;
  return Change::kUnchanged;
}

Comparison compare(const std::vector<Report>& base, const std::vector<Report>& next,
                   const CompareOptions& options) {
  Comparison c;
  c.options = options;
  PerRun names[2], units[2], kernels[2];
  const std::vector<Report>* sides[2] = {&base, &next};
  for (int s = 0; s < 2; ++s) {
    const std::vector<Report>& runs = *sides[s];
    for (std::size_t i = 0; i < runs.size(); ++i) {
      const Report& r = runs[i];
      (s == 0 ? c.base_inputs : c.new_inputs).push_back(r.header.input);
      for (const std::string& w : r.header.warnings)
        c.warnings.push_back(r.header.input + ": " + w);
      collect(r, i, runs.size(), &names[s], &units[s], &kernels[s]);
    }
  }
  c.sections.push_back(section("names", "Span names (count, total, mean, p50, p90 per run)",
                               names[0], names[1], base.size(), next.size(), options, &c));
  c.sections.push_back(section("units", "Compile units (matched by name)", units[0], units[1],
                               base.size(), next.size(), options, &c));
  c.sections.push_back(section("kernels", "GPU kernels", kernels[0], kernels[1], base.size(),
                               next.size(), options, &c));
  return c;
}

}  // namespace jitscope::report
