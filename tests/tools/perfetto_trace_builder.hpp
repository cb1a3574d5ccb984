// A jitscope-like Perfetto trace for the tools' tests, built with
// perfetto_encoder.hpp: each packet with the JSON events the reader must
// hand over for it (docs/perfetto-format.md's mapping, the JSON writer's
// spelling). Used by perfetto_reader_test.cpp and perfetto_tools_test.cpp.
#pragma once

#include "perfetto_encoder.hpp"

#include <string>
#include <vector>

namespace jitscope::testing::pfenc {

struct Step {
  Msg packet;
  std::vector<std::string> events;  // what the reader hands over for it
};

inline Msg on_sequence(std::uint32_t seq) {
  return Msg().varint(pf::packet::kTrustedPacketSequenceId, seq);
}
inline Msg clock_reading(std::uint32_t id, std::uint64_t ts, bool incremental = false,
                         std::uint64_t multiplier = 0) {
  Msg c;
  c.varint(pf::clock::kClockId, id).varint(pf::clock::kTimestamp, ts);
  if (incremental) c.varint(pf::clock::kIsIncremental, 1);
  if (multiplier != 0) c.varint(pf::clock::kUnitMultiplierNs, multiplier);
  return c;
}
// The process sequence's first packet: MONOTONIC = 1 ms at BOOTTIME = 5 ms.
inline Msg process_head() {
  Msg snap;
  snap.varint(pf::clock::kPrimaryTraceClock, pf::clock::kMonotonic)
      .msg(pf::clock::kClocks, clock_reading(pf::clock::kMonotonic, 1'000'000))
      .msg(pf::clock::kClocks, clock_reading(pf::clock::kBoottime, 5'000'000))
      .msg(pf::clock::kClocks, clock_reading(pf::clock::kRealtime, 1'700'000'000'000'000'000));
  return on_sequence(1)
      .varint(pf::packet::kSequenceFlags, pf::packet::kSeqIncrementalStateCleared)
      .varint(pf::packet::kFirstPacketOnSequence, 1)
      .msg(pf::packet::kTracePacketDefaults,
           Msg().varint(pf::defaults::kTimestampClockId, pf::clock::kMonotonic))
      .msg(pf::packet::kClockSnapshot, snap);
}
// A thread sequence's first packet: clock 64 (incremental, `multiplier` ns
// per unit) is 0 at MONOTONIC `monotonic_ns`; events go to `track`.
inline Msg thread_head(std::uint32_t seq, std::uint64_t track, std::uint64_t monotonic_ns,
                       std::uint64_t multiplier = 0) {
  Msg snap;
  snap.msg(pf::clock::kClocks, clock_reading(pf::clock::kThreadIncremental, 0, true, multiplier))
      .msg(pf::clock::kClocks, clock_reading(pf::clock::kMonotonic, monotonic_ns));
  return on_sequence(seq)
      .varint(pf::packet::kSequenceFlags, pf::packet::kSeqIncrementalStateCleared)
      .msg(pf::packet::kTracePacketDefaults,
           Msg()
               .varint(pf::defaults::kTimestampClockId, pf::clock::kThreadIncremental)
               .msg(pf::defaults::kTrackEventDefaults,
                    Msg().varint(pf::defaults::kTrackUuid, track)))
      .msg(pf::packet::kClockSnapshot, snap);
}
inline Msg descriptor(const Msg& track) {
  return on_sequence(1).msg(pf::packet::kTrackDescriptor, track);
}
// A packet of `seq` at `ts` (a delta on a thread sequence) holding `event`.
inline Msg event_at(std::uint32_t seq, std::uint64_t ts, const Msg& event,
                    const Msg* interned = nullptr) {
  Msg p = on_sequence(seq);
  p.varint(pf::packet::kTimestamp, ts);
  if (seq != 1) p.varint(pf::packet::kSequenceFlags, pf::packet::kSeqNeedsIncrementalState);
  if (interned != nullptr) p.msg(pf::packet::kInternedData, *interned);
  return p.msg(pf::packet::kTrackEvent, event);
}
inline Msg typed(std::uint64_t type) { return Msg().varint(pf::event::kType, type); }

// Every kind of event, with `noise` unknown fields sprinkled in (they must
// change nothing).
inline std::vector<Step> every_kind(bool noise = false) {
  namespace ev = pf::event;
  namespace an = pf::annotation;
  std::vector<Step> s;
  auto add = [&](Msg p, std::vector<std::string> events = {}) {
    if (noise) p.varint(900, 1).bytes(901, "zz").fixed32(902, 5).fixed64(903, 6);
    s.push_back({std::move(p), std::move(events)});
  };
  auto noisy = [&](Msg m) {
    if (noise) m.varint(1000, 3).bytes(1001, "q");
    return m;
  };
  add(process_head());
  add(descriptor(process_track(1, 42, "app")),
      {R"({"ph":"M","name":"process_name","pid":42,"tid":0,"args":{"name":"app"}})"});
  add(descriptor(noisy(thread_track(2, 1, 42, 7, "main"))),
      {R"({"ph":"M","name":"thread_name","pid":42,"tid":7,"args":{"name":"main"}})"});
  add(descriptor(named_track(3, 1, "jitscope.dropped_events", true)));
  add(descriptor(named_track(4, 2, "MyDomain")));
  add(descriptor(process_track(10, 10000042, "GPU 0")),
      {R"({"ph":"M","name":"process_name","pid":10000042,"tid":0,"args":{"name":"GPU 0"}})"});
  add(descriptor(thread_track(11, 10, 10000042, 13, "stream 13")),
      {R"({"ph":"M","name":"thread_name","pid":10000042,"tid":13,"args":{"name":"stream 13"}})"});
  add(thread_head(2, 2, 2'000'000));
  {
    Msg interned;
    intern(interned, pf::interned::kEventNames, 1, "compile");
    intern(interned, pf::interned::kEventCategories, 1, "jitscope");
    intern(interned, pf::interned::kDebugAnnotationNames, 1, "n");
    Msg b = typed(ev::kSliceBegin);
    b.varint(ev::kNameIid, 1).varint(ev::kCategoryIids, 1).fixed64(ev::kFlowIds, 77);
    b.msg(ev::kDebugAnnotations, noisy(Msg().varint(an::kNameIid, 1).varint(an::kIntValue, 5)));
    add(event_at(2, 10, noisy(b), &interned),
        {R"({"ph":"s","cat":"gpu","name":"launch","id":77,"ts":2000.010,"pid":42,"tid":7})"});
  }
  add(event_at(2, 5,
               typed(ev::kSliceBegin)
                   .bytes(ev::kName, "inner")
                   .bytes(ev::kCategories, "phase")
                   .msg(ev::kDebugAnnotations, arg_string("s", "q\"x\n"))));
  add(event_at(2, 100,
               typed(ev::kSliceEnd).msg(ev::kDebugAnnotations, arg_bool("incomplete", true))),
      {R"({"ph":"X","cat":"phase","name":"inner","ts":2000.015,"dur":0.100,"pid":42,"tid":7,)"
       R"("args":{"s":"q\"x\n","incomplete":true}})"});
  add(event_at(2, 1000, typed(ev::kSliceEnd)),
      {R"({"ph":"X","cat":"jitscope","name":"compile","ts":2000.010,"dur":1.105,"pid":42,"tid":7,"args":{"n":5}})"});
  add(event_at(2, 5, typed(ev::kInstant).bytes(ev::kName, "mark").varint(ev::kCategoryIids, 1)),
      {R"({"ph":"I","s":"t","cat":"jitscope","name":"mark","ts":2001.120,"pid":42,"tid":7})"});
  add(event_at(2, 10, typed(ev::kSliceBegin).varint(ev::kTrackUuid, 4).bytes(ev::kName, "range")));
  add(event_at(2, 10, typed(ev::kSliceEnd).varint(ev::kTrackUuid, 4)),
      {R"({"ph":"X","cat":"MyDomain","name":"range","ts":2001.130,"dur":0.010,"pid":42,"tid":7})"});
  add(event_at(1, 3'000'000,
               typed(ev::kCounter)
                   .varint(ev::kTrackUuid, 3)
                   .bytes(ev::kCategories, "jitscope")
                   .varint(ev::kCounterValue, 4)),
      {R"({"ph":"C","cat":"jitscope","name":"jitscope.dropped_events","ts":3000.000,"pid":42,"tid":0,"args":{"value":4}})"});
  add(event_at(1, 3'000'500,
               typed(ev::kCounter).varint(ev::kTrackUuid, 3).dbl(ev::kDoubleCounterValue, 2.5)),
      {R"({"ph":"C","name":"jitscope.dropped_events","ts":3000.500,"pid":42,"tid":0,"args":{"value":2.5}})"});
  add(event_at(1, 3'001'000,
               typed(ev::kInstant)
                   .varint(ev::kTrackUuid, 1)
                   .bytes(ev::kCategories, pf::kMetadataCategory)
                   .bytes(ev::kName, "jitscope_session")
                   .msg(ev::kDebugAnnotations, arg_string("host", "h"))
                   .msg(ev::kDebugAnnotations,
                        arg_dict("clock", {arg_int("a", -1),
                                           arg_array("b", {Msg().varint(an::kUintValue, ~0ull),
                                                           Msg().dbl(an::kDoubleValue, 0.25),
                                                           Msg().varint(an::kBoolValue, 0),
                                                           Msg().bytes(an::kStringValue, "x")})}))),
      {R"({"ph":"M","name":"jitscope_session","pid":42,"tid":0,"args":{"host":"h","clock":)"
       R"({"a":-1,"b":[18446744073709551615,0.25,false,"x"]}}})"});
  add(event_at(1, 3'002'000,
               typed(ev::kInstant)
                   .varint(ev::kTrackUuid, 1)
                   .bytes(ev::kName, "proc_mark")
                   .bytes(ev::kCategories, "jitscope")),
      {R"({"ph":"I","s":"p","cat":"jitscope","name":"proc_mark","ts":3002.000,"pid":42,"tid":0})"});
  {
    Msg packed;  // terminating_flow_ids in the packed form
    for (int i = 0; i < 8; ++i) packed.raw(std::string(1, static_cast<char>(i == 0 ? 77 : 0)));
    add(event_at(1, 3'003'000,
                 typed(ev::kSliceBegin)
                     .varint(ev::kTrackUuid, 11)
                     .bytes(ev::kName, "kernel")
                     .bytes(ev::kCategories, "gpu")
                     .bytes(ev::kTerminatingFlowIds, packed.str())),
        {R"({"ph":"f","cat":"gpu","name":"launch","id":77,"ts":3003.000,"pid":10000042,"tid":13,"bp":"e"})"});
  }
  add(event_at(1, 3'004'000, typed(ev::kSliceEnd).varint(ev::kTrackUuid, 11)),
      {R"({"ph":"X","cat":"gpu","name":"kernel","ts":3003.000,"dur":1.000,"pid":10000042,"tid":13})"});
  add(descriptor(process_track(1, 42, "app")));  // the same name again: nothing
  add(descriptor(process_track(1, 42, "renamed")),
      {R"({"ph":"M","name":"process_name","pid":42,"tid":0,"args":{"name":"renamed"}})"});
  // On BOOTTIME: 5.0005 ms there is 1.0005 ms on MONOTONIC, the trace's clock.
  add(event_at(1, 5'000'500, typed(ev::kInstant).varint(ev::kTrackUuid, 1).bytes(ev::kName, "boot"))
          .varint(pf::packet::kTimestampClockId, pf::clock::kBoottime),
      {R"({"ph":"I","s":"p","name":"boot","ts":1000.500,"pid":42,"tid":0})"});
  return s;
}

inline std::string trace_of(const std::vector<Step>& steps) {
  std::vector<Msg> packets;
  for (const Step& s : steps) packets.push_back(s.packet);
  return trace(packets);
}

inline std::vector<std::string> events_of(const std::vector<Step>& steps, std::size_t count) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < count && i < steps.size(); ++i) {
    out.insert(out.end(), steps[i].events.begin(), steps[i].events.end());
  }
  return out;
}

}  // namespace jitscope::testing::pfenc
