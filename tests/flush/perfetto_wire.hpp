// A test-side reader of the Perfetto form (docs/perfetto-format.md): a
// protobuf wire decoder written apart from the SDK's encoder (it shares only
// base/perfetto_fields.hpp, the field numbers), and a checker that rebuilds
// the JSON form's events from the packets while it checks the contract:
// interned ids defined before use on their sequence, sequence flags, clock
// 64 deltas, descriptors before use, BEGIN/END paired on one track.
// Problems go to `errors` (a test expects it empty).
#pragma once

#include "base/perfetto_fields.hpp"

#include <nlohmann/json.hpp>

#include <bit>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace jitscope::testing::pfwire {

namespace pf = jitscope::detail::pf;
using nlohmann::json;

struct Field {
  std::uint32_t number = 0;
  std::uint32_t type = 0;
  std::uint64_t value = 0;  // varint or fixed64
  std::string_view bytes;   // length-delimited
};

// The fields of one message; false if malformed.
inline bool fields_of(std::string_view m, std::vector<Field>& out) {
  out.clear();
  std::size_t i = 0;
  auto varint = [&](std::uint64_t& v) {
    v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (i >= m.size()) return false;
      const auto b = static_cast<unsigned char>(m[i++]);
      v |= std::uint64_t{b & 0x7Fu} << shift;
      if ((b & 0x80) == 0) return true;
    }
    return false;
  };
  while (i < m.size()) {
    std::uint64_t tag = 0;
    if (!varint(tag)) return false;
    Field f;
    f.number = static_cast<std::uint32_t>(tag >> 3);
    f.type = static_cast<std::uint32_t>(tag & 7);
    if (f.type == 0) {
      if (!varint(f.value)) return false;
    } else if (f.type == 1) {
      if (i + 8 > m.size()) return false;
      for (int k = 0; k < 8; ++k)
        f.value |= std::uint64_t{static_cast<unsigned char>(m[i + k])} << (8 * k);
      i += 8;
    } else if (f.type == 2) {
      std::uint64_t len = 0;
      if (!varint(len) || len > m.size() - i) return false;
      f.bytes = m.substr(i, len);
      i += len;
    } else if (f.type == 5) {
      if (i + 4 > m.size()) return false;
      i += 4;
    } else {
      return false;
    }
    out.push_back(f);
  }
  return true;
}

// The packets of a trace file; `cut`: bytes after the last whole packet.
inline std::vector<std::string_view> packets_of(std::string_view file, bool* cut = nullptr) {
  std::vector<std::string_view> packets;
  std::size_t i = 0;
  if (cut != nullptr) *cut = false;
  while (i < file.size()) {
    std::vector<Field> one;
    // Read one field: tag 0x0a, length, body.
    std::size_t j = i;
    if (static_cast<unsigned char>(file[j++]) != 0x0a) break;
    std::uint64_t len = 0;
    int shift = 0;
    bool ok = false;
    while (j < file.size() && shift < 64) {
      const auto b = static_cast<unsigned char>(file[j++]);
      len |= std::uint64_t{b & 0x7Fu} << shift;
      shift += 7;
      if ((b & 0x80) == 0) {
        ok = true;
        break;
      }
    }
    if (!ok || len > file.size() - j) break;
    packets.push_back(file.substr(j, len));
    i = j + len;
  }
  if (cut != nullptr) *cut = i != file.size();
  return packets;
}

struct Reader {
  struct Track {
    std::int64_t pid = 0, tid = 0;
    bool thread = false, counter = false;
    std::string name;
    std::uint64_t parent = 0;
  };
  struct Sequence {
    bool cleared = false;
    std::map<std::uint64_t, std::string> names, categories, annotations;
    std::uint32_t clock_id = 0;  // from the defaults
    std::uint64_t track = 0;     // from the defaults
    bool incremental = false;
    std::uint64_t clock64 = 0;
  };
  struct Open {
    json event;
  };

  std::vector<std::string> errors;
  std::vector<json> events;  // as the JSON form: X, I, C, M (with ts/dur in ns: "ts_ns", "dur_ns")
  std::map<std::uint64_t, Track> tracks;
  std::map<std::uint32_t, Sequence> sequences;
  std::map<std::uint64_t, std::vector<json>> open;  // per track: the BEGINs not yet ended
  std::set<std::uint64_t> flow_out, flow_in;
  std::size_t packets = 0;
  std::size_t absolute_on_thread = 0;  // a thread's packet on clock 3: time went back
  bool saw_snapshot = false;

  void error(const std::string& e) {
    if (errors.size() < 20) errors.push_back(e);
  }

  json annotation(std::string_view m, Sequence& seq, bool top, std::string* name) {
    std::vector<Field> fs;
    if (!fields_of(m, fs)) {
      error("bad annotation");
      return nullptr;
    }
    json value = nullptr;
    bool dict = false, array = false;
    json d = json::object(), a = json::array();
    for (const Field& f : fs) {
      namespace an = pf::annotation;
      switch (f.number) {
        case an::kNameIid:
          if (!top) error("name_iid in a nested annotation");
          if (!seq.annotations.count(f.value)) error("annotation name iid used before defined");
          *name = seq.annotations[f.value];
          break;
        case an::kName: *name = std::string(f.bytes); break;
        case an::kBoolValue: value = f.value != 0; break;
        case an::kUintValue: value = f.value; break;
        case an::kIntValue: value = static_cast<std::int64_t>(f.value); break;
        case an::kDoubleValue: value = std::bit_cast<double>(f.value); break;
        case an::kStringValue: value = std::string(f.bytes); break;
        case an::kDictEntries: {
          dict = true;
          std::string k;
          json v = annotation(f.bytes, seq, false, &k);
          d[k] = v;
          break;
        }
        case an::kArrayValues: {
          array = true;
          std::string k;
          a.push_back(annotation(f.bytes, seq, false, &k));
          break;
        }
        default: error("unknown annotation field " + std::to_string(f.number));
      }
    }
    if (dict) return d;
    if (array) return a;
    return value;
  }

  void interned(std::string_view m, Sequence& seq) {
    std::vector<Field> fs, entry;
    fields_of(m, fs);
    for (const Field& f : fs) {
      std::map<std::uint64_t, std::string>* table =
          f.number == pf::interned::kEventNames             ? &seq.names
          : f.number == pf::interned::kEventCategories      ? &seq.categories
          : f.number == pf::interned::kDebugAnnotationNames ? &seq.annotations
                                                            : nullptr;
      if (table == nullptr) continue;
      fields_of(f.bytes, entry);
      std::uint64_t iid = 0;
      std::string name;
      for (const Field& e : entry) {
        if (e.number == pf::interned::kIid) iid = e.value;
        if (e.number == pf::interned::kName) name = std::string(e.bytes);
      }
      (*table)[iid] = name;
    }
  }

  void descriptor(std::string_view m) {
    std::vector<Field> fs, sub;
    fields_of(m, fs);
    Track t;
    std::uint64_t uuid = 0;
    for (const Field& f : fs) {
      if (f.number == pf::track::kUuid) uuid = f.value;
      if (f.number == pf::track::kName) t.name = std::string(f.bytes);
      if (f.number == pf::track::kParentUuid) t.parent = f.value;
      if (f.number == pf::track::kCounter) t.counter = true;
      if (f.number == pf::track::kProcess || f.number == pf::track::kThread) {
        t.thread = f.number == pf::track::kThread;
        fields_of(f.bytes, sub);
        for (const Field& s : sub) {
          if (s.number == 1) t.pid = static_cast<std::int64_t>(s.value);
          if (t.thread && s.number == pf::track::kThreadTid)
            t.tid = static_cast<std::int64_t>(s.value);
          if (t.thread && s.number == pf::track::kThreadName) t.name = std::string(s.bytes);
          if (!t.thread && s.number == pf::track::kProcessName) t.name = std::string(s.bytes);
        }
      }
    }
    if (t.parent != 0) {
      if (!tracks.count(t.parent))
        error("parent_uuid names a track not described before");
      else if (t.pid == 0 && !t.thread)
        t.pid = tracks[t.parent].pid, t.tid = tracks[t.parent].tid;
    }
    tracks[uuid] = t;
  }

  void packet(std::string_view p) {
    ++packets;
    std::vector<Field> fs;
    if (!fields_of(p, fs)) {
      error("malformed packet");
      return;
    }
    std::uint32_t seq_id = 0, flags = 0, clock_id = 0;
    bool has_ts = false, has_clock = false;
    std::uint64_t ts = 0;
    std::string_view te, interned_data, defaults, snapshot, desc;
    for (const Field& f : fs) {
      switch (f.number) {
        case pf::packet::kTrustedPacketSequenceId:
          seq_id = static_cast<std::uint32_t>(f.value);
          break;
        case pf::packet::kSequenceFlags: flags = static_cast<std::uint32_t>(f.value); break;
        case pf::packet::kTimestamp:
          has_ts = true;
          ts = f.value;
          break;
        case pf::packet::kTimestampClockId:
          has_clock = true;
          clock_id = static_cast<std::uint32_t>(f.value);
          break;
        case pf::packet::kTrackEvent: te = f.bytes; break;
        case pf::packet::kInternedData: interned_data = f.bytes; break;
        case pf::packet::kTracePacketDefaults: defaults = f.bytes; break;
        case pf::packet::kClockSnapshot: snapshot = f.bytes; break;
        case pf::packet::kTrackDescriptor: desc = f.bytes; break;
        default: break;
      }
    }
    if (seq_id == 0) error("packet without trusted_packet_sequence_id");
    if (packets == 1 && snapshot.empty()) error("the first packet is not a ClockSnapshot");
    Sequence& seq = sequences[seq_id];
    if ((flags & pf::packet::kSeqIncrementalStateCleared) != 0) {
      seq = Sequence{};
      seq.cleared = true;
    } else if (!seq.cleared) {
      error("sequence " + std::to_string(seq_id) + " used before SEQ_INCREMENTAL_STATE_CLEARED");
    }
    if (!defaults.empty()) {
      std::vector<Field> ds, tds;
      fields_of(defaults, ds);
      for (const Field& d : ds) {
        if (d.number == pf::defaults::kTimestampClockId)
          seq.clock_id = static_cast<std::uint32_t>(d.value);
        if (d.number == pf::defaults::kTrackEventDefaults) {
          fields_of(d.bytes, tds);
          for (const Field& t : tds) {
            if (t.number == pf::defaults::kTrackUuid) seq.track = t.value;
          }
        }
      }
    }
    if (!snapshot.empty()) {
      saw_snapshot = true;
      std::vector<Field> cs, c;
      fields_of(snapshot, cs);
      for (const Field& f : cs) {
        if (f.number != pf::clock::kClocks) continue;
        fields_of(f.bytes, c);
        std::uint64_t id = 0, value = 0;
        bool inc = false;
        for (const Field& x : c) {
          if (x.number == pf::clock::kClockId) id = x.value;
          if (x.number == pf::clock::kTimestamp) value = x.value;
          if (x.number == pf::clock::kIsIncremental) inc = x.value != 0;
        }
        if (id == pf::clock::kThreadIncremental) {
          if (!inc) error("clock 64 not incremental");
          seq.incremental = true;
          seq.clock64 = value;
        }
      }
    }
    if (!interned_data.empty()) interned(interned_data, seq);
    if (!desc.empty()) {
      if (seq_id != 1) error("a descriptor outside the process sequence");
      descriptor(desc);
    }
    if (te.empty()) return;
    if ((flags & pf::packet::kSeqNeedsIncrementalState) == 0)
      error("a TrackEvent without SEQ_NEEDS_INCREMENTAL_STATE");
    // Time.
    const std::uint32_t clock = has_clock ? clock_id : seq.clock_id;
    std::uint64_t ns = ts;
    if (!has_ts) error("a TrackEvent without timestamp");
    if (clock == pf::clock::kThreadIncremental) {
      if (!seq.incremental) error("clock 64 used without its snapshot");
      seq.clock64 += ts;
      ns = seq.clock64;
    } else if (clock == pf::clock::kMonotonic && seq_id != 1) {
      ++absolute_on_thread;
    } else if (clock != pf::clock::kMonotonic) {
      error("timestamp on clock " + std::to_string(clock));
    }
    std::vector<Field> es;
    fields_of(te, es);
    std::uint32_t type = 0;
    std::uint64_t track = seq.track;
    json e = json::object();
    json args = json::object();
    bool has_cat = false;
    for (const Field& f : es) {
      switch (f.number) {
        case pf::event::kType: type = static_cast<std::uint32_t>(f.value); break;
        case pf::event::kTrackUuid: track = f.value; break;
        case pf::event::kNameIid:
          if (!seq.names.count(f.value))
            error("name iid " + std::to_string(f.value) + " used before defined");
          e["name"] = seq.names[f.value];
          break;
        case pf::event::kName: e["name"] = std::string(f.bytes); break;
        case pf::event::kCategoryIids:
          if (!seq.categories.count(f.value)) error("category iid used before defined");
          e["cat"] = seq.categories[f.value];
          has_cat = true;
          break;
        case pf::event::kCategories:
          e["cat"] = std::string(f.bytes);
          has_cat = true;
          break;
        case pf::event::kDebugAnnotations: {
          std::string k;
          json v = annotation(f.bytes, seq, true, &k);
          args[k] = v;
          break;
        }
        case pf::event::kCounterValue: e["value"] = static_cast<std::int64_t>(f.value); break;
        case pf::event::kDoubleCounterValue: e["value"] = std::bit_cast<double>(f.value); break;
        case pf::event::kFlowIds:
          flow_out.insert(f.value);
          e["flow_out"] = f.value;
          break;
        case pf::event::kTerminatingFlowIds:
          flow_in.insert(f.value);
          e["flow_in"] = f.value;
          break;
        default: break;
      }
    }
    (void)has_cat;
    if (!tracks.count(track)) {
      error("event on a track not described before");
      return;
    }
    const Track& t = tracks[track];
    e["pid"] = t.pid;
    e["tid"] = t.tid;
    e["track"] = track;
    e["ts_ns"] = ns;
    if (!args.empty()) e["args"] = args;
    if (type == pf::event::kSliceBegin) {
      open[track].push_back(e);
    } else if (type == pf::event::kSliceEnd) {
      auto& stack = open[track];
      if (stack.empty()) {
        error("SLICE_END without its BEGIN on its track");
        return;
      }
      json x = stack.back();
      stack.pop_back();
      x["ph"] = "X";
      if (ns < x["ts_ns"].get<std::uint64_t>()) error("END before its BEGIN");
      x["dur_ns"] = ns - x["ts_ns"].get<std::uint64_t>();
      if (e.contains("args")) {
        if (!x.contains("args")) x["args"] = json::object();
        for (auto& [k, v] : e["args"].items()) x["args"][k] = v;
      }
      events.push_back(x);
    } else if (type == pf::event::kInstant) {
      e["ph"] = e.value("cat", "") == pf::kMetadataCategory ? "M" : "I";
      events.push_back(e);
    } else if (type == pf::event::kCounter) {
      e["ph"] = "C";
      e["name"] = t.name;
      events.push_back(e);
    } else {
      error("unknown event type");
    }
  }

  // Reads a whole file.
  void read(std::string_view file, bool* cut = nullptr) {
    for (std::string_view p : packets_of(file, cut)) packet(p);
    // A file rebuilt alone: a BEGIN without END (the span ended in a later
    // file or was cut) is not an event of this file.
  }
  // The events as the JSON form writes them (ts/dur in µs, thread names as
  // "M" thread_name events), for checks written against that form.
  json json_form() const {
    json out = json::array();
    for (const auto& [uuid, t] : tracks) {
      if (t.thread && !t.name.empty()) {
        out.push_back({{"ph", "M"},
                       {"name", "thread_name"},
                       {"pid", t.pid},
                       {"tid", t.tid},
                       {"args", {{"name", t.name}}}});
      }
    }
    for (json e : events) {
      if (e.contains("ts_ns")) e["ts"] = e["ts_ns"].get<double>() / 1000.0;
      if (e.contains("dur_ns")) e["dur"] = e["dur_ns"].get<double>() / 1000.0;
      if (e["ph"] == "M") e.erase("ts");
      out.push_back(e);
    }
    return out;
  }
  std::vector<json> of(std::string_view ph) const {
    std::vector<json> out;
    for (const json& e : events) {
      if (e["ph"] == ph) out.push_back(e);
    }
    return out;
  }
};

}  // namespace jitscope::testing::pfwire
