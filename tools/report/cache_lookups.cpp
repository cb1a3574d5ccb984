#include "cache_lookups.hpp"

#include "utf8_repair.hpp"

#include <algorithm>
#include <functional>

namespace jitscope::report {
namespace {

std::uint64_t text_hash(std::string_view s) noexcept { return std::hash<std::string_view>{}(s); }

bool continuation(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

// `s` from byte `from` (after an elided start: "…"), cut at
// kMaxExampleBytes (then "…"), never inside a character.
std::string cut(const std::string& s, std::size_t from = 0) {
  from = std::min(from, s.size());
  while (from > 0 && from < s.size() && continuation(s[from])) --from;
  const std::string out = from > 0 ? "…" : "";
  return out + tools::cut_utf8(std::string_view(s).substr(from), CacheLookups::kMaxExampleBytes);
}

// Where an example of two long values starts: a little before their first
// differing byte, so that the cut shows the difference. Option strings and
// paths share long beginnings: cut from their start, "-O2 → -O3" at byte
// 100 of both was past the cut, and the two looked the same.
std::size_t example_start(const std::string& was, const std::string& now) {
  constexpr std::size_t kContext = 16;  // bytes shown before the difference
  if (was.size() <= CacheLookups::kMaxExampleBytes &&
      now.size() <= CacheLookups::kMaxExampleBytes) {
    return 0;
  }
  const std::size_t shorter = std::min(was.size(), now.size());
  std::size_t common = 0;
  while (common < shorter && was[common] == now[common]) ++common;
  return common > kContext ? common - kContext : 0;
}

// The parts of `a` and `b` (each sorted by name) that differ, by name;
// stops counting past `limit`.
template <typename Fn>
std::size_t diff(const std::vector<CacheKeyPart>& a, const std::vector<std::uint64_t>& ah,
                 const std::vector<CacheKeyPart>& b, const std::vector<std::uint64_t>& bh,
                 std::size_t limit, Fn&& on_diff) {
  std::size_t i = 0, j = 0, n = 0;
  while ((i < a.size() || j < b.size()) && n <= limit) {
    int order;
    if (i == a.size()) {
      order = 1;
    } else if (j == b.size()) {
      order = -1;
    } else {
      order = a[i].name.compare(b[j].name);
    }
    if (order == 0) {
      if (ah[i] != bh[j] || a[i].value != b[j].value) {
        ++n;
        on_diff(&a[i], &b[j]);
      }
      ++i, ++j;
    } else if (order < 0) {
      ++n;
      on_diff(&a[i++], static_cast<const CacheKeyPart*>(nullptr));
    } else {
      ++n;
      on_diff(static_cast<const CacheKeyPart*>(nullptr), &b[j++]);
    }
  }
  return n;
}

}  // namespace

CacheLookups::Key CacheLookups::make_key(std::vector<CacheKeyPart> parts) {
  // By name; a name given twice keeps its last value.
  std::stable_sort(parts.begin(), parts.end(),
                   [](const CacheKeyPart& x, const CacheKeyPart& y) { return x.name < y.name; });
  Key k;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i + 1 < parts.size() && parts[i + 1].name == parts[i].name) continue;
    k.parts.push_back(std::move(parts[i]));
  }
  k.hash = 0x9e3779b97f4a7c15ull;
  for (const CacheKeyPart& p : k.parts) {
    const std::uint64_t h = text_hash(p.value) * 0x100000001b3ull ^ text_hash(p.name);
    k.hashes.push_back(h);
    k.hash = (k.hash ^ h) * 0xff51afd7ed558ccdull;
  }
  return k;
}

void CacheLookups::add(std::string_view layer, std::vector<CacheKeyPart> key, bool hit,
                       std::string_view unit, std::int64_t ts_ns, bool readable) {
  lookups_.push_back(
      Lookup{ts_ns, std::string(layer), std::string(unit), std::move(key), hit, readable});
}

void CacheLookups::take(Lookup& lookup) {
  Layer& layer = layers_[lookup.layer];
  ++layer.lookups;
  lookup.hit ? ++layer.hits : ++layer.misses;
  if (!lookup.readable) {
    if (!lookup.hit) {
      CacheMissReason& r = layer.reasons["unreadable key"];
      if (r.misses++ == 0) {
        r.reason = "unreadable key";
        r.example_unit = lookup.unit;
      }
    }
    return;
  }
  Key key = make_key(std::move(lookup.key));
  if (!lookup.hit) explain_miss(layer, key, lookup.unit);
  remember(layer, std::move(key));
}

void CacheLookups::explain_miss(Layer& layer, const Key& key, std::string_view unit) {
  std::string reason;
  const Key* nearest = nullptr;
  std::size_t best = static_cast<std::size_t>(-1);
  for (const Key& k : layer.keys) {
    const std::size_t d = diff(k.parts, k.hashes, key.parts, key.hashes, best,
                               [](const CacheKeyPart*, const CacheKeyPart*) {});
    if (d < best || (d == best && nearest != nullptr && k.last_use > nearest->last_use)) {
      best = d;
      nearest = &k;
    }
  }
  std::vector<CacheMissReason::Change> changes;
  if (nearest == nullptr) {
    reason = "new layer";
  } else if (best == 0) {
    reason = "same key";
  } else {
    diff(nearest->parts, nearest->hashes, key.parts, key.hashes, best,
         [&](const CacheKeyPart* was, const CacheKeyPart* now) {
           CacheMissReason::Change c;
           c.part = was != nullptr ? was->name : now->name;
           c.had = was != nullptr;
           c.has = now != nullptr;
           const std::size_t from = c.had && c.has ? example_start(was->value, now->value) : 0;
           if (c.had) c.was = cut(was->value, from);
           if (c.has) c.now = cut(now->value, from);
           if (!reason.empty()) reason += " + ";
           reason += c.part;
           ++layer.parts[c.part];
           changes.push_back(std::move(c));
         });
  }
  CacheMissReason& r = layer.reasons[reason];
  if (r.misses++ == 0) {
    r.reason = reason;
    r.example_unit = std::string(unit);
    r.example = std::move(changes);
  }
}

void CacheLookups::remember(Layer& layer, Key key) {
  key.last_use = ++clock_;
  for (Key& k : layer.keys) {
    if (k.hash == key.hash && k.parts.size() == key.parts.size() &&
        diff(k.parts, k.hashes, key.parts, key.hashes, 0,
             [](const CacheKeyPart*, const CacheKeyPart*) {}) == 0) {
      k.last_use = key.last_use;
      return;
    }
  }
  if (layer.keys.size() < kMaxKeys) {
    layer.keys.push_back(std::move(key));
    return;
  }
  // The key used longest ago makes room.
  auto oldest =
      std::min_element(layer.keys.begin(), layer.keys.end(),
                       [](const Key& a, const Key& b) { return a.last_use < b.last_use; });
  *oldest = std::move(key);
  ++layer.forgotten;
}

std::vector<CacheLayerRow> CacheLookups::rows() {
  std::stable_sort(lookups_.begin(), lookups_.end(),
                   [](const Lookup& a, const Lookup& b) { return a.ts < b.ts; });
  for (Lookup& l : lookups_) take(l);
  std::vector<Lookup>().swap(lookups_);
  std::vector<CacheLayerRow> out;
  for (const auto& [name, l] : layers_) {
    CacheLayerRow row;
    row.layer = name;
    row.lookups = l.lookups;
    row.hits = l.hits;
    row.misses = l.misses;
    row.keys_forgotten = l.forgotten;
    for (const auto& [reason, r] : l.reasons) row.reasons.push_back(r);
    std::sort(row.reasons.begin(), row.reasons.end(),
              [](const CacheMissReason& a, const CacheMissReason& b) {
                return a.misses != b.misses ? a.misses > b.misses : a.reason < b.reason;
              });
    row.parts.assign(l.parts.begin(), l.parts.end());
    std::sort(row.parts.begin(), row.parts.end(), [](const auto& a, const auto& b) {
      return a.second != b.second ? a.second > b.second : a.first < b.first;
    });
    out.push_back(std::move(row));
  }
  std::sort(out.begin(), out.end(),
            [](const CacheLayerRow& a, const CacheLayerRow& b) { return a.layer < b.layer; });
  return out;
}

}  // namespace jitscope::report
