// The Perfetto form of the trace (docs/perfetto-format.md): the writer is
// fed the same ring records in both forms and the packets, read back by a
// decoder of our own (perfetto_wire.hpp, which also checks interning,
// sequence flags, clocks and descriptors), must give the JSON form's events:
// names, categories, ts, dur, args. Also: the cap, rotation, files cut at
// any byte, static names after an unload, the config, a whole session.
// Not covered here: GPU slices and flows (gpu_trace_writer_test drives the
// JSON form; here the transcoder is exercised through captured NVTX and
// metadata events), Perfetto's own trace processor (tests/perfetto/).
// Each test also keeps its files as tmp/perfetto_writer.<name>.pftrace
// (keep()), where ctest's pftrace.perfetto_writer_test.* checks run
// tests/perfetto/check_pftrace.py on them (protoc --decode and the contract).
#include "flush/perfetto_wire.hpp"
#include "flush/record_support.hpp"
#include "format/perfetto/tracks.hpp"
#include "format/trace_writer.hpp"
#include "ring/thread_registry.hpp"
#include "trace_support.hpp"

#include <jitscope/jitscope.hpp>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

namespace jitscope::detail {
namespace {

using nlohmann::json;
using testing::pfwire::Reader;

std::vector<std::string> write(const std::vector<Record>& records, const Options& o) {
  return write_trace(records, o).files;
}

// Keeps a file the writer made at a known path, for the conformance check
// that ctest runs after this test (tests/CMakeLists.txt lists the names).
void keep(const std::string& name, std::string_view bytes) {
  const char* dir = std::getenv("TEST_TMPDIR_FOR_JITSCOPE");
  const std::string path =
      std::string(dir != nullptr ? dir : "/tmp") + "/perfetto_writer." + name + ".pftrace";
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  EXPECT_TRUE(out.good()) << path;
}

long long ns_of(const json& us) { return std::llround(us.get<double>() * 1000.0); }

// The JSON form's events of kind `ph`, with ts_ns/dur_ns, from all files.
std::vector<json> json_events(const std::vector<std::string>& files, const std::string& ph) {
  std::vector<json> out;
  for (const std::string& f : files) {
    std::string text = f;
    while (!text.empty() && text.back() == '\n') text.pop_back();
    if (text.back() != ']') text += "]";
    for (json e : json::parse(text)) {
      if (e["ph"] != ph) continue;
      if (e.contains("ts")) e["ts_ns"] = ns_of(e["ts"]);
      if (e.contains("dur")) e["dur_ns"] = ns_of(e["dur"]);
      out.push_back(e);
    }
  }
  return out;
}

Reader read_all(const std::vector<std::string>& files) {
  Reader all;
  for (const std::string& f : files) {
    Reader one;
    bool cut = true;
    one.read(f, &cut);
    EXPECT_FALSE(cut) << "a whole file ends with a whole packet";
    for (const std::string& e : one.errors) ADD_FAILURE() << e;
    all.events.insert(all.events.end(), one.events.begin(), one.events.end());
    all.packets += one.packets;
  }
  return all;
}

// The same fields the JSON form has, for comparing.
json key(const json& e) {
  json k = {{"name", e.value("name", "")}, {"ts", e.value("ts_ns", 0LL)}};
  if (e.contains("dur_ns")) k["dur"] = e["dur_ns"];
  if (e["ph"] != "C") k["args"] = e.value("args", json::object());
  if (e["ph"] != "M" && e["ph"] != "C") k["cat"] = e.value("cat", "");
  if (e["ph"] != "M") k["tid"] = e.value("tid", 0);
  return k;
}

std::vector<json> keys(const std::vector<json>& events) {
  std::vector<json> out;
  for (const json& e : events) out.push_back(key(e));
  std::sort(out.begin(), out.end());
  return out;
}

Records rich() {
  Records r;
  const std::uint64_t t0 = 7'000'000'000'000;
  r.begin(t0, "outer", 0, kFlagUnit, (std::uint64_t{3} << 32) | 1);
  r.arg_int(0, "n", -42);
  r.arg_uint(0, "big", ~std::uint64_t{0});
  r.arg_double(0, "ratio", 0.25);
  r.arg_bool(0, "ok", true);
  r.arg_string(0, "text", "h\xC3\xA9llo \"q\" \x01 \xFF!");
  r.arg_string(0, "members", "\"nested\":{\"a\":[1,2.5,\"x\",null,true]},\"m\":-7",
               ValueType::kJsonMembers);
  r.begin(t0 + 100, "phase", 1, kFlagPhase);
  r.instant(t0 + 150, "mark", 1);
  r.arg_string(1, "why", "because");  // the instant's arg
  r.counter(t0 + 160, "queue", 3.5);
  r.end(t0 + 100);          // ends before it began: the tie rule
  r.arg_int(0, "late", 9);  // after a child: goes on the END
  r.begin_dyn(t0 + 300, "dyn \xE2\x82 name", 1);
  r.end(t0 + 400);
  r.captured(CapturedKind::kRange, t0 + 410, t0 + 420, "nvtx range");
  r.captured(CapturedKind::kMark, t0 + 430, 0, "nvtx mark");
  r.begin(t0 + 500, "same ns", 1);
  r.begin(t0 + 500, "same ns", 2, kFlagCompileEvent);
  r.end(t0 + 500);
  r.end(t0 + 500);
  r.begin(t0 + 600, "left open", 1);
  r.arg_int(1, "k", 1);
  return r;
}

TEST(PerfettoWriter, EveryEventKindGivesTheJsonFormsFields) {
  const Records r = rich();
  Options o;
  o.close_at = 7'000'000'001'000;
  const auto json_files = write(r.r, o);
  o.perfetto = true;
  const auto pf_files = write(r.r, o);
  ASSERT_EQ(pf_files.size(), 1u);
  keep("every_kind", pf_files[0]);
  const Reader pf = read_all(pf_files);
  for (const char* ph : {"X", "I", "M"}) {
    SCOPED_TRACE(ph);
    const auto want = json_events(json_files, ph);
    EXPECT_FALSE(want.empty());
    // M: the pf form has no process_name / thread_name events (descriptors).
    std::vector<json> want_kept;
    for (const json& e : want) {
      if (e["name"] != "process_name" && e["name"] != "thread_name") want_kept.push_back(e);
    }
    std::vector<json> got = pf.of(ph);
    std::vector<json> got_kept;
    for (json e : got) {
      if (std::string(ph) == "M") e.erase("ts_ns");
      got_kept.push_back(e);
    }
    if (std::string(ph) == "M") {
      for (json& e : want_kept) e.erase("ts_ns");
    }
    EXPECT_EQ(keys(got_kept), keys(want_kept));
  }
  // The hot counter (the dropped-events counter is stamped at render time).
  const auto counters = pf.of("C");
  ASSERT_FALSE(counters.empty());
  EXPECT_EQ(counters[0]["name"], "queue");
  EXPECT_EQ(counters[0]["value"], 3.5);
  EXPECT_EQ(counters[0]["ts_ns"], 7'000'000'000'160LL);
  // Args were split: before the child on the BEGIN, after it on the END.
  EXPECT_GT(pf_files[0].size(), 0u);
  EXPECT_LT(pf_files[0].size(), json_files[0].size());
}

// Spans in compile units take the plain BEGIN with their unit's compile_id
// annotation cached per sequence (plain_packet.hpp, pf_plain_parts): each
// carries its own unit's id when units change, come back, nest, end, or
// their id and args together pass the plain packet's bound. Names repeat:
// a name's first use defines it, which takes the general path.
TEST(PerfettoWriter, SpansInUnitsCarryTheirOwnUnitsCompileId) {
  Records r;
  std::uint64_t t = 9'000'000'000'000;
  const std::uint64_t a = (std::uint64_t{3} << 32) | 1, b = std::uint64_t{4} << 32;
  const std::uint64_t widest = ~std::uint64_t{0};
  auto leaf = [&](std::uint8_t depth) {
    r.begin(t += 10, "leaf", depth);
    r.end(t += 10);
  };
  r.begin(t, "unit", 0, kFlagUnit, a);
  leaf(1);
  leaf(1);
  r.begin(t += 10, "unit", 1, kFlagUnit, b);  // nested: its children are in b
  leaf(2);
  r.end(t += 10);
  leaf(1);  // back in a
  r.end(t += 10);
  r.begin(t += 10, "leaf", 0);
  const char* const kKeys[] = {"k1", "k2", "k3", "k4"};
  for (const char* k : kKeys) r.arg_int(0, k, 1);
  r.end(t += 10);
  r.begin(t += 10, "unit", 0, kFlagUnit, widest);
  // Args that fit a plain packet (60 bytes; their keys defined above), not
  // with this unit's id (27): the bound keeps the packet's stack buffer
  // (ASan sees it).
  r.begin(t += 10, "leaf", 1);
  for (const char* k : kKeys) r.arg_int(1, k, -1'000'000'000'000);
  r.end(t += 10);
  leaf(1);
  r.end(t += 10);
  r.begin(t += 10, "unit", 0, kFlagUnit, a);
  leaf(1);
  r.end(t += 10);
  const auto json_files = write(r.r, {});
  Options o;
  o.perfetto = true;
  const auto pf_files = write(r.r, o);
  ASSERT_EQ(pf_files.size(), 1u);
  keep("units", pf_files[0]);
  EXPECT_EQ(keys(read_all(pf_files).of("X")), keys(json_events(json_files, "X")));
  // The JSON form has each span's own unit: in the order the spans began,
  std::vector<json> spans = json_events(json_files, "X");
  std::sort(spans.begin(), spans.end(),
            [](const json& x, const json& y) { return x["ts_ns"] < y["ts_ns"]; });
  std::vector<std::string> ids;
  for (const json& e : spans) {
    const json args = e.value("args", json::object());
    ids.push_back(args.contains("compile_id") ? args["compile_id"].get<std::string>() : "-");
  }
  const std::string w = "4294967295/4294967295";
  EXPECT_EQ(ids, (std::vector<std::string>{"3/1", "3/1", "3/1", "4/0", "4/0", "3/1", "-", w, w, w,
                                           "3/1", "3/1"}));
}

// Counters are encoded straight from their records, as the transcoder
// writes the JSON form's "C" events: the same samples, integers where JSON
// spells an integer, NaN where it has no number, names repaired alike.
TEST(PerfettoWriter, CountersFromRecordsAreTheJsonFormsCountersTranscoded) {
  // After the first, a sample of "depth" takes the fast path
  // (ProcessSequence::counter_static) where its value lets it: 100000
  // (spelled "1e+05") and 0x1p53 do not.
  const double values[] = {7.0,  -3.0, 2.5,      1e300,    std::nan(""), HUGE_VAL, 0x1p63,
                           -0.0, 9990, 100000.0, 123456.0, 0x1p53,       1e-7};
  Records r;
  std::uint64_t t = 8'000'000'000'000;
  for (double v : values) r.counter(t += 10, "depth", v);
  Record dyn = record(RecordKind::kCounter, t += 10, nullptr, 0, kFlagDynamicName);
  const std::string_view bad_name = "q\xFF\xE2\x82 len";
  dyn.name_len = static_cast<std::uint32_t>(bad_name.size());
  dyn.value.f64 = 4.0;
  r.add(dyn);
  r.bytes(bad_name);
  Options o;
  const auto json_files = write(r.r, o);
  o.perfetto = true;
  const Reader native = read_all(write(r.r, o));

  // The JSON form's counters through the transcoder, into a file of their own.
  std::string file;
  pfw::append_file_start(file, 1, 1, 1);
  pfw::ProcessSequence seq;
  seq.start_file(1);
  std::size_t samples = 0;
  for (const json& e : json_events(json_files, "C")) {
    if (e["name"] == "jitscope.dropped_events") continue;
    json text = e;
    text.erase("ts_ns");
    ASSERT_TRUE(seq.transcode(text.dump(), file)) << text;
    ++samples;
  }
  ASSERT_EQ(samples, std::size(values) + 1);
  const Reader transcoded = read_all({file});
  auto counters = [](const Reader& from) {
    std::vector<json> out;
    for (json e : from.of("C")) {
      if (e["name"] == "jitscope.dropped_events") continue;
      const json& v = e["value"];
      e["integer"] = v.is_number_integer();
      if (v.is_number_float() && std::isnan(v.get<double>())) e["value"] = "nan";
      out.push_back(e);
    }
    return out;
  };
  const std::vector<json> got = counters(native);
  EXPECT_EQ(got, counters(transcoded));
  ASSERT_EQ(got.size(), std::size(values) + 1);
  EXPECT_EQ(got[0]["value"], 7);
  EXPECT_TRUE(got[0]["integer"]);
  EXPECT_FALSE(got[2]["integer"]) << got[2];
  EXPECT_EQ(got[4]["value"], "nan");
  EXPECT_EQ(got[5]["value"], "nan") << "JSON has no infinity: null";
  EXPECT_EQ(got[8]["value"], 9990);
  EXPECT_TRUE(got[8]["integer"]);
  EXPECT_FALSE(got[9]["integer"]) << "spelled 1e+05: a double sample, in both forms";
  EXPECT_TRUE(got[10]["integer"]);
  EXPECT_EQ(got[13]["name"], "q\xEF\xBF\xBD\xEF\xBF\xBD len");
}

TEST(PerfettoWriter, ThreadTimestampsAreDeltasOnClock64ThatSumToTheJsonTs) {
  Records r;
  std::uint64_t t = 9'000'000'000'000;
  for (int i = 0; i < 500; ++i) {
    r.begin(t, "a", 0);
    r.begin(t + 3, "b", 1);
    r.end(t + 70 + i);
    r.end(t + 200 + 3 * i);
    t += 1000 + 17 * i;
  }
  Options o;
  const auto j = json_events(write(r.r, o), "X");
  o.perfetto = true;
  const auto files = write(r.r, o);
  keep("deltas", files[0]);
  const Reader pf = read_all(files);
  EXPECT_EQ(keys(pf.of("X")), keys(j));
  // Most span packets are small: the bench reports the average.
  EXPECT_LT(files[0].size(), j.size() * 40 + 2048);
}

TEST(PerfettoWriter, TheCapKeepsEveryWrittenBeginsEndAndTheStats) {
  Records r;
  std::uint64_t t = 1'000'000'000'000;
  r.begin(t, "root", 0);
  for (int i = 0; i < 3000; ++i) {
    r.begin(t + 10 * i + 1, "child", 1);
    r.arg_int(1, "i", i);
    r.begin(t + 10 * i + 2, "grandchild", 2);
    r.end(t + 10 * i + 5);
    r.end(t + 10 * i + 6);
  }
  Options o;
  o.perfetto = true;
  o.max_bytes = 16 * 1024;
  o.close_at = t + 100'000;
  const auto files = write(r.r, o);
  ASSERT_EQ(files.size(), 1u);
  keep("cap", files[0]);
  EXPECT_LE(files[0].size(), o.max_bytes);
  Reader pf;
  pf.read(files[0]);
  EXPECT_TRUE(pf.errors.empty()) << pf.errors.front();
  for (const auto& [track, open] : pf.open) EXPECT_TRUE(open.empty()) << "a BEGIN without END";
  json stats;
  for (const json& e : pf.of("M")) {
    if (e["name"] == "jitscope_stats") stats = e["args"];
  }
  ASSERT_TRUE(stats.is_object());
  EXPECT_EQ(stats["trace_cap"]["reached"], true);
  EXPECT_GT(stats["trace_cap"]["events_not_written"].get<long long>(), 0);
  EXPECT_EQ(stats["events_written"].get<std::size_t>(), pf.of("X").size());
  // The root, open all along, is there (incomplete) with its children.
  bool root = false;
  for (const json& e : pf.of("X")) root = root || e["name"] == "root";
  EXPECT_TRUE(root);
}

TEST(PerfettoWriter, UnderTheCapDeeplyNestedOpenSpansAllGetTheirEnds) {
  // 250 spans open when the cap is reached, all ended at the close: their
  // ENDs (each with "incomplete") need far more than the stats' room.
  Records r;
  const std::uint64_t t = 3'000'000'000'000;
  for (int d = 0; d < 250; ++d) r.begin(t + d, "level", static_cast<std::uint8_t>(d));
  for (int i = 0; i < 5000; ++i) {
    r.begin(t + 1000 + 10 * i, "leaf", 250);
    r.end(t + 1005 + 10 * i);
  }
  Options o;
  o.perfetto = true;
  o.max_bytes = 64 * 1024;
  o.close_at = t + 1'000'000;
  const auto files = write(r.r, o);
  keep("nested_cap", files[0]);
  EXPECT_LE(files[0].size(), o.max_bytes);
  Reader pf;
  pf.read(files[0]);
  EXPECT_TRUE(pf.errors.empty()) << pf.errors.front();
  std::size_t levels = 0;
  for (const json& e : pf.of("X")) levels += e["name"] == "level";
  EXPECT_EQ(levels, 250u);
  for (const auto& [track, open] : pf.open) EXPECT_TRUE(open.empty()) << "a BEGIN without END";
}

TEST(PerfettoWriter, RotatedFilesEachDecodeAloneAndTogetherHoldTheJsonFormsSpans) {
  Records r;
  std::uint64_t t = 2'000'000'000'000;
  r.begin(t, "root", 0, kFlagUnit, 5);
  r.arg_string(0, "what", "everything");
  for (int i = 0; i < 2000; ++i) {
    r.begin(t + 10 * i + 1, i % 2 == 0 ? "even" : "odd", 1);
    r.arg_int(1, "i", i);
    r.end(t + 10 * i + 6);
  }
  r.end(t + 30'000);
  Options o;
  o.rotate = 4096;
  o.batch = 100;
  const auto json_files = write(r.r, o);
  o.perfetto = true;
  const auto files = write(r.r, o);
  ASSERT_GT(files.size(), 3u);
  // The first parts (a rotated part: the stats come in the last) and the last.
  for (std::size_t i = 0; i < 3; ++i) keep("rotated.part" + std::to_string(i), files[i]);
  keep("rotated.last", files.back());
  std::vector<json> all;
  for (std::size_t i = 0; i < files.size(); ++i) {
    Reader one;
    one.read(files[i]);
    EXPECT_TRUE(one.errors.empty()) << "file " << i << ": " << one.errors.front();
    EXPECT_TRUE(one.saw_snapshot);
    // The open root begins again at the head of its sequence in each file,
    // so the thread's times stay in order there (no absolute fallback).
    EXPECT_EQ(one.absolute_on_thread, 0u) << "file " << i;
    bool session = false;
    for (const json& e : one.of("M")) session = session || e["name"] == "jitscope_session";
    EXPECT_TRUE(session) << "file " << i;
    for (const json& e : one.of("X")) all.push_back(e);
  }
  EXPECT_EQ(keys(all), keys(json_events(json_files, "X")));
}

TEST(PerfettoWriter, AFileCutAtAnyByteDecodesUpToItsLastWholePacket) {
  Options o;
  o.perfetto = true;
  const std::string file = write(rich().r, o)[0];
  const auto whole = testing::pfwire::packets_of(file);
  ASSERT_GT(whole.size(), 10u);
  // Cut inside its last packet, as a crash leaves it.
  keep("cut", std::string_view(file).substr(0, file.size() - whole.back().size() / 2));
  // Every offset in the last ten packets.
  const std::size_t from =
      static_cast<std::size_t>(whole[whole.size() - 10].data() - file.data()) - 3;
  std::size_t ends = 0;
  for (std::size_t cut = from; cut < file.size(); ++cut) {
    bool was_cut = false;
    Reader reader;
    reader.read(std::string_view(file).substr(0, cut), &was_cut);
    std::size_t expect = 0;
    for (std::string_view p : whole) {
      if (static_cast<std::size_t>(p.data() + p.size() - file.data()) <= cut) ++expect;
    }
    ASSERT_EQ(reader.packets, expect) << "cut at " << cut;
    EXPECT_TRUE(reader.errors.empty()) << "cut at " << cut << ": " << reader.errors.front();
    if (!was_cut) ++ends;
  }
  EXPECT_GE(ends, 9u);  // packet boundaries read as whole files
}

TEST(PerfettoWriter, AStaticNameReusedAfterAnUnloadIsNotTakenForTheOldOne) {
  static char name[8] = "alpha";
  FilesSink sink(false);
  SessionInfo info;
  info.pid = 1;
  info.conversion = ClockConversion::identity();
  info.perfetto = true;
  TraceWriter writer(sink, info);
  writer.begin_trace();
  ThreadState t(1u << kSessionGenerationShift, 64, OverflowPolicy::kBlock, 7, "t");
  const auto push = [&](std::vector<Record> rs) {
    for (std::size_t i = 0; i < rs.size(); ++i) t.ring.slot(i) = rs[i];
    t.ring.commit(rs.size());
    writer.drain(t);
  };
  // Counters too: their track and ids are kept by the name's pointer
  // (ProcessSequence::counter_static).
  Record counter = record(RecordKind::kCounter, 112, name, 0);
  counter.value.f64 = 1;
  push({record(RecordKind::kBegin, 100, name, 0), record(RecordKind::kBegin, 110, name, 1), counter,
        counter, record(RecordKind::kEnd, 120, nullptr, 0)});
  // The image holding `name` goes away: the flusher's unload cycle.
  writer.detach_static_names(t);
  writer.forget_static_names();
  std::strcpy(name, "omega");  // another one puts a different string there
  counter.ts = 135;
  push({record(RecordKind::kBegin, 130, name, 1), counter,
        record(RecordKind::kEnd, 140, nullptr, 0), record(RecordKind::kEnd, 150, nullptr, 0)});
  writer.settle(t);
  writer.end_trace();
  keep("unload", sink.files[0]);
  Reader pf;
  pf.read(sink.files[0]);
  EXPECT_TRUE(pf.errors.empty());
  std::vector<std::string> names;
  for (const json& e : pf.of("X")) names.push_back(e["name"]);
  EXPECT_EQ(names, (std::vector<std::string>{"alpha", "omega", "alpha"}));
  std::vector<std::string> counters;
  for (const json& e : pf.of("C")) {
    if (e["name"] != "jitscope.dropped_events") counters.push_back(e["name"]);
  }
  EXPECT_EQ(counters, (std::vector<std::string>{"alpha", "alpha", "omega"}));
}

TEST(PerfettoConfig, FormatFromTheEnvironment) {
  ::setenv("JITSCOPE_TRACE", "/tmp/x.json", 1);
  ::setenv("JITSCOPE_FORMAT", "perfetto", 1);
  Config cfg;
  EXPECT_TRUE(Config::from_env(&cfg));
  EXPECT_EQ(cfg.format, TraceFormat::kPerfetto);
  ::setenv("JITSCOPE_FORMAT", "json", 1);
  EXPECT_TRUE(Config::from_env(&cfg));
  EXPECT_EQ(cfg.format, TraceFormat::kJson);
  ::setenv("JITSCOPE_FORMAT", "protobuf", 1);
  const Status st = Config::from_env(&cfg);
  EXPECT_FALSE(st);
  EXPECT_NE(st.message().find("JITSCOPE_FORMAT"), std::string::npos) << st.message();
  ::unsetenv("JITSCOPE_FORMAT");
  ::unsetenv("JITSCOPE_TRACE");
}

void session_work() {
  for (int i = 0; i < 100; ++i) {
    JITSCOPE_SPAN("work");
    JITSCOPE_INSTANT("tick");
  }
}

TEST(PerfettoSession, APftracePathWritesTheProtobufFormWithOneSequencePerThread) {
  const char* dir = std::getenv("TEST_TMPDIR_FOR_JITSCOPE");
  const std::string path =
      std::string(dir != nullptr ? dir : "/tmp") + "/perfetto_writer.session.pftrace";
  Config cfg;
  cfg.output_path = path;
  cfg.overflow = OverflowPolicy::kBlock;
  ASSERT_TRUE(start(cfg));
  session_work();
  std::thread other(session_work);
  other.join();
  SessionStats stats;
  ASSERT_TRUE(stop(&stats));
  const std::string file = testing::read_file(path);
  ASSERT_FALSE(file.empty());
  EXPECT_NE(file[0], '[') << "not JSON";
  Reader pf;
  pf.read(file);
  for (const std::string& e : pf.errors) ADD_FAILURE() << e;
  EXPECT_EQ(pf.of("X").size(), 200u);
  EXPECT_EQ(pf.of("I").size(), 200u);
  std::set<long long> tids;
  for (const json& e : pf.of("X")) tids.insert(e["tid"].get<long long>());
  EXPECT_EQ(tids.size(), 2u);
  EXPECT_GE(pf.sequences.size(), 3u) << "the process sequence and one per thread";
  EXPECT_EQ(stats.events_written, 400u);
}

}  // namespace
}  // namespace jitscope::detail
