// Why a cache missed: each lookup of a layer (CompileUnit::cache_lookup's
// "cache_lookup" instants) compared with the nearest earlier key of the same
// layer, part by part (docs/caches.md). Earlier by time: lookups are kept
// as they come (a trace holds each thread's events together, not in time
// order) and taken in time order by rows(), about 100 bytes and their key's
// text each.
//
// Reasons, for a miss:
// - "new layer": the layer had no earlier lookup (the run's first lookups);
// - the names of the parts that differ from the nearest earlier key, by
//   name, joined by " + " ("options", "source + target"); a part that only
//   one of the two keys has differs too;
// - "same key": a lookup of this very key came before (an entry evicted,
//   never stored, or stored by a process that raced this one);
// - "unreadable key": its key_parts were not a JSON object (cut short).
// Nearest: the fewest differing parts; of those, the latest. Among the
// kMaxKeys distinct keys of the layer used last (older ones are forgotten,
// and said so: CacheLayerRow::keys_forgotten).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace jitscope::report {

// One named part of a key and its value.
struct CacheKeyPart {
  std::string name, value;
};

struct CacheMissReason {
  std::string reason;  // "options + target", "new layer", "same key"
  std::uint64_t misses = 0;
  // The first miss for it: its unit, and each differing part as it was in
  // the nearest key and as it is ("" when a key lacks the part).
  std::string example_unit;
  struct Change {
    std::string part, was, now;
    bool had = false, has = false;  // each key holds the part
  };
  std::vector<Change> example;
};

struct CacheLayerRow {
  std::string layer;
  std::uint64_t lookups = 0, hits = 0, misses = 0;
  std::vector<CacheMissReason> reasons;  // most misses first, then by reason
  // Each part name with the misses it took part in (a two-part reason counts
  // for both): most first, then by name.
  std::vector<std::pair<std::string, std::uint64_t>> parts;
  std::uint64_t keys_forgotten = 0;  // distinct keys past kMaxKeys, no longer compared
};

class CacheLookups {
 public:
  static constexpr std::size_t kMaxKeys = 512;         // per layer, compared with each miss
  static constexpr std::size_t kMaxExampleBytes = 80;  // a value in an example, cut there

  // One lookup at `ts_ns`. `unit`: its compile id ("" if none); `readable`:
  // false when its key could not be read (`key` is then empty).
  void add(std::string_view layer, std::vector<CacheKeyPart> key, bool hit, std::string_view unit,
           std::int64_t ts_ns, bool readable = true);

  bool empty() const noexcept { return lookups_.empty(); }
  // The layers by name, the lookups taken in time order (equal times in the
  // order they came). Once: the lookups are consumed.
  std::vector<CacheLayerRow> rows();

 private:
  struct Key {
    std::vector<CacheKeyPart> parts;    // by name, a name once (its last value)
    std::vector<std::uint64_t> hashes;  // of each part's name and value, in `parts`' order
    std::uint64_t hash = 0;             // of the whole key
    std::uint64_t last_use = 0;
  };
  struct Layer {
    std::uint64_t lookups = 0, hits = 0, misses = 0, forgotten = 0;
    std::vector<Key> keys;  // distinct, at most kMaxKeys
    std::unordered_map<std::string, CacheMissReason> reasons;
    std::unordered_map<std::string, std::uint64_t> parts;
  };
  struct Lookup {
    std::int64_t ts = 0;
    std::string layer, unit;
    std::vector<CacheKeyPart> key;
    bool hit = false, readable = true;
  };
  static Key make_key(std::vector<CacheKeyPart> parts);
  void take(Lookup& lookup);
  void explain_miss(Layer& layer, const Key& key, std::string_view unit);
  void remember(Layer& layer, Key key);

  std::vector<Lookup> lookups_;
  std::unordered_map<std::string, Layer> layers_;
  std::uint64_t clock_ = 0;
};

}  // namespace jitscope::report
