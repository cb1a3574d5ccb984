// The event decoder's fast path (flat_event.hpp) against simdjson, its
// reference: on every event the fast path takes, both give the same
// fields; what it declines, simdjson decodes (or rejects) as before.
//
// Covered: every event of traces the SDK wrote (JSON, and the protobuf form
// as the reader hands it over), each also cut at every length and with
// each of a set of bytes put at every position; hand-written edge cases
// (escapes, white space, numbers at the edges of what the fast path reads,
// duplicates, types it leaves to simdjson, invalid JSON); that the fast
// path takes nearly all of the SDK's events (it is the report's speed);
// the args the decoder now reads for the report (failed, incomplete,
// unit_key, frame) on both paths.
// Not covered here: speed (bench/report).
#include <event_decoder.hpp>
#include <flat_event.hpp>
#include <trace_reader.hpp>

#include "trace_reader_support.hpp"

#include <jitscope/compile.hpp>
#include <jitscope/jitscope.hpp>

#include <gtest/gtest.h>

#include <algorithm>

#include <cstdint>
#include <string>
#include <vector>

namespace {

using jitscope::tools::DecodedEvent;
using jitscope::tools::EventDecoder;
using jitscope::tools::RawEvent;

// A RawEvent over `text` with the padding the reader guarantees.
struct NulPadded {
  std::string buf;
  RawEvent ev;
  explicit NulPadded(const std::string& text)
      : buf(text + std::string(jitscope::tools::kJsonPadding, '\0')),
        ev{std::string_view(buf.data(), text.size()), 0} {}
};

// Every field, string views by content and pointers by offset in the event.
std::string fields(const DecodedEvent& e, const RawEvent& raw) {
  auto id = [](bool has, const jitscope::tools::TraceId& t) {
    return !has          ? std::string("-")
           : t.is_string ? "s:" + std::string(t.text)
                         : std::to_string(t.number);
  };
  auto at = [&](const char* p) {
    return p == nullptr ? std::string("null") : std::to_string(p - raw.json.data());
  };
  std::string s;
  for (std::string_view v : {e.ph, e.name, e.cat, e.id, e.bind_id, e.bp, e.scope, e.compile_id,
                             e.arg_name, e.compiled_by, e.compiled_by_id, e.unit_key, e.frame}) {
    s += std::string(v) + "|";
  }
  s += id(e.has_pid, e.pid) + "|" + id(e.has_tid, e.tid) + "|";
  s += (e.has_ts ? std::to_string(e.ts_ns) : "-") + "|" +
       (e.has_dur ? std::to_string(e.dur_ns) : "-");
  s += "|" + std::to_string(e.has_correlation ? e.correlation : -1);
  for (bool b : {e.has_args, e.has_compile_id, e.has_device, e.has_stream, e.has_grid, e.has_bytes,
                 e.attached, e.failed, e.incomplete}) {
    s += b ? '1' : '0';
  }
  return s + "|" + at(e.args_begin_) + "|" + at(e.event_end_);
}

struct Differential {
  EventDecoder general{EventDecoder::Path::kGeneral};
  std::size_t taken = 0, seen = 0;

  // Decodes `text` both ways; returns whether the fast path took it.
  bool check(const std::string& text) {
    const NulPadded p(text);
    DecodedEvent fast, slow;
    std::string error;
    ++seen;
    const bool slow_ok = general.decode(p.ev, &slow, &error);
    if (!jitscope::tools::decode_flat(p.ev, &fast)) return false;
    ++taken;
    EXPECT_TRUE(slow_ok) << "the fast path took what simdjson refuses: " << text << " (" << error
                         << ")";
    if (slow_ok) EXPECT_EQ(fields(fast, p.ev), fields(slow, p.ev)) << text;
    return true;
  }
};

// The events of a trace the SDK wrote, as the reader hands them over.
std::vector<std::string> sdk_events(const std::string& stem, jitscope::TraceFormat format) {
  const std::string path = jitscope::testing::write_sdk_trace(stem, format);
  std::vector<std::string> out;
  jitscope::tools::TraceReader reader;
  std::string error;
  EXPECT_TRUE(reader.read(
      path,
      [&](const RawEvent& e) {
        out.emplace_back(e.json);
        return true;
      },
      nullptr, &error))
      << error;
  return out;
}

TEST(FlatEvent, AgreesWithSimdjsonOnEverySdkEventCutAndChanged) {
  for (auto format : {jitscope::TraceFormat::kJson, jitscope::TraceFormat::kPerfetto}) {
    const std::vector<std::string> events =
        sdk_events(format == jitscope::TraceFormat::kJson ? "flat_json" : "flat_pf", format);
    ASSERT_GE(events.size(), 30u);
    Differential d;
    for (const std::string& e : events) d.check(e);
    // The SDK's own events take the fast path (metadata with nested args,
    // escaped or non-ASCII text do not).
    EXPECT_GE(d.taken * 10, d.seen * 8) << d.taken << " of " << d.seen;
    for (const std::string& e : events) {
      for (std::size_t n = 0; n < e.size(); ++n) d.check(e.substr(0, n));
      for (std::size_t i = 0; i < e.size(); ++i) {
        for (char c : {' ', '"', '\\', '}', '{', ',', ':', '0', '9', '-', '.', 'e', 't', '\x01',
                       '\x80', '['}) {
          std::string changed = e;
          changed[i] = c;
          d.check(changed);
        }
      }
    }
  }
}

TEST(FlatEvent, EdgeCasesAgreeAndInvalidJsonIsLeftToSimdjson) {
  Differential d;
  // Taken by the fast path (and equal to simdjson's reading).
  for (
      const char* taken : {
          R"({})",
          R"({"ph":"X","ts":0,"dur":0})",
          R"({"ts":-0.5,"dur":1.25,"pid":-7,"tid":"main"})",
          R"({"ts":999999999999999.999,"pid":999999999999999999})",
          R"({"ph":"i","s":"t","id":"0x1f","bind_id":12,"bp":"e","id2":7})",
          R"({"compile_id":"3/1","a_long_key_x":1,"":2})",
          R"({"ph":"X","args":{}})",
          R"({"args":{"failed":true,"incomplete":false,"unit_key":"k","frame":"f","attached":true}})",
          R"({"args":{"correlation":-3,"device":null,"stream":"s","grid":1,"bytes":2.5}})",
          R"({"args":{"failed":false,"failed":true,"compile_id":"","name":"n"}})",
          R"({"pid":"x","pid":1,"tid":2,"tid":"t"})",
          // Times past the plain form: read by parse_us_to_ns, as simdjson's path does.
          R"({"ts":1.5e3,"dur":1.2345})",
          R"({"ts":1234567890123456,"dur":-0.0005})",
      }) {
    EXPECT_TRUE(d.check(taken)) << taken;
  }
  // Declined: simdjson's to read (escapes, non-ASCII, white space, nested
  // values, numbers past the fast forms, fields of another type), or to refuse.
  for (const char* declined : {
           R"({"name":"a\"b"})",
           "{\"name\":\"\xc3\xa9\"}",
           R"({ "ph":"X"})",
           R"({"ph" :"X"})",
           R"({"ph":"X" })",
           R"({"id2":{"local":1}})",
           R"({"args":{"grid":[1,1,1]}})",
           R"({"args":{"cupti":{"state":"off"}}})",
           R"({"args":[]})",
           R"({"args":5})",
           R"({"ts":"12.5"})",
           R"({"pid":1.5})",
           R"({"pid":1234567890123456789})",
           R"({"pid":true})",
           R"({"ph":1})",
           R"({"args":{"correlation":1.5}})",
           R"({"args":{"unit_key":7}})",
           // Not JSON at all.
           R"({"ph":"X",})",
           R"({"ph" "X"})",
           R"({"ph":"X"}})",
           R"({"ts":01})",
           R"({"ts":1.})",
           R"({"ts":-})",
           R"({"a":tru})",
           R"({"a":nul})",
           R"({"a":"x})",
           R"({"a":1)",
           R"({,})",
           R"({"a":1,,"b":2})",
           "{\"a\":\"\x01\"}",
           R"([])",
           R"("x")",
           "",
       }) {
    EXPECT_FALSE(d.check(declined)) << declined;
  }
}

// Numbers are read eight digits at a time: every length of an integer
// part and a fraction, each digit different, agree with simdjson's
// reading (or are left to it: past 18 digits, past 15 with a fraction).
TEST(FlatEvent, NumbersOfEveryLengthAgree) {
  Differential d;
  const std::string digits = "9876543210123456789012345";
  std::size_t taken = 0;
  for (std::size_t whole = 1; whole <= 21; ++whole) {
    for (std::size_t frac = 0; frac <= 10; ++frac) {
      for (const char* sign : {"", "-"}) {
        std::string number = sign + digits.substr(digits.size() - whole);
        if (frac > 0) number += "." + digits.substr(0, frac);
        for (const char* key : {"ts", "dur", "pid", "tid"}) {
          const std::string text = std::string(R"({")") + key + R"(":)" + number + "}";
          taken += d.check(text) ? 1 : 0;
          if (frac == 0) taken += d.check(R"({"args":{"correlation":)" + number + "}}") ? 1 : 0;
          if (::testing::Test::HasFailure()) return;
        }
      }
    }
  }
  // ts and dur: up to 15 digits with up to 3 decimals, and the rest as
  // parse_us_to_ns reads them; pid and tid: integers up to 18 digits.
  EXPECT_GT(taken, 400u);
  // A number that runs to the end of the event, digits after it in the buffer.
  const std::string cut = R"({"pid":12345678)";
  NulPadded p(cut);
  std::fill(p.buf.begin() + static_cast<std::ptrdiff_t>(cut.size()), p.buf.end(), '7');
  DecodedEvent ev;
  EXPECT_FALSE(jitscope::tools::decode_flat(p.ev, &ev));
}

TEST(FlatEvent, BothPathsReadTheArgsTheReportUses) {
  for (auto path : {EventDecoder::Path::kFastest, EventDecoder::Path::kGeneral}) {
    EventDecoder decoder(path);
    const NulPadded p(
        R"({"ph":"X","cat":"compile_unit","args":{"unit_key":"kernel","frame":"f7","failed":true,)"
        R"("incomplete":true,"compile_id":"2/0"}})");
    DecodedEvent ev;
    std::string error;
    ASSERT_TRUE(decoder.decode(p.ev, &ev, &error)) << error;
    EXPECT_EQ(ev.unit_key, "kernel");
    EXPECT_EQ(ev.frame, "f7");
    EXPECT_TRUE(ev.failed);
    EXPECT_TRUE(ev.incomplete);
    EXPECT_EQ(ev.compile_id, "2/0");
    // Other tools' args may use these keys for anything: not strings, they
    // are left empty and not counted as fields of an unexpected type.
    const NulPadded other(R"({"ph":"X","args":{"frame":3,"unit_key":{"a":1}}})");
    ASSERT_TRUE(decoder.decode(other.ev, &ev, &error)) << error;
    EXPECT_TRUE(ev.frame.empty());
    EXPECT_TRUE(ev.unit_key.empty());
    EXPECT_EQ(decoder.fields_ignored(), 0u);
  }
}

// arg_integer, the one reading of an integer arg the report's sections
// share (counts, ids, a child's pid, IR sizes): the whole token a number,
// quoted only where asked for.
TEST(FlatEvent, IntegerArgsAreWholeNumbers) {
  EventDecoder decoder;
  const NulPadded p(
      R"({"ph":"X","args":{"n":12,"q":"12","unit":"12ms","half":12.5,"neg":-3,"open":"\"12",)"
      R"("big":18446744073709551615,"over":18446744073709551616,"empty":"","obj":{"a":1}}})");
  DecodedEvent ev;
  std::string error;
  ASSERT_TRUE(decoder.decode(p.ev, &ev, &error)) << error;
  using Quoted = EventDecoder::Quoted;
  const auto i64 = [&](const char* key, Quoted q) {
    std::int64_t v = -99;
    return decoder.arg_integer(ev, key, &v, q) ? std::to_string(v) : std::string("no");
  };
  const auto u64 = [&](const char* key, Quoted q) {
    std::uint64_t v = 99;
    return decoder.arg_integer(ev, key, &v, q) ? std::to_string(v) : std::string("no");
  };
  EXPECT_EQ(i64("n", Quoted::kNo), "12");
  EXPECT_EQ(i64("q", Quoted::kNo), "no");
  EXPECT_EQ(i64("q", Quoted::kToo), "12");
  EXPECT_EQ(i64("neg", Quoted::kNo), "-3");
  EXPECT_EQ(u64("neg", Quoted::kNo), "no");
  EXPECT_EQ(u64("big", Quoted::kNo), "18446744073709551615");
  EXPECT_EQ(i64("big", Quoted::kNo), "no");  // past int64
  EXPECT_EQ(u64("over", Quoted::kNo), "no");
  for (const char* bad : {"unit", "half", "open", "empty", "obj", "absent"}) {
    EXPECT_EQ(i64(bad, Quoted::kToo), "no") << bad;
  }
}

// The decoder clears the event it decodes into (with memset, not `= {}`):
// nothing of an event with every field is left after an empty one, on
// both paths, and after one the fast path declines.
TEST(FlatEvent, EachDecodeStartsFromAnEmptyEvent) {
  const NulPadded full(
      R"({"ph":"X","cat":"c","name":"n","pid":1,"tid":"t","ts":1.5,"dur":2,"id":3,"bind_id":4,)"
      R"("bp":"e","s":"p","compile_id":"0/1","args":{"name":"a","compiled_by":"b",)"
      R"("compiled_by_id":"0/0","correlation":5,"device":0,"stream":1,"grid":2,"bytes":3,)"
      R"("attached":true,"failed":true,"incomplete":true,"unit_key":"k","frame":"f"}})");
  const DecodedEvent empty{};
  for (const char* next : {"{}", R"({ })"}) {  // the fast path's, and simdjson's after a no
    for (auto path : {EventDecoder::Path::kFastest, EventDecoder::Path::kGeneral}) {
      EventDecoder decoder(path);
      DecodedEvent ev;
      std::string error;
      ASSERT_TRUE(decoder.decode(full.ev, &ev, &error)) << error;
      ASSERT_NE(fields(ev, full.ev), fields(empty, full.ev));
      const NulPadded p(next);
      ASSERT_TRUE(decoder.decode(p.ev, &ev, &error)) << error;
      EXPECT_EQ(fields(ev, p.ev), fields(empty, p.ev)) << next;
    }
  }
}

}  // namespace
