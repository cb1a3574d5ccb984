// The protobuf form's args as jitscope-report reads them: the members
// EventDecoder reads on every event (compile_id, name, compiled_by,
// compiled_by_id, unit_key, frame, correlation, device, stream, grid,
// bytes, attached, failed, incomplete) taken as the decoder noted them
// while writing the args' text (RawEvent::args_read), not parsed from that
// text; and the last args kept for the next event with the same
// annotations (PerfettoDecoder's ArgsMemo).
//
// Covered: every such key with a value of every kind, on an instant, a
// slice's BEGIN, its END, both (each first, and after an int), and given
// twice; which of them are taken
// as noted and which are left to the parse; kept args across a redefined
// interned string, a sequence reset, another sequence, and an unknown iid
// (counted each time). The JSON text is the reference, and for the kept
// args the compile ids each event must have.
// Not covered here: speed (bench/report/units_bench.sh).
#include "perfetto_fields_support.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace {

using namespace jitscope::testing::pfenc;
using jitscope::testing::Decoded;
using jitscope::testing::expect_same;
using jitscope::testing::write_trace;
namespace ev = pf::event;
namespace an = pf::annotation;

// A packet that clears sequence `seq` (absolute times, events on thread
// track 2) and defines `interned`.
Msg cleared_sequence(std::uint32_t seq, const Msg& interned) {
  return on_sequence(seq)
      .varint(pf::packet::kSequenceFlags, pf::packet::kSeqIncrementalStateCleared)
      .msg(pf::packet::kTracePacketDefaults,
           Msg().msg(pf::defaults::kTrackEventDefaults, Msg().varint(pf::defaults::kTrackUuid, 2)))
      .msg(pf::packet::kInternedData, interned);
}

// Arg name 1 "compile_id" and string value 1 `value`.
Msg compile_id_strings(const char* value) {
  Msg interned;
  intern(interned, pf::interned::kDebugAnnotationNames, 1, "compile_id");
  intern(interned, pf::interned::kDebugAnnotationStringValues, 1, value);
  return interned;
}

// Thread track 2 and its sequence (2), with its strings: arg name 1
// "compile_id"; string values 1 "7/0" and 2 "q\"".
std::vector<Msg> thread_with_strings() {
  Msg interned = compile_id_strings("7/0");
  intern(interned, pf::interned::kDebugAnnotationStringValues, 2, "q\"");
  return {descriptor(thread_track(2, 1, 5, 6, "t")), cleared_sequence(2, interned)};
}

struct Value {
  const char* what;
  std::function<Msg(const std::string& key)> arg;
  bool plain_string;  // a string whose JSON text has no escapes
  bool is_double;
  bool is_string() const {
    return plain_string || std::string_view(what).find("escape") != std::string_view::npos ||
           std::string_view(what) == "a control byte";
  }
};

std::vector<Value> every_value() {
  return {
      {"a plain string", [](const std::string& k) { return arg_string(k, "3/1"); }, true, false},
      {"an empty string", [](const std::string& k) { return arg_string(k, ""); }, true, false},
      {"a string to escape", [](const std::string& k) { return arg_string(k, "a\"b\\"); }, false,
       false},
      {"a control byte", [](const std::string& k) { return arg_string(k, "x\x01"); }, false, false},
      {"invalid UTF-8", [](const std::string& k) { return arg_string(k, "v\xFF"); }, true, false},
      {"a long string", [](const std::string& k) { return arg_string(k, std::string(100, 'k')); },
       true, false},
      {"an interned string",
       [](const std::string& k) {
         return Msg().bytes(an::kName, k).varint(an::kStringValueIid, 1);
       },
       true, false},
      {"an interned string to escape",
       [](const std::string& k) {
         return Msg().bytes(an::kName, k).varint(an::kStringValueIid, 2);
       },
       false, false},
      {"an unknown interned string",
       [](const std::string& k) {
         return Msg().bytes(an::kName, k).varint(an::kStringValueIid, 99);
       },
       true, false},
      {"an int", [](const std::string& k) { return arg_int(k, -7); }, false, false},
      {"a uint", [](const std::string& k) { return arg_uint(k, 5); }, false, false},
      {"a uint past int64",
       [](const std::string& k) { return arg_uint(k, (std::uint64_t{1} << 63) + 1); }, false,
       false},
      {"true", [](const std::string& k) { return arg_bool(k, true); }, false, false},
      {"false", [](const std::string& k) { return arg_bool(k, false); }, false, false},
      {"a double", [](const std::string& k) { return arg_double(k, 2.0); }, false, true},
      {"a pointer (written as a string)",
       [](const std::string& k) { return Msg().bytes(an::kName, k).varint(an::kPointerValue, 9); },
       true, false},
      {"null", [](const std::string& k) { return Msg().bytes(an::kName, k); }, false, false},
      {"a dict",
       [](const std::string& k) { return arg_dict(k, {arg_string("compile_id", "1/1")}); }, false,
       false},
      {"an array", [](const std::string& k) { return arg_array(k, {arg_bool("", true)}); }, false,
       false},
  };
}

const char* const kReadKeys[] = {
    "compile_id", "name",   "compiled_by", "compiled_by_id", "unit_key", "frame",  "correlation",
    "device",     "stream", "grid",        "bytes",          "attached", "failed", "incomplete"};

// Whether the decoder takes `key` with this value as noted (else EventDecoder
// parses the args' text): strings of the string members only when written
// without escapes, and a correlation unless a double (read by its text).
bool taken_as_noted(const std::string& key, const Value& v) {
  const bool string_member =
      key == "compile_id" || key == "name" || key == "compiled_by" || key == "compiled_by_id";
  if (string_member) return v.plain_string;
  // unit_key and frame of another type are not read (nor counted).
  if (key == "unit_key" || key == "frame") return !v.is_string() || v.plain_string;
  if (key == "correlation") return !v.is_double;
  return true;  // by presence, or true or not
}

TEST(PerfettoArgsRead, EveryReadArgOfEveryKindDecodesAsItsText) {
  const Value an_int = every_value()[9];
  ASSERT_EQ(std::string(an_int.what), "an int");
  for (const char* key : kReadKeys) {
    for (const Value& v : every_value()) {
      SCOPED_TRACE(std::string(key) + " with " + v.what);
      std::vector<Msg> p = thread_with_strings();
      const Msg arg = v.arg(key);
      const Msg other = arg_string(key, "9/9");
      // An instant; a BEGIN's; an END's; both; twice in one event, each order.
      p.push_back(event_at(
          2, 10, typed(ev::kInstant).bytes(ev::kName, "i").msg(ev::kDebugAnnotations, arg)));
      p.push_back(event_at(
          2, 20, typed(ev::kSliceBegin).bytes(ev::kName, "b").msg(ev::kDebugAnnotations, arg)));
      p.push_back(event_at(2, 21, typed(ev::kSliceEnd)));
      p.push_back(event_at(2, 30, typed(ev::kSliceBegin).bytes(ev::kName, "e")));
      p.push_back(event_at(2, 31, typed(ev::kSliceEnd).msg(ev::kDebugAnnotations, arg)));
      p.push_back(event_at(
          2, 40, typed(ev::kSliceBegin).bytes(ev::kName, "be").msg(ev::kDebugAnnotations, other)));
      p.push_back(event_at(2, 41, typed(ev::kSliceEnd).msg(ev::kDebugAnnotations, arg)));
      p.push_back(event_at(
          2, 42, typed(ev::kSliceBegin).bytes(ev::kName, "eb").msg(ev::kDebugAnnotations, arg)));
      p.push_back(event_at(2, 43, typed(ev::kSliceEnd).msg(ev::kDebugAnnotations, other)));
      // An int first, then this value (a correlation that is not an int64
      // keeps the int's value).
      p.push_back(event_at(2, 44,
                           typed(ev::kSliceBegin)
                               .bytes(ev::kName, "ib")
                               .msg(ev::kDebugAnnotations, arg_int(key, 11))));
      p.push_back(event_at(2, 45, typed(ev::kSliceEnd).msg(ev::kDebugAnnotations, arg)));
      p.push_back(event_at(2, 50,
                           typed(ev::kInstant)
                               .bytes(ev::kName, "twice")
                               .msg(ev::kDebugAnnotations, arg)
                               .msg(ev::kDebugAnnotations, other)));
      p.push_back(event_at(2, 60,
                           typed(ev::kInstant)
                               .bytes(ev::kName, "twice")
                               .msg(ev::kDebugAnnotations, other)
                               .msg(ev::kDebugAnnotations, arg)));
      const Decoded d = expect_same(write_trace(trace(p)));
      ASSERT_TRUE(d.ok) << d.error;
      // The thread's name (metadata, written once a thread and parsed), then the eight.
      ASSERT_EQ(d.args_read.size(), 9u);
      // "other" is a plain string: it changes nothing of which way is taken.
      for (std::size_t i = 1; i < d.args_read.size(); ++i) {
        const bool noted = taken_as_noted(key, v) && (i != 6 || taken_as_noted(key, an_int));
        EXPECT_EQ(d.args_read[i], noted) << "event " << i;
      }
      if (::testing::Test::HasFailure()) return;
    }
  }
}

// A GPU kernel's members (8) are noted; more than the decoder notes (8)
// are parsed.
TEST(PerfettoArgsRead, AKernelsMembersAreNotedAndMoreAreParsed) {
  std::vector<Msg> p = thread_with_strings();
  Msg kernel = typed(ev::kInstant).bytes(ev::kName, "kernel");
  for (const char* key : {"device", "stream", "grid", "bytes"}) {
    kernel.msg(ev::kDebugAnnotations, arg_int(key, 1));
  }
  kernel.msg(ev::kDebugAnnotations, arg_int("correlation", 77))
      .msg(ev::kDebugAnnotations, arg_string("compile_id", "4/0"))
      .msg(ev::kDebugAnnotations, arg_string("compiled_by", "[4/0] k"))
      .msg(ev::kDebugAnnotations, arg_string("compiled_by_id", "4/0"));
  p.push_back(event_at(2, 10, kernel));
  p.push_back(event_at(2, 20, Msg(kernel).msg(ev::kDebugAnnotations, arg_bool("failed", true))));
  const Decoded d = expect_same(write_trace(trace(p)));
  ASSERT_TRUE(d.ok) << d.error;
  ASSERT_EQ(d.args_read.size(), 3u);  // the thread's name, then the two
  EXPECT_TRUE(d.args_read[1]);
  EXPECT_FALSE(d.args_read[2]);
  EXPECT_EQ(d.compile_ids[1], "4/0");
  EXPECT_EQ(d.compile_ids[2], "4/0");
}

// One BEGIN's annotations, the same bytes each time: compile_id by interned
// name 1 and interned value 1.
Msg begin_by_iids(const char* name) {
  return typed(ev::kSliceBegin)
      .bytes(ev::kName, name)
      .msg(ev::kDebugAnnotations, Msg().varint(an::kNameIid, 1).varint(an::kStringValueIid, 1));
}

TEST(PerfettoArgsRead, KeptArgsFollowRedefinedStringsResetsAndSequences) {
  std::vector<Msg> p = thread_with_strings();
  auto span = [&](std::uint32_t seq, std::uint64_t ts, const Msg* interned = nullptr) {
    p.push_back(event_at(seq, ts, begin_by_iids("s"), interned));
    p.push_back(event_at(seq, ts + 1, typed(ev::kSliceEnd)));
  };
  span(2, 10);
  span(2, 20);  // the same annotations: kept args
  // Value 1 redefined on the sequence: the same bytes now say 8/0.
  Msg redefine;
  intern(redefine, pf::interned::kDebugAnnotationStringValues, 1, "8/0");
  span(2, 30, &redefine);
  span(2, 40);
  // The sequence reset, then value 1 defined again as 6/0.
  p.push_back(cleared_sequence(2, compile_id_strings("6/0")));
  span(2, 50);
  // Another sequence on the same track, whose value 1 is 5/0.
  p.push_back(cleared_sequence(3, compile_id_strings("5/0")));
  span(3, 60);
  span(2, 70);
  // An unknown iid, twice: counted twice.
  for (const std::uint64_t ts : {80, 90}) {
    p.push_back(event_at(2, ts,
                         typed(ev::kSliceBegin)
                             .bytes(ev::kName, "u")
                             .msg(ev::kDebugAnnotations,
                                  Msg().varint(an::kNameIid, 1).varint(an::kStringValueIid, 42))));
    p.push_back(event_at(2, ts + 1, typed(ev::kSliceEnd)));
  }
  const Decoded d = expect_same(write_trace(trace(p)));
  ASSERT_TRUE(d.ok) << d.error;
  // The thread's name first (metadata).
  const std::vector<std::string> want = {"",    "7/0", "7/0", "8/0", "8/0",
                                         "6/0", "5/0", "6/0", "",    ""};
  EXPECT_EQ(d.compile_ids, want);
  bool counted_twice = false;
  for (const std::string& w : d.warnings) {
    counted_twice |= w.find("2 interned ids never defined") != std::string::npos;
  }
  EXPECT_TRUE(counted_twice) << ::testing::PrintToString(d.warnings);
}

}  // namespace
