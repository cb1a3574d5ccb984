// PerfettoDecoder: one TrackEvent as the JSON form's event(s)
// (perfetto_decoder.hpp, "Mapping"), and handing events over.
#include "perfetto_state.hpp"

#include "base/spawn_flow.hpp"  // sdk/src

#include <algorithm>
#include <bit>

namespace jitscope::tools {
namespace {

namespace pf = detail::pf;
using proto::Field;
using proto::FieldReader;

}  // namespace

void PerfettoDecoder::State::track_event(Sequence& seq, std::string_view bytes, std::int64_t ts) {
  FieldReader r(bytes);
  Field f;
  std::uint64_t type = 0, uuid = seq.track;
  bool has_track = seq.has_track, has_name = false, has_double = false;
  std::string_view name;
  std::int64_t int_value = 0;
  double double_value = 0;
  cats.clear();
  bool has_cat = false;
  annotations.clear();
  flows.clear();
  terminating.clear();
  auto add_cat = [&](std::string_view c) {
    // Bounded here, not only by the finished event's size: a packed list
    // repeating one large interned category would grow it first.
    if (cats.size() + c.size() + 1 > max_bytes) {
      bad(f.start, "an event's categories larger than " + limit());
    }
    if (cats.size() + c.size() + 1 > cats.capacity()) check_memory(f.start, 2 * cats.capacity());
    if (has_cat) cats.push_back(',');
    cats.append(c);
    has_cat = true;
  };
  auto repeated = [&](const Field& g, bool fixed64, std::vector<std::uint64_t>* into,
                      const char* what) {
    const bool ok_wire = g.wire == pf::kLengthDelimited ||
                         g.wire == static_cast<std::uint32_t>(fixed64 ? pf::kFixed64 : pf::kVarint);
    if (!ok_wire) want(g, fixed64 ? pf::kFixed64 : pf::kVarint, what);
    // A packed varint list takes 8 bytes per byte here: counted as it grows.
    if (!proto::for_each_repeated(g, fixed64, [&](std::uint64_t v) {
          make_room(*into, g.start);
          into->push_back(v);
        })) {
      bad(g.start, std::string("a malformed packed ") + what);
    }
  };
  while (r.next(&f)) {
    switch (f.number) {
      case pf::event::kType:
        want(f, pf::kVarint, "TrackEvent.type");
        type = f.value;
        break;
      case pf::event::kTrackUuid:
        want(f, pf::kVarint, "TrackEvent.track_uuid");
        uuid = f.value;
        has_track = true;
        break;
      case pf::event::kNameIid:
        want(f, pf::kVarint, "TrackEvent.name_iid");
        name = lookup(seq, Table::kName, f.value);
        has_name = true;
        break;
      case pf::event::kName:
        want(f, pf::kLengthDelimited, "TrackEvent.name");
        name = f.bytes;
        has_name = true;
        break;
      case pf::event::kCategoryIids: {
        ids.clear();
        repeated(f, false, &ids, "TrackEvent.category_iids");
        for (const std::uint64_t iid : ids) add_cat(lookup(seq, Table::kCategory, iid));
        break;
      }
      case pf::event::kCategories:
        want(f, pf::kLengthDelimited, "TrackEvent.categories");
        add_cat(f.bytes);
        break;
      case pf::event::kDebugAnnotations:
        want(f, pf::kLengthDelimited, "TrackEvent.debug_annotations");
        make_room(annotations, f.start);  // 16 bytes per field of 2
        annotations.push_back(f.bytes);
        break;
      case pf::event::kCounterValue:
        want(f, pf::kVarint, "TrackEvent.counter_value");
        int_value = static_cast<std::int64_t>(f.value);
        has_double = false;
        break;
      case pf::event::kDoubleCounterValue:
        want(f, pf::kFixed64, "TrackEvent.double_counter_value");
        double_value = std::bit_cast<double>(f.value);
        has_double = true;
        break;
      case pf::event::kFlowIds: repeated(f, true, &flows, "TrackEvent.flow_ids"); break;
      case pf::event::kTerminatingFlowIds:
        repeated(f, true, &terminating, "TrackEvent.terminating_flow_ids");
        break;
      case pf::event::kFlowIdsOld: repeated(f, false, &flows, "TrackEvent.flow_ids_old"); break;
      case pf::event::kTerminatingFlowIdsOld:
        repeated(f, false, &terminating, "TrackEvent.terminating_flow_ids_old");
        break;
      default: break;
    }
  }
  check(r);

  Track& t = track(has_track ? uuid : 0, bytes.data());
  const Place where = place(t);
  // A named track under a thread (an NVTX domain): its name is the category.
  if (!has_cat && type != pf::event::kCounter && !t.is_process && !t.is_thread && t.has_parent &&
      !t.name.empty()) {
    add_cat(t.name);
  }
  switch (type) {
    case pf::event::kSliceBegin: {
      const char* const at = bytes.data();
      if (t.depth == t.open.size()) {
        const std::size_t before = room(t.open);
        make_room(t.open, at);
        held += room(t.open) - before;  // make_room checked it
        t.open.emplace_back();
      }
      OpenSlice& s = t.open[t.depth];
      std::size_t before = heap(s.head);
      s.head.assign(has_cat ? std::string_view(cats) : std::string_view());
      s.head.append(name);
      s.cat_size = has_cat ? cats.size() : 0;
      s.has_cat = has_cat;
      refit(s.head, before, at);
      before = heap(s.args);
      s.args.clear();
      ArgsRead* read = nullptr;
      if (output == Output::kFields) {
        if (t.depth == t.reads.size()) {
          const std::size_t before = room(t.reads);
          make_room(t.reads, at);
          held += room(t.reads) - before;  // make_room checked it
          t.reads.emplace_back();
        }
        read = &t.reads[t.depth];
      }
      append_args(seq, &s.args, read);
      refit(s.args, before, at);
      s.ts = ts;
      s.pid = where.pid;
      s.tid = where.tid;
      open_bytes += s.head.size() + s.args.size();
      if (open_bytes > max_bytes) bad(at, "open slices holding more than " + limit());
      ++t.depth;
      break;
    }
    case pf::event::kSliceEnd: {
      if (t.depth == 0) {
        ++skips.unmatched_ends;
        break;
      }
      OpenSlice& s = t.open[--t.depth];
      open_bytes -= s.head.size() + s.args.size();
      scratch.clear();
      append_args(seq, &scratch, reading(scratch_read));
      Emit e("X", std::string_view(s.head).substr(s.cat_size), s.ts, s.pid, s.tid);
      e.has_cat = s.has_cat;
      e.cat = std::string_view(s.head).substr(0, s.cat_size);
      // Both ends are points on one clock; an end before its begin is 0 long.
      e.has_dur = true;
      e.dur = ts > s.ts ? static_cast<std::uint64_t>(ts) - static_cast<std::uint64_t>(s.ts) : 0;
      e.args_a = s.args;
      e.args_b = scratch;
      e.read_a = output == Output::kFields ? &t.reads[t.depth] : nullptr;
      e.read_b = reading(scratch_read);
      emit(e, bytes.data());  // before trim(): the event's name is s's
      trim(t, s);             // s may be gone after it
      break;
    }
    case pf::event::kInstant: {
      scratch.clear();
      append_args(seq, &scratch, reading(scratch_read));
      const bool metadata = has_cat && cats == pf::kMetadataCategory;
      Emit e(metadata ? "M" : "I", name, ts, where.pid, where.tid);
      e.args_a = scratch;
      e.read_a = reading(scratch_read);
      if (metadata) {
        // The JSON form's other metadata: {"ph":"M","name":N,"pid":P,"tid":0,"args":{...}}.
        e.has_ts = false;
        e.args_always = true;
      } else {
        e.scope = where.process ? "p" : "t";
        e.has_cat = has_cat;
        e.cat = cats;
      }
      emit(e, bytes.data());
      break;
    }
    case pf::event::kCounter: {
      scratch.assign("\"value\":");
      if (has_double) {
        detail::append_double(scratch, double_value);
      } else {
        detail::append_int(scratch, int_value);
      }
      Emit e("C", has_name ? name : std::string_view(t.name), ts, where.pid, where.tid);
      e.has_cat = has_cat;
      e.cat = cats;
      e.args_a = scratch;  // "value", which EventDecoder does not read
      scratch_read.clear();
      e.read_a = reading(scratch_read);
      emit(e, bytes.data());
      break;
    }
    default: break;  // TYPE_UNSPECIFIED (legacy events), TYPE_STATE: not in the JSON form
  }
  if (!flows.empty() || !terminating.empty()) emit_flows(ts, where);
}

void PerfettoDecoder::State::emit_flows(std::int64_t ts, const Place& where) {
  for (int end = 0; end < 2; ++end) {
    for (const std::uint64_t id : end == 0 ? flows : terminating) {
      // The JSON form's names: an arrow between processes' (a spawn's or a
      // task's, base/spawn_flow.hpp), else a launch's.
      const bool process = detail::is_process_flow(id);
      Emit e(end == 0 ? "s" : "f",
             !process                   ? std::string_view("launch")
             : detail::is_task_flow(id) ? detail::kTaskFlowName
                                        : detail::kSpawnFlowName,
             ts, where.pid, where.tid);
      e.has_cat = true;
      e.cat = process ? detail::kSpawnFlowCategory : std::string_view("gpu");
      e.has_id = true;
      e.id = id;
      e.bp_e = end == 1;
      emit(e, base);
    }
  }
}

}  // namespace jitscope::tools
