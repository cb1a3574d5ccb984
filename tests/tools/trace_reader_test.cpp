// jitscope_trace_reader: TraceReader (the streaming element scanner),
// parse_us_to_ns and EventDecoder.
//
// Covered: every chunk size from 1 to 64 bytes (and a few larger ones) over
// a real trace written by the SDK with hostile names, giving the same events
// as a whole-file JSON parse; the array, object and unterminated forms;
// strings holding brackets, braces, escaped quotes and backslashes; every
// kind of malformed input with its exact error and byte offset (what the
// reader repairs instead: trace_reader_repair_test.cpp); open errors;
// a callback that stops the read; parse_us_to_ns exactness and rounding;
// the decoder's fields, string/number ids (a duplicate key replaces the
// earlier one whole), leniency and errors; the per-event size limit.
// Not covered here: stdin ("-", the report test reads a trace from stdin),
// read(2) failing mid-file (no portable way to provoke it), multi-GB inputs
// (bench/report).
#include <event_decoder.hpp>
#include <trace_reader.hpp>

#include "trace_reader_support.hpp"
#include "trace_support.hpp"

#include <jitscope/jitscope.hpp>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <sys/stat.h>

#include <cstdint>
#include <fstream>
#include <limits>
#include <string>
#include <thread>
#include <vector>

namespace {

using jitscope::testing::read_file;
using jitscope::testing::temp_path;
using jitscope::tools::DecodedEvent;
using jitscope::tools::EventDecoder;
using jitscope::tools::parse_us_to_ns;
using jitscope::tools::RawEvent;
using jitscope::tools::TraceReader;
using nlohmann::json;

std::string write_temp(const std::string& stem, const std::string& content) {
  const std::string path = temp_path(stem);
  std::ofstream(path, std::ios::binary) << content;
  return path;
}

using ReadResult = jitscope::testing::ReaderOutput;
using jitscope::testing::read_with;

const std::size_t kChunks[] = {1,  2,  3,  5,   7,    13,
                               31, 64, 65, 100, 4096, TraceReader::kDefaultChunkSize};

// Reads `content` at every chunk size in kChunks; all must agree.
ReadResult read_all_ways(const std::string& content) {
  const std::string path = write_temp("reader_input", content);
  const ReadResult first = read_with(path, kChunks[0]);
  for (std::size_t chunk : kChunks) {
    const ReadResult r = read_with(path, chunk);
    EXPECT_EQ(r.ok, first.ok) << "chunk " << chunk;
    EXPECT_EQ(r.error, first.error) << "chunk " << chunk;
    EXPECT_EQ(r.events, first.events) << "chunk " << chunk;
    EXPECT_EQ(r.fields, first.fields) << "chunk " << chunk;
    EXPECT_EQ(r.unterminated, first.unterminated) << "chunk " << chunk;
  }
  ReadResult r = first;
  // The error names the file: strip "<path>: " for the callers' checks.
  if (r.error.rfind(path + ": ", 0) == 0) r.error = r.error.substr(path.size() + 2);
  return r;
}

// Each event is at its offset in the input.
void expect_offsets(const std::string& content, const ReadResult& r) {
  for (const auto& [text, offset] : r.events) {
    ASSERT_LE(offset + text.size(), content.size());
    EXPECT_EQ(content.substr(offset, text.size()), text);
  }
}

// ---- a real trace, every chunk size ----

TEST(TraceReader, EveryChunkSizeGivesTheEventsOfAWholeFileParse) {
  jitscope::Config cfg = jitscope::testing::test_config("reader_real");
  ASSERT_TRUE(jitscope::start(cfg));
  auto work = [](int t) {
    JITSCOPE_THREAD_NAME("worker \"" + std::to_string(t) + "\" ]}[{");
    for (int i = 0; i < 40; ++i) {
      JITSCOPE_SPAN("outer");
      jitscope::Span s("inner",
                       {{"text", "brackets ]]}} [[{{ and \"quotes\" \\\" \\\\"}, {"i", i}});
      JITSCOPE_SPAN_DYN(std::string("dyn\\\"[") + std::to_string(i) + "]{\\");
      JITSCOPE_INSTANT("mark", {"s", "}\",\"ph\":\"X\""});
      JITSCOPE_COUNTER("n", i);
    }
  };
  std::thread a(work, 1), b(work, 2);
  a.join();
  b.join();
  jitscope::stop();
  const std::string content = read_file(cfg.output_path);
  const json whole = json::parse(content);
  ASSERT_TRUE(whole.is_array());
  ASSERT_GT(whole.size(), 400u);

  const ReadResult ref = read_with(cfg.output_path, TraceReader::kDefaultChunkSize);
  ASSERT_TRUE(ref.ok) << ref.error;
  EXPECT_FALSE(ref.unterminated);
  ASSERT_EQ(ref.events.size(), whole.size());
  for (std::size_t i = 0; i < whole.size(); ++i) {
    EXPECT_EQ(json::parse(ref.events[i].first), whole[i]) << "event " << i;
  }
  expect_offsets(content, ref);
  for (std::size_t chunk = 1; chunk <= 64; ++chunk) {
    const ReadResult r = read_with(cfg.output_path, chunk);
    ASSERT_TRUE(r.ok) << "chunk " << chunk << ": " << r.error;
    ASSERT_EQ(r.events, ref.events) << "chunk " << chunk;
  }
  for (std::size_t chunk : {100u, 127u, 128u, 1000u, 4097u}) {
    EXPECT_EQ(read_with(cfg.output_path, chunk).events, ref.events) << "chunk " << chunk;
  }

  // The same trace cut between two events (a writer that died) reads as the
  // unterminated form with the events before the cut.
  const std::size_t cut = content.rfind(",\n", content.size() / 2);
  ASSERT_NE(cut, std::string::npos);
  const ReadResult cut_read = read_all_ways(content.substr(0, cut));
  ASSERT_TRUE(cut_read.ok) << cut_read.error;
  EXPECT_TRUE(cut_read.unterminated);
  ASSERT_LT(cut_read.events.size(), ref.events.size());
  EXPECT_TRUE(std::equal(cut_read.events.begin(), cut_read.events.end(), ref.events.begin()));
}

// ---- forms ----

TEST(TraceReader, ArrayForm) {
  const std::string in = " \n[ {\"ph\":\"X\"} ,\n{\"a\":[1,{\"b\":[]}]}\t]\n \r\n";
  const ReadResult r = read_all_ways(in);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_FALSE(r.unterminated);
  ASSERT_EQ(r.events.size(), 2u);
  EXPECT_EQ(r.events[0].first, "{\"ph\":\"X\"}");
  EXPECT_EQ(r.events[0].second, 4u);
  EXPECT_EQ(r.events[1].first, "{\"a\":[1,{\"b\":[]}]}");
  expect_offsets(in, r);
  EXPECT_TRUE(r.fields.empty());
}

TEST(TraceReader, EmptyArrays) {
  for (const char* in : {"[]", "[ ]\n", " [\n\n] "}) {
    const ReadResult r = read_all_ways(in);
    EXPECT_TRUE(r.ok) << in << ": " << r.error;
    EXPECT_TRUE(r.events.empty());
    EXPECT_FALSE(r.unterminated);
  }
}

TEST(TraceReader, UnterminatedArrayFormIsSuccess) {
  struct Case {
    const char* in;
    std::size_t events;
  };
  for (const Case& c : {Case{"[", 0}, Case{"[ \n", 0}, Case{"[{\"a\":1}", 1},
                        Case{"[{\"a\":1},\n", 1}, Case{"[{\"a\":1},\n{\"b\":2}\n", 2}}) {
    const ReadResult r = read_all_ways(c.in);
    EXPECT_TRUE(r.ok) << c.in << ": " << r.error;
    EXPECT_TRUE(r.unterminated) << c.in;
    EXPECT_EQ(r.events.size(), c.events) << c.in;
  }
}

TEST(TraceReader, ObjectFormHandsOtherMembersToOnField) {
  const std::string in =
      "{\"displayTimeUnit\":\"ns\", \"traceEvents\" : [{\"ph\":\"X\",\"s\":\"}]\"},{}],\n"
      "\"otherData\":{\"a\":[1,{\"b\":\"}\"}],\"q\":\"\\\"\"},\"n\":null,\"v\":-1.5e3,\"t\":true,"
      "\"f\":false,\"arr\":[[],[[]]],\"esc\":\"a\\\\\"}\n";
  const ReadResult r = read_all_ways(in);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_FALSE(r.unterminated);
  ASSERT_EQ(r.events.size(), 2u);
  EXPECT_EQ(r.events[0].first, "{\"ph\":\"X\",\"s\":\"}]\"}");
  EXPECT_EQ(r.events[1].first, "{}");
  expect_offsets(in, r);
  const std::vector<std::pair<std::string, std::string>> want = {
      {"displayTimeUnit", "\"ns\""},
      {"otherData", "{\"a\":[1,{\"b\":\"}\"}],\"q\":\"\\\"\"}"},
      {"n", "null"},
      {"v", "-1.5e3"},
      {"t", "true"},
      {"f", "false"},
      {"arr", "[[],[[]]]"},
      {"esc", "\"a\\\\\""},
  };
  EXPECT_EQ(r.fields, want);
  // Every raw value is JSON.
  for (const auto& [k, v] : r.fields) EXPECT_TRUE(json::accept(v)) << k;
}

TEST(TraceReader, ObjectFormWithEventsLastAndNullCallback) {
  const std::string path =
      write_temp("reader_obj", "{\"otherData\":{},\"traceEvents\":[{\"x\":1}]}");
  TraceReader reader;
  std::string error;
  int n = 0;
  EXPECT_TRUE(reader.read(
      path, [&](const RawEvent&) { return ++n, true; }, nullptr, &error))
      << error;
  EXPECT_EQ(n, 1);
}

TEST(TraceReader, StringsWithBracketsBracesAndEscapes) {
  // Every event has strings that would end it early (or late) if the scanner
  // did not track strings and escapes: "}" "]" "{" "[" inside strings, \" and
  // \\ right before a closing quote, an escaped backslash before a quote.
  const std::vector<std::string> events = {
      R"({"a":"}"})",
      R"({"a":"]"})",
      R"({"a":"{{{[[["})",
      R"({"a":"\"}"})",
      R"({"a":"\\"})",
      R"({"a":"\\\"}]"})",
      R"({"a":"x\\\\","b":"}"})",
      R"({"\"}":{"k":["]","[",{"}":"{"}]}})",
      R"({"u":"\u005d\u007d","z":"\\u0022"})",
      "{\"utf8\":\"\xc3\xa9\xe2\x82\xac}\"}",
      R"({"long":")" + std::string(300, ']') + R"(\")" + std::string(200, '}') + R"("})",
  };
  std::string in = "[";
  for (std::size_t i = 0; i < events.size(); ++i) in += (i ? ",\n" : "") + events[i];
  in += "]";
  const ReadResult r = read_all_ways(in);
  ASSERT_TRUE(r.ok) << r.error;
  ASSERT_EQ(r.events.size(), events.size());
  for (std::size_t i = 0; i < events.size(); ++i) {
    EXPECT_EQ(r.events[i].first, events[i]);
    EXPECT_TRUE(json::accept(r.events[i].first)) << events[i];
  }
  expect_offsets(in, r);
}

TEST(TraceReader, NestingUpTo256LevelsIsFine) {
  // The event's '{' is level 1: 255 more brackets reach 256.
  const std::string ev = "{\"a\":" + std::string(255, '[') + std::string(255, ']') + "}";
  const ReadResult r = read_all_ways("[" + ev + "]");
  ASSERT_TRUE(r.ok) << r.error;
  ASSERT_EQ(r.events.size(), 1u);
  EXPECT_EQ(r.events[0].first, ev);
}

TEST(TraceReader, RandomBytesGiveTheSameResultAtEveryChunkSize) {
  // Quotes, escapes and brackets in random places (most of it not JSON): the
  // byte loop (small chunks) and the 64-byte block path (big chunks) must
  // agree on every event boundary and every error. read_all_ways checks.
  std::uint64_t x = 0x9E3779B97F4A7C15ull;
  auto next = [&x] {
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    return x * 2685821657736338717ull;
  };
  const char* const pieces[] = {"{\"k\":\"", "\\\\", "\\\"", "\"},", "{", "}", "[", "]",
                                "\"",        "\\",   ",",    ":",    "a", " ", "\n"};
  for (int i = 0; i < 60; ++i) {
    std::string in = "[";
    const std::uint64_t n = next() % 200;
    for (std::uint64_t k = 0; k < n; ++k) in += pieces[next() % (sizeof pieces / sizeof pieces[0])];
    (void)read_all_ways(in);
  }
  // One that once split differently: a backslash outside a string.
  (void)read_all_ways(
      R"([{"k":"{"k":" \""},\\\\}{"k":"\{"k":"{"k":"\\a]}"},"},\1"},{"k":"{"k":"b)");
}

// ---- malformed input: exact errors ----

struct Bad {
  std::string in;
  std::string error;  // after "<path>: "
};

TEST(TraceReader, MalformedInputsGiveExactErrors) {
  const std::vector<Bad> cases = {
      {"", "byte 0: empty input: not a trace"},
      {"  \n\t", "byte 4: empty input: not a trace"},
      {"garbage", "byte 0: not a trace: expected '[' or '{', found 'g'"},
      {"\n\x01\x02\xff", "byte 1: not a trace: expected '[' or '{', found byte 0x01"},
      {"\xff\xfe[", "byte 0: not a trace: expected '[' or '{', found byte 0xFF"},
      {"\"traceEvents\"", "byte 0: not a trace: expected '[' or '{', found '\"'"},
      // (an array cut inside an event, and "[{},]", are read:
      // trace_reader_repair_test.cpp)
      // not objects, bad separators, garbage after the end
      {"[1,2]", "byte 1: an event is not a JSON object (found '1')"},
      {"[{},[]]", "byte 4: an event is not a JSON object (found '[')"},
      {"[{},,]", "byte 4: an event is not a JSON object (found ',')"},
      {"[,{}]", "byte 1: an event is not a JSON object (found ',')"},
      {"[{} {}]", "byte 4: expected ',' or ']' after an event, found '{'"},
      {"[{}]x", "byte 4: garbage after the end of the trace (found 'x')"},
      {"[{}]\n]", "byte 5: garbage after the end of the trace (found ']')"},
      {"[{}][]", "byte 4: garbage after the end of the trace (found '[')"},
      // brackets inside an event
      {"[{\"a\":[}]", "byte 7: mismatched '}'"},
      {"[{\"a\":]}]", "byte 6: mismatched ']'"},
      {"[{\"a\":" + std::string(300, '[') + "]", "byte 261: nesting deeper than 256 levels"},
      {"[" + std::string(100000, '['), "byte 1: an event is not a JSON object (found '[')"},
      {"[{\"a\":" + std::string(100000, '['), "byte 261: nesting deeper than 256 levels"},
      // the object form
      {"{}", "byte 0: no \"traceEvents\" array in the top-level object"},
      {"{\"otherData\":{}}", "byte 0: no \"traceEvents\" array in the top-level object"},
      {"{\"traceEvents\":{}}", "byte 15: \"traceEvents\" is not an array (found '{')"},
      {"{\"traceEvents\":[{}]", "byte 19: input ends inside the top-level object"},
      {"{\"traceEvents\":[{}", "byte 18: input ends inside the traceEvents array"},
      {"{\"traceEvents\":[{}],", "byte 20: input ends inside the top-level object"},
      {"{\"traceEvents\":[{\"a", "byte 19: input ends inside an event that starts at byte 16"},
      {"{\"traceEvents\":[],\"x\":}", "byte 22: not JSON: a member value starts with '}'"},
      {"{\"traceEvents\":[] \"x\":1}",
       "byte 18: expected ',' or '}' in the top-level object, found '\"'"},
      {"{\"traceEvents\" []}", "byte 15: expected ':' after a member name, found '['"},
      {"{1:2}", "byte 1: expected a member name in the top-level object, found '1'"},
      {"{\"traceEvents\":[]}x", "byte 18: garbage after the end of the trace (found 'x')"},
      {"{\"otherData\":{\"a\":[}}", "byte 19: mismatched '}'"},
      {"{\"otherData\":\"abc", "byte 17: input ends inside the top-level object"},
  };
  for (const Bad& c : cases) {
    const ReadResult r = read_all_ways(c.in);
    EXPECT_FALSE(r.ok) << c.in.substr(0, 40);
    EXPECT_EQ(r.error, c.error) << c.in.substr(0, 40);
  }
}

TEST(TraceReader, OpenErrors) {
  TraceReader reader;
  std::string error;
  const auto never = [](const RawEvent&) { return true; };
  const std::string missing = temp_path("reader_missing") + ".nope";
  EXPECT_FALSE(reader.read(missing, never, nullptr, &error));
  EXPECT_EQ(error, missing + ": cannot open: No such file or directory");

  const std::string dir = temp_path("reader_dir");
  ASSERT_EQ(::mkdir(dir.c_str(), 0700), 0);
  EXPECT_FALSE(reader.read(dir, never, nullptr, &error));
  EXPECT_EQ(error, dir + ": is a directory");
  ::rmdir(dir.c_str());
}

TEST(TraceReader, CallbackStopsTheRead) {
  const std::string path = write_temp("reader_stop", "[{\"a\":1},{\"a\":2},{\"a\":3}]");
  TraceReader reader;
  std::string error = "stale";
  int seen = 0;
  EXPECT_FALSE(reader.read(
      path, [&](const RawEvent&) { return ++seen < 2; }, nullptr, &error));
  EXPECT_EQ(seen, 2);
  EXPECT_EQ(error, "");
  // The callback's own error stays.
  EXPECT_FALSE(reader.read(
      path,
      [&](const RawEvent& e) {
        error = "stopped at " + std::to_string(e.offset);
        return false;
      },
      nullptr, &error));
  EXPECT_EQ(error, "stopped at 1");
  // The reader is reusable after a stop.
  EXPECT_TRUE(reader.read(
      path, [](const RawEvent&) { return true; }, nullptr, &error))
      << error;
  EXPECT_EQ(reader.events(), 3u);
}

// ---- parse_us_to_ns ----

TEST(ParseUsToNs, PlainDecimalsAreExact) {
  struct Case {
    const char* token;
    std::int64_t ns;
  };
  const Case cases[] = {
      {"23638621744.897", 23638621744897},
      {"12", 12000},
      {"0", 0},
      {"-0", 0},
      {"0.001", 1},
      {"0.1", 100},
      {"1.5", 1500},
      {"-3.25", -3250},
      {"12.345", 12345},
      {"12.3456789", 12346},  // beyond 3 decimals: half up
      {"12.3454999", 12345},
      {"0.0005", 1},
      {"0.00049999999", 0},
      {"1.0004", 1000},
      {"1.0005", 1001},
      {"-0.0005", -1},  // on the magnitude
      {"9999999999999.999", 9999999999999999},
      {"9223372036854775.807", std::numeric_limits<std::int64_t>::max()},
      {"-9223372036854775.807", -std::numeric_limits<std::int64_t>::max()},
      {"\"12.5\"", 12500},  // quoted numbers
      {" 7 \n", 7000},      // a raw token with its trailing whitespace
      {"007.5", 7500},
      // More than 18 integer digits take the checked path: leading zeros are fine.
      {"0000000000000000001.5", 1500},
      {"00000000009223372036854775.807", std::numeric_limits<std::int64_t>::max()},
      {"1.5e3", 1500000},  // exponent forms, through double
      {"1E-3", 1},
      {"2.5e+0", 2500},
      {"-1e1", -10000},
      {"1e-4", 0},
      {"1.23456e2", 123456},
  };
  for (const Case& c : cases) {
    std::int64_t ns = -42;
    EXPECT_TRUE(parse_us_to_ns(c.token, &ns)) << c.token;
    EXPECT_EQ(ns, c.ns) << c.token;
  }
}

TEST(ParseUsToNs, RejectsWhatIsNotANumber) {
  for (const char* t : {"",
                        " ",
                        "-",
                        "abc",
                        "1.",
                        ".5",
                        "1.2.3",
                        "0x10",
                        "1e",
                        "1e+",
                        "nan",
                        "inf",
                        "+1",
                        "1 2",
                        "\"\"",
                        "true",
                        "null",
                        "9223372036854775.808",
                        "99999999999999999999",
                        "18446744073709551616",  // 2^64: wraps to 0 without the check
                        "999999999999999999",    // 18 digits of µs: beyond int64 ns
                        "1e300",
                        "-1e300",
                        "12a",
                        "\"12"}) {
    std::int64_t ns = -42;
    EXPECT_FALSE(parse_us_to_ns(t, &ns)) << "'" << t << "'";
  }
}

// ---- EventDecoder ----

// A RawEvent over `text` with the padding the reader guarantees.
struct Padded {
  std::string buf;
  RawEvent ev;
  explicit Padded(const std::string& text, std::uint64_t offset = 0)
      : buf(text + std::string(jitscope::tools::kJsonPadding, ' ')),
        ev{std::string_view(buf.data(), text.size()), offset} {}
};

TEST(EventDecoder, ReadsTheCommonFields) {
  const std::string args =
      R"({"compile_id":"0/1","name":"n","grid":[4,1,1],"device":0,"stream":7,"compiled_by":"[3/0] m__g_3",)"
      R"("compiled_by_id":"3/0","correlation":42,"attached":true,"bytes":5,"other":{"x":[1,"]"]},"s":"a\"b"})";
  const Padded p(
      R"({"ph":"X","name":"a\"b\u00e9","cat":"cuda","pid":"Spans","tid":7,"ts":23638621744.897,)"
      R"("dur":"2","id":"0x1f","bind_id":12,"bp":"e","s":"t","args":)" +
          args + "}",
      77);
  EventDecoder d;
  DecodedEvent ev;
  std::string error;
  ASSERT_TRUE(d.decode(p.ev, &ev, &error)) << error;
  EXPECT_EQ(ev.offset, 77u);
  EXPECT_EQ(ev.ph, "X");
  EXPECT_EQ(ev.name, "a\"b\xc3\xa9");
  EXPECT_EQ(ev.cat, "cuda");
  ASSERT_TRUE(ev.has_pid);
  EXPECT_TRUE(ev.pid.is_string);
  EXPECT_EQ(ev.pid.text, "Spans");
  ASSERT_TRUE(ev.has_tid);
  EXPECT_FALSE(ev.tid.is_string);
  EXPECT_EQ(ev.tid.number, 7);
  EXPECT_TRUE(ev.has_ts);
  EXPECT_EQ(ev.ts_ns, 23638621744897);
  EXPECT_TRUE(ev.has_dur);
  EXPECT_EQ(ev.dur_ns, 2000);
  EXPECT_EQ(ev.id, "\"0x1f\"");
  EXPECT_EQ(ev.bind_id, "12");
  EXPECT_EQ(ev.bp, "e");
  EXPECT_EQ(ev.scope, "t");
  EXPECT_TRUE(ev.has_args);
  EXPECT_EQ(ev.args_json(), args);
  EXPECT_TRUE(ev.has_compile_id);
  EXPECT_EQ(ev.compile_id, "0/1");
  EXPECT_EQ(ev.arg_name, "n");
  EXPECT_EQ(ev.compiled_by, "[3/0] m__g_3");
  EXPECT_EQ(ev.compiled_by_id, "3/0");
  EXPECT_TRUE(ev.has_correlation);
  EXPECT_EQ(ev.correlation, 42);
  EXPECT_TRUE(ev.has_device);
  EXPECT_TRUE(ev.has_stream);
  EXPECT_TRUE(ev.has_grid);
  EXPECT_TRUE(ev.has_bytes);
  EXPECT_TRUE(ev.attached);
  EXPECT_EQ(d.fields_ignored(), 0u);

  std::string_view raw;
  ASSERT_TRUE(d.arg(ev, "other", &raw));
  EXPECT_EQ(raw, R"({"x":[1,"]"]})");
  ASSERT_TRUE(d.arg(ev, "correlation", &raw));
  EXPECT_EQ(raw, "42");
  ASSERT_TRUE(d.arg(ev, "s", &raw));
  EXPECT_EQ(raw, R"("a\"b")");
  std::string s;
  ASSERT_TRUE(d.arg_string(ev, "s", &s));
  EXPECT_EQ(s, "a\"b");
  EXPECT_FALSE(d.arg(ev, "missing", &raw));
  EXPECT_FALSE(d.arg_string(ev, "grid", &s));
}

TEST(EventDecoder, CounterCompileIdBesideArgsAndNumericIds) {
  const Padded p(
      R"({"ph":"C","name":"q","ts":1,"pid":-5,"tid":1.5,"compile_id":"2/0","args":{"value":3},"id2":{"local":"0x2"}})");
  EventDecoder d;
  DecodedEvent ev;
  std::string error;
  ASSERT_TRUE(d.decode(p.ev, &ev, &error)) << error;
  EXPECT_EQ(ev.compile_id, "2/0");
  EXPECT_TRUE(ev.has_compile_id);
  EXPECT_EQ(ev.pid.number, -5);
  EXPECT_FALSE(ev.pid.is_string);
  EXPECT_TRUE(ev.tid.is_string);  // not an integer: kept as its text
  EXPECT_EQ(ev.tid.text, "1.5");
  EXPECT_EQ(ev.id, R"({"local":"0x2"})");
  EXPECT_FALSE(ev.has_dur);
}

TEST(EventDecoder, FieldsOfAnUnexpectedTypeAreIgnoredAndCounted) {
  const Padded p(
      R"({"ph":5,"name":["x"],"pid":true,"tid":null,"ts":"abc","dur":{},"args":[1],"cat":"ok"})");
  EventDecoder d;
  DecodedEvent ev;
  std::string error;
  ASSERT_TRUE(d.decode(p.ev, &ev, &error)) << error;
  EXPECT_EQ(ev.ph, "");
  EXPECT_EQ(ev.name, "");
  EXPECT_FALSE(ev.has_pid);
  EXPECT_FALSE(ev.has_tid);
  EXPECT_FALSE(ev.has_ts);
  EXPECT_FALSE(ev.has_dur);
  EXPECT_FALSE(ev.has_args);
  EXPECT_EQ(ev.cat, "ok");
  EXPECT_EQ(d.fields_ignored(), 7u);
}

TEST(EventDecoder, InvalidJsonIsAnErrorWithTheEventOffset) {
  EventDecoder d;
  DecodedEvent ev;
  // (On Demand validates what it walks: a bad scalar in a field the decoder
  // skips, {"x":tru}, may pass, counted in fields_ignored when it is a field
  // the decoder reads.)
  for (const char* bad : {R"({"ph":"X",})", R"({"ph" "X"})", R"({"ph":"X" "name":"a"})",
                          R"({"ph":"X"}})", "{\"a\":\"\xff\"}"}) {
    const Padded p(bad, 1234);
    std::string error;
    EXPECT_FALSE(d.decode(p.ev, &ev, &error)) << bad;
    EXPECT_EQ(error.rfind("byte 1234: event is not valid JSON: ", 0), 0u) << bad << " -> " << error;
  }
  // The decoder is usable after an error.
  const Padded ok(R"({"ph":"B","ts":5})");
  std::string error;
  ASSERT_TRUE(d.decode(ok.ev, &ev, &error)) << error;
  EXPECT_EQ(ev.ph, "B");
  EXPECT_EQ(ev.ts_ns, 5000);
}

TEST(EventDecoder, DuplicateIdKeysTheLastOneWinsWhole) {
  EventDecoder d;
  DecodedEvent ev;
  std::string error;
  const Padded a(R"({"ph":"X","pid":"x","pid":1,"tid":2,"tid":"t"})");
  ASSERT_TRUE(d.decode(a.ev, &ev, &error)) << error;
  ASSERT_TRUE(ev.has_pid);
  EXPECT_FALSE(ev.pid.is_string);  // the number, not the string's type kept
  EXPECT_EQ(ev.pid.number, 1);
  ASSERT_TRUE(ev.has_tid);
  EXPECT_TRUE(ev.tid.is_string);
  EXPECT_EQ(ev.tid.text, "t");
  EXPECT_EQ(ev.tid.number, 0);
  // A later duplicate of an unexpected type leaves the id missing.
  const Padded b(R"({"ph":"X","pid":"x","pid":true})");
  ASSERT_TRUE(d.decode(b.ev, &ev, &error)) << error;
  EXPECT_FALSE(ev.has_pid);
  EXPECT_FALSE(ev.pid.is_string);
}

// ---- the per-event size limit ----

TEST(TraceReader, EventLargerThanTheLimitIsAnError) {
  const std::string small = R"({"ph":"X","name":"a"})";                             // 20 bytes
  const std::string big = R"({"ph":"X","name":")" + std::string(100, 'x') + "\"}";  // 120 bytes
  const std::string content = "[" + small + ",\n" + big + "]";
  const std::size_t big_at = content.find(big);
  const std::string path = write_temp("reader_big", content);
  for (std::size_t chunk : kChunks) {
    TraceReader reader(chunk);
    reader.set_max_event_bytes(64);
    std::vector<std::string> events;
    std::string error;
    EXPECT_FALSE(reader.read(
        path,
        [&](const RawEvent& e) {
          events.emplace_back(e.json);
          return true;
        },
        nullptr, &error))
        << chunk;
    EXPECT_EQ(error, path + ": byte " + std::to_string(big_at) + ": an event larger than 64 bytes")
        << chunk;
    EXPECT_EQ(events, std::vector<std::string>{small}) << chunk;
    // At exactly its size the event is read.
    reader.set_max_event_bytes(big.size());
    events.clear();
    EXPECT_TRUE(reader.read(
        path,
        [&](const RawEvent& e) {
          events.emplace_back(e.json);
          return true;
        },
        nullptr, &error))
        << chunk << ": " << error;
    EXPECT_EQ(events, (std::vector<std::string>{small, big})) << chunk;
  }
  // A top-level member and a long scalar are bounded too; the default is 256 MiB.
  TraceReader reader;
  EXPECT_EQ(reader.max_event_bytes(), std::size_t{256} << 20);
  reader.set_max_event_bytes(16);
  std::string error;
  const std::string obj =
      write_temp("reader_big_member", R"({"otherData":{"k":"0123456789abcdef"},"traceEvents":[]})");
  EXPECT_FALSE(reader.read(
      obj, [](const RawEvent&) { return true; }, nullptr, &error));
  EXPECT_EQ(error, obj + ": byte 13: a top-level member larger than 16 bytes");
  const std::string num =
      write_temp("reader_big_number", R"({"n":12345678901234567890,"traceEvents":[]})");
  EXPECT_FALSE(reader.read(
      num, [](const RawEvent&) { return true; }, nullptr, &error));
  EXPECT_EQ(error, num + ": byte 5: a top-level member larger than 16 bytes");
  reader.set_max_event_bytes(std::size_t{1} << 20);
  const std::string mib =
      write_temp("reader_big_mib", "[{\"a\":\"" + std::string((1 << 20) + 1, 'x') + "\"}]");
  EXPECT_FALSE(reader.read(
      mib, [](const RawEvent&) { return true; }, nullptr, &error));
  EXPECT_EQ(error, mib + ": byte 1: an event larger than 1 MiB");
}

}  // namespace
