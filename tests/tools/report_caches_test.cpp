// Why a cache missed (issue 40): CompileUnit::cache_lookup in a real session,
// and jitscope-report's caches section read back as JSON, in both trace
// forms. The expected reasons are worked out here from the scripted keys
// (which parts changed against which earlier key), not by the code under
// test; CacheLookups is also driven directly for its nearest-key rules.
// The HTML page's caches section: tests/browser/check_large.mjs.
#include "report_support.hpp"
#include "trace_support.hpp"

#include <cache_lookups.hpp>

#include <jitscope/compile.hpp>

#include <map>
#include <string>
#include <vector>

namespace jitscope::testing::report {
namespace {

// One scripted lookup: its layer, key and outcome, and the miss reason a
// reader of the script gives it.
struct Lookup {
  std::string layer;
  std::vector<std::pair<std::string, std::string>> key;
  bool hit;
  std::string reason;  // for a miss
};

// The script: a first entry, a one-part change, a two-part change, a new
// layer, a hit on a known key, a miss on a known key, a part added, and the
// nearest key being the older of two.
std::vector<Lookup> script() {
  using K = std::vector<std::pair<std::string, std::string>>;
  const K base = {{"source", "s1"}, {"options", "-O2"}, {"target", "sm_80"}};
  return {
      {"ptx", base, false, "new layer"},
      {"ptx", {{"source", "s1"}, {"options", "-O3"}, {"target", "sm_80"}}, false, "options"},
      {"ptx",
       {{"source", "s2"}, {"options", "-O3"}, {"target", "sm_90"}},
       false,
       "source + target"},
      {"cubin", base, false, "new layer"},
      {"ptx", base, true, ""},
      {"ptx", base, false, "same key"},
      // Nearest: base (one part away: versions, which it lacks).
      {"ptx",
       {{"source", "s1"}, {"options", "-O2"}, {"target", "sm_80"}, {"versions", "12.8"}},
       false,
       "versions"},
      // Nearest: the s2 key (one part away); the -O3 one is two away, base three.
      {"ptx", {{"source", "s2"}, {"options", "-O3"}, {"target", "sm_75"}}, false, "target"},
  };
}

void run_script(const std::string& path, TraceFormat format) {
  reset_compile_state();
  ScopedSession session(trace_config(path, format));
  ASSERT_TRUE(session.status().ok()) << session.status().message();
  int i = 0;
  for (const Lookup& l : script()) {
    CompileUnit unit({.frame = "k" + std::to_string(i++)});
    std::vector<CacheKeyPart> parts;
    for (const auto& [n, v] : l.key) parts.push_back({n, v});
    unit.cache_lookup(l.layer, parts.data(), parts.size(),
                      l.hit ? CacheOutcome::kHit : CacheOutcome::kMiss);
  }
}

// The expected per-layer figures, from the script alone.
struct LayerFigures {
  int lookups = 0, hits = 0, misses = 0;
  std::map<std::string, int> reasons;
  std::map<std::string, int> parts;
};
std::map<std::string, LayerFigures> expected() {
  std::map<std::string, LayerFigures> out;
  for (const Lookup& l : script()) {
    LayerFigures& f = out[l.layer];
    ++f.lookups;
    if (l.hit) {
      ++f.hits;
      continue;
    }
    ++f.misses;
    ++f.reasons[l.reason];
    if (l.reason == "new layer" || l.reason == "same key") continue;
    for (std::size_t at = 0, plus; at <= l.reason.size(); at = plus + 3) {
      plus = l.reason.find(" + ", at);
      if (plus == std::string::npos) plus = l.reason.size();
      ++f.parts[l.reason.substr(at, plus - at)];
    }
  }
  return out;
}

TEST(ReportCaches, MissesAreExplainedByTheKeyPartsThatDiffer) {
  for (const TraceFormat format : {TraceFormat::kJson, TraceFormat::kPerfetto}) {
    SCOPED_TRACE(format == TraceFormat::kJson ? "json" : "perfetto");
    const std::string trace =
        temp_path(format == TraceFormat::kJson ? "caches.json" : "caches.pftrace");
    run_script(trace, format);
    const json rep = report_json({trace, "--section", "caches"});
    ASSERT_TRUE(rep.contains("caches")) << rep.dump();
    const auto want = expected();
    ASSERT_EQ(rep["caches"].size(), want.size()) << rep.dump(1);
    for (const json& layer : rep["caches"]) {
      const std::string name = layer["layer"];
      ASSERT_TRUE(want.count(name)) << name;
      const LayerFigures& f = want.at(name);
      EXPECT_EQ(layer["lookups"], f.lookups) << name;
      EXPECT_EQ(layer["hits"], f.hits) << name;
      EXPECT_EQ(layer["misses"], f.misses) << name;
      std::map<std::string, int> reasons, parts;
      for (const json& r : layer["reasons"]) reasons[r["reason"]] = r["misses"];
      for (const json& p : layer["parts"]) parts[p["part"]] = p["misses"];
      EXPECT_EQ(reasons, f.reasons) << layer.dump(1);
      EXPECT_EQ(parts, f.parts) << layer.dump(1);
    }
    // The first miss on options: its unit, and what the part was and is.
    for (const json& r : rep["caches"][1]["reasons"]) {  // "ptx" (layers by name)
      if (r["reason"] != "options") continue;
      EXPECT_EQ(r["first_unit"], "1/0");
      ASSERT_EQ(r["first_changes"].size(), 1u);
      EXPECT_EQ(r["first_changes"][0]["part"], "options");
      EXPECT_EQ(r["first_changes"][0]["was"], "-O2");
      EXPECT_EQ(r["first_changes"][0]["now"], "-O3");
    }
    // The terminal's tables say the same.
    const Result text = report({trace, "--section", "caches"});
    ASSERT_EQ(text.code, 0) << text.err;
    EXPECT_NE(text.out.find("source + target"), std::string::npos) << text.out;
    EXPECT_NE(text.out.find("options: -O2 → -O3"), std::string::npos) << text.out;
    EXPECT_NE(text.out.find("versions: (none) → 12.8"), std::string::npos) << text.out;
  }
}

TEST(ReportCaches, NearestKeyRules) {
  using jitscope::report::CacheKeyPart;
  using jitscope::report::CacheLookups;
  auto key = [](std::vector<std::pair<std::string, std::string>> parts) {
    std::vector<CacheKeyPart> k;
    for (auto& [n, v] : parts) k.push_back({n, v});
    return k;
  };
  CacheLookups c;
  c.add("l", key({{"a", "1"}, {"b", "1"}}), false, "0/0", 1);
  // The same key in another order, with a name given twice (the last counts): a hit.
  c.add("l", key({{"b", "9"}, {"a", "1"}, {"b", "1"}}), true, "1/0", 2);
  // A part removed, against the only key.
  c.add("l", key({{"a", "1"}}), false, "2/0", 3);
  const auto rows = c.rows();
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].lookups, 3u);
  EXPECT_EQ(rows[0].hits, 1u);
  ASSERT_EQ(rows[0].reasons.size(), 2u);
  EXPECT_EQ(rows[0].reasons[0].reason, "b");  // 1 miss each: by name
  EXPECT_EQ(rows[0].reasons[1].reason, "new layer");
  ASSERT_EQ(rows[0].reasons[0].example.size(), 1u);
  EXPECT_TRUE(rows[0].reasons[0].example[0].had);
  EXPECT_FALSE(rows[0].reasons[0].example[0].has);
  EXPECT_EQ(rows[0].reasons[0].example[0].was, "1");

  // Past kMaxKeys distinct keys the one used longest ago is forgotten: a
  // miss on it is then explained against the nearest key still kept.
  CacheLookups many;
  for (std::size_t i = 0; i <= CacheLookups::kMaxKeys; ++i) {
    many.add("l", key({{"n", std::to_string(i)}, {"x", "0"}}), false, "",
             static_cast<std::int64_t>(i));
  }
  many.add("l", key({{"n", "0"}, {"x", "0"}}), false, "", 10000);  // forgotten: not "same key"
  const auto r = many.rows();
  EXPECT_EQ(r[0].keys_forgotten, 2u);  // n=0, then n=1 to make room for n=0 again
  std::map<std::string, std::uint64_t> reasons;
  for (const auto& m : r[0].reasons) reasons[m.reason] = m.misses;
  EXPECT_EQ(reasons, (std::map<std::string, std::uint64_t>{{"new layer", 1},
                                                           {"n", CacheLookups::kMaxKeys + 1}}));

  // The key used longest ago goes, not the one stored first: a hit on key 0
  // keeps it, so a miss on it again is "same key".
  CacheLookups lru;
  std::int64_t ts = 0;
  for (std::size_t i = 0; i < CacheLookups::kMaxKeys; ++i) {
    lru.add("l", key({{"n", std::to_string(i)}}), false, "", ts++);
  }
  lru.add("l", key({{"n", "0"}}), true, "", ts++);
  lru.add("l", key({{"n", "new"}}), false, "", ts++);  // key 1 makes room
  lru.add("l", key({{"n", "0"}}), false, "", ts++);
  lru.add("l", key({{"n", "1"}}), false, "", ts++);
  std::map<std::string, std::uint64_t> lru_reasons;
  const auto lru_rows = lru.rows();
  for (const auto& m : lru_rows[0].reasons) lru_reasons[m.reason] = m.misses;
  EXPECT_EQ(lru_reasons,
            (std::map<std::string, std::uint64_t>{
                {"new layer", 1}, {"n", CacheLookups::kMaxKeys + 1}, {"same key", 1}}));
}

// Equally near keys: the one looked up last is the nearest, whatever order
// the trace holds the lookups in (time order, not file order); a key that
// could not be read is counted and said.
TEST(ReportCaches, TheNearestIsTheLatestInTime) {
  using jitscope::report::CacheKeyPart;
  using jitscope::report::CacheLookups;
  CacheLookups c;
  // Added out of time order, as a trace holds two threads' events.
  c.add("l", {{"a", "2"}, {"b", "1"}}, false, "late", 30);   // 2nd in time: vs t=10, 'a'
  c.add("l", {{"a", "2"}, {"b", "2"}}, false, "last", 40);   // 'a' from t=20 or 'b' from t=30: t=30
  c.add("l", {{"a", "1"}, {"b", "1"}}, false, "first", 10);  // new layer
  c.add("l", {{"a", "1"}, {"b", "2"}}, false, "mid", 20);    // 'b' from t=10
  c.add("l", {}, false, "cut", 50, false);
  const auto rows = c.rows();
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].lookups, 5u);
  EXPECT_EQ(rows[0].misses, 5u);
  std::map<std::string, std::string> first_unit;
  std::map<std::string, std::uint64_t> misses;
  for (const auto& m : rows[0].reasons) {
    first_unit[m.reason] = m.example_unit;
    misses[m.reason] = m.misses;
  }
  EXPECT_EQ(misses, (std::map<std::string, std::uint64_t>{
                        {"new layer", 1}, {"a", 1}, {"b", 2}, {"unreadable key", 1}}));
  EXPECT_EQ(first_unit["new layer"], "first");
  EXPECT_EQ(first_unit["b"], "mid");
  EXPECT_EQ(first_unit["a"], "late");
  // t=40 {a=2,b=2}: one part from t=20 ({a=1,b=2}: 'a') and from t=30
  // ({a=2,b=1}: 'b'); the later, t=30, gives 'b'.
  for (const auto& m : rows[0].reasons) {
    if (m.reason != "b") continue;
    ASSERT_EQ(m.example.size(), 1u);
    EXPECT_EQ(m.example[0].was, "1");  // mid's, against first
  }
}

// Long values that differ late (an option appended to a long command line)
// are shown from a little before their first difference, so that the cut
// at kMaxExampleBytes keeps it; short ones whole; a value too long for the
// cut either way ends in "…", never inside a character.
TEST(ReportCaches, ALongValuesExampleShowsWhereItDiffers) {
  using jitscope::report::CacheLookups;
  const std::string base =
      "--gpu-architecture=compute_90 -dlto --std=c++17 "
      "--extra-device-vectorization --use_fast_math";
  const std::string tail = " -lto -arch=sm_90 -O3";
  const std::string was = base + tail;
  const std::string now = base + " -lineinfo" + tail;
  // 16 bytes of context before the first differing byte: both go on with
  // " -l" ("-lto", "-lineinfo"), so it is at base.size() + 3.
  const std::size_t from = base.size() + 3 - 16;
  CacheLookups c;
  c.add("l", {{"options", was}}, false, "0/0", 1);
  c.add("l", {{"options", now}}, false, "1/0", 2);
  c.add("l", {{"options", "-O2"}}, false, "2/0", 3);
  c.add("l", {{"options", "-O3"}}, false, "3/0", 4);
  // 100 bytes each, the first differing: cut from the start, at 80 bytes,
  // backed off to a character's start ("é" is 2 bytes, at 79 and 80).
  const std::string long_a = std::string(79, 'a') + "\xC3\xA9" + std::string(19, 'x');
  const std::string long_b = std::string(79, 'b') + "\xC3\xA9" + std::string(19, 'x');
  c.add("m", {{"p", long_a}}, false, "4/0", 5);
  c.add("m", {{"p", long_b}}, false, "5/0", 6);
  auto rows = c.rows();
  ASSERT_EQ(rows.size(), 2u);
  if (rows[0].layer != "l") std::swap(rows[0], rows[1]);
  ASSERT_EQ(rows[0].reasons.size(), 2u);
  const auto& options = rows[0].reasons[0];
  ASSERT_EQ(options.reason, "options");
  EXPECT_EQ(options.misses, 3u);
  ASSERT_EQ(options.example.size(), 1u);  // the first miss's: `now` against `was`
  EXPECT_EQ(options.example[0].was, "…" + was.substr(from));
  EXPECT_EQ(options.example[0].now, "…" + now.substr(from));
  EXPECT_NE(options.example[0].now.find("-lineinfo"), std::string::npos);
  ASSERT_EQ(rows[1].reasons.size(), 2u);  // "new layer" and "p", a miss each: by name
  const auto& long_values = rows[1].reasons[1];
  ASSERT_EQ(long_values.reason, "p");
  ASSERT_EQ(long_values.example.size(), 1u);
  EXPECT_EQ(long_values.example[0].was, std::string(79, 'a') + "…");
  EXPECT_EQ(long_values.example[0].now, std::string(79, 'b') + "…");
}

}  // namespace
}  // namespace jitscope::testing::report
