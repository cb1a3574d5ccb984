// The caches section (cache_lookups.hpp): its tables for the terminal,
// Markdown and CSV, and its JSON.
#include "render_internal.hpp"

namespace jitscope::report {
namespace {

// "options: -O2 → -O3; target: (none) → sm_90"
std::string changes_text(const CacheMissReason& r) {
  std::string s;
  for (const CacheMissReason::Change& c : r.example) {
    if (!s.empty()) s += "; ";
    s += c.part + ": " + (c.had ? c.was : "(none)") + " → " + (c.has ? c.now : "(none)");
  }
  return s;
}

}  // namespace

void cache_tables(const Report& r, std::vector<Table>& out) {
  if (r.caches.empty()) return;  // most traces: no section at all (the JSON has [])
  Table layers{"caches",
               "Cache lookups per layer (CompileUnit::cache_lookup)",
               {"layer", "lookups", "hits", "misses", "hit_rate", "miss_reasons"},
               {false, true, true, true, true, false},
               {},
               {},
               "",
               {}};
  Table misses{"cache_misses",
               "Why each layer missed: the key parts that differ from the nearest earlier key "
               "of the layer (docs/caches.md)",
               {"layer", "reason", "misses", "first_unit", "first_change"},
               {false, false, true, false, false},
               {},
               {},
               "",
               {}};
  for (const CacheLayerRow& l : r.caches) {
    std::string reasons;
    for (std::size_t i = 0; i < l.reasons.size() && i < 3; ++i) {
      if (i > 0) reasons += ", ";
      reasons += visible(l.reasons[i].reason) + " " + std::to_string(l.reasons[i].misses);
    }
    if (l.reasons.size() > 3) reasons += ", …";
    const double rate =
        l.lookups == 0 ? 0 : 100.0 * static_cast<double>(l.hits) / static_cast<double>(l.lookups);
    layers.rows.push_back({visible(l.layer), std::to_string(l.lookups), std::to_string(l.hits),
                           std::to_string(l.misses), fixed(rate, 1) + "%", reasons});
    if (l.keys_forgotten > 0) {
      layers.notes.push_back(visible(l.layer) + ": " + std::to_string(l.keys_forgotten) +
                             " distinct keys beyond the " + std::to_string(CacheLookups::kMaxKeys) +
                             " used last were no longer compared");
    }
    for (const CacheMissReason& m : l.reasons) {
      misses.rows.push_back({visible(l.layer), visible(m.reason), std::to_string(m.misses),
                             visible(m.example_unit), visible(changes_text(m))});
    }
  }
  out.push_back(std::move(layers));
  if (!misses.rows.empty()) out.push_back(std::move(misses));
}

void json_caches(const Report& r, detail::JsonWriter& j) {
  j.key("caches");
  j.begin_array();
  for (const CacheLayerRow& l : r.caches) {
    j.begin_object();
    j.member("layer", std::string_view(l.layer));
    j.member("lookups", l.lookups);
    j.member("hits", l.hits);
    j.member("misses", l.misses);
    j.member("keys_forgotten", l.keys_forgotten);
    j.key("reasons");  // most misses first
    j.begin_array();
    for (const CacheMissReason& m : l.reasons) {
      j.begin_object();
      j.member("reason", std::string_view(m.reason));
      j.member("misses", m.misses);
      j.member("first_unit", std::string_view(m.example_unit));
      j.key("first_changes");  // each differing part, as in the nearest key and in this one
      j.begin_array();
      for (const CacheMissReason::Change& c : m.example) {
        j.begin_object();
        j.member("part", std::string_view(c.part));
        j.key("was");
        if (c.had) {
          j.value(std::string_view(c.was));
        } else {
          j.value(nullptr);
        }
        j.key("now");
        if (c.has) {
          j.value(std::string_view(c.now));
        } else {
          j.value(nullptr);
        }
        j.end_object();
      }
      j.end_array();
      j.end_object();
    }
    j.end_array();
    j.key("parts");  // each part with the misses it took part in
    j.begin_array();
    for (const auto& [part, n] : l.parts) {
      j.begin_object();
      j.member("part", std::string_view(part));
      j.member("misses", n);
      j.end_object();
    }
    j.end_array();
    j.end_object();
  }
  j.end_array();
}

}  // namespace jitscope::report
