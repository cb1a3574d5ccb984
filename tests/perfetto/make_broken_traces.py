#!/usr/bin/env python3
"""Writes the conformance checker's test traces: one small trace that keeps
the contract of docs/perfetto-format.md, built with the module protoc
generates from perfetto_trace.proto, and one variant per rule, each broken
on purpose (VARIANTS: what check_pftrace.py must say about it).

usage: make_broken_traces.py OUT_DIR [--proto-dir DIR]
       (writes OUT_DIR/valid.pftrace and OUT_DIR/<variant>.pftrace)

The valid trace: a process, its main thread, a GPU device and stream, an
NVTX domain track under the thread, a counter track; the thread's sequence
on the incremental clock 64 with interned names; a compile span holding an
NVTX range; a kernel on the stream joined to the span by a flow; a counter
value; the jitscope_session and jitscope_stats metadata instants.
"""
import argparse
import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import check_pftrace  # noqa: E402

T0 = 1_000_000_000  # MONOTONIC ns of the first snapshot
PID, TID = 4242, 4243
P, T, D, S, N, C = 1, 2, 3, 4, 5, 6  # track uuids
FLOW = 42
SPAWN_FLOW = (1 << 52) + 42  # a spawn arrow's id: its other end is in another file


def valid_packets(pb):
    """The valid trace as a list of TracePacket; the comments give each index,
    which the variants below use."""
    TP, TE = pb.TracePacket, pb.TrackEvent
    CLEARED, NEEDS = TP.SEQ_INCREMENTAL_STATE_CLEARED, TP.SEQ_NEEDS_INCREMENTAL_STATE
    out = []

    def packet(seq, **fields):
        p = TP(trusted_packet_sequence_id=seq, **fields)
        out.append(p)
        return p

    def descriptor(uuid, parent=None, **fields):
        d = pb.TrackDescriptor(uuid=uuid, **fields)
        if parent is not None:
            d.parent_uuid = parent
        packet(1, track_descriptor=d)

    def interned(names=(), cats=(), anns=()):
        return pb.InternedData(
            event_names=[pb.EventName(iid=i, name=n) for i, n in names],
            event_categories=[pb.EventCategory(iid=i, name=n) for i, n in cats],
            debug_annotation_names=[pb.DebugAnnotationName(iid=i, name=n) for i, n in anns])

    clock = pb.ClockSnapshot.Clock
    # 0: the process sequence's first packet: the file's clock snapshot and the defaults.
    packet(1, sequence_flags=CLEARED, first_packet_on_sequence=True,
           trace_packet_defaults=pb.TracePacketDefaults(timestamp_clock_id=3),
           clock_snapshot=pb.ClockSnapshot(primary_trace_clock=3, clocks=[
               clock(clock_id=3, timestamp=T0), clock(clock_id=6, timestamp=T0 + 500),
               clock(clock_id=1, timestamp=1_700_000_000_000_000_000)]))
    # 1-6: the tracks, parents first.
    descriptor(P, process=pb.ProcessDescriptor(pid=PID, process_name="hello"))
    descriptor(T, P, thread=pb.ThreadDescriptor(pid=PID, tid=TID, thread_name="main"))
    descriptor(D, process=pb.ProcessDescriptor(pid=1_000_000, process_name="GPU 0"))
    descriptor(S, D, thread=pb.ThreadDescriptor(pid=1_000_000, tid=7, thread_name="stream 7"))
    descriptor(N, T, name="my_domain")
    descriptor(C, P, name="ring_fill", counter=pb.CounterDescriptor())
    # 7: jitscope_session on the process track (absolute MONOTONIC through the defaults).
    packet(1, sequence_flags=NEEDS, timestamp=T0 + 1,
           interned_data=interned(names=[(1, "jitscope_session")], cats=[(1, "__metadata")],
                                  anns=[(1, "version")]),
           track_event=TE(type=TE.TYPE_INSTANT, track_uuid=P, name_iid=1, category_iids=[1],
                          debug_annotations=[pb.DebugAnnotation(name_iid=1, string_value="0.1")]))
    # 8: the thread's sequence starts: defaults (clock 64, the thread's track)
    # and the snapshot that starts clock 64 at T0 + 10.
    packet(2, sequence_flags=CLEARED, first_packet_on_sequence=True,
           trace_packet_defaults=pb.TracePacketDefaults(
               timestamp_clock_id=64, track_event_defaults=pb.TrackEventDefaults(track_uuid=T)),
           clock_snapshot=pb.ClockSnapshot(clocks=[clock(clock_id=64, timestamp=0, is_incremental=True),
                                                   clock(clock_id=3, timestamp=T0 + 10)]))
    # 9: compile_kernel begins at T0 + 15 on the default track, starts the flow.
    packet(2, sequence_flags=NEEDS, timestamp=15,
           interned_data=interned(names=[(1, "compile_kernel")], cats=[(1, "jitscope")]),
           track_event=TE(type=TE.TYPE_SLICE_BEGIN, name_iid=1, category_iids=[1], flow_ids=[FLOW]))
    # 10, 11: an NVTX range on the domain's track, T0 + 18 to T0 + 20, names inline.
    packet(2, sequence_flags=NEEDS, timestamp=3,
           track_event=TE(type=TE.TYPE_SLICE_BEGIN, track_uuid=N, name="nvtx range",
                          categories=["my_domain"]))
    packet(2, sequence_flags=NEEDS, timestamp=2, track_event=TE(type=TE.TYPE_SLICE_END, track_uuid=N))
    # 12: compile_kernel ends at T0 + 30 with an arg known at the end.
    packet(2, sequence_flags=NEEDS, timestamp=10,
           interned_data=interned(anns=[(2, "incomplete")]),
           track_event=TE(type=TE.TYPE_SLICE_END, debug_annotations=[
               pb.DebugAnnotation(name_iid=2, bool_value=False)]))
    # 13, 14: the kernel on the stream, T0 + 40 to T0 + 45, ends the flow.
    packet(1, sequence_flags=NEEDS, timestamp=T0 + 40,
           interned_data=interned(names=[(2, "kernel_a")], cats=[(2, "gpu")]),
           track_event=TE(type=TE.TYPE_SLICE_BEGIN, track_uuid=S, name_iid=2, category_iids=[2],
                          terminating_flow_ids=[FLOW]))
    packet(1, sequence_flags=NEEDS, timestamp=T0 + 45, track_event=TE(type=TE.TYPE_SLICE_END, track_uuid=S))
    # 15: a counter value.
    packet(1, sequence_flags=NEEDS, timestamp=T0 + 46,
           track_event=TE(type=TE.TYPE_COUNTER, track_uuid=C, counter_value=7))
    # 16: jitscope_stats, written when the session ends.
    packet(1, sequence_flags=NEEDS, timestamp=T0 + 50,
           interned_data=interned(names=[(3, "jitscope_stats")], anns=[(2, "dropped")]),
           track_event=TE(type=TE.TYPE_INSTANT, track_uuid=P, name_iid=3, category_iids=[1],
                          debug_annotations=[pb.DebugAnnotation(name_iid=2, int_value=0)]))
    return out


def serialize(packets):
    return check_pftrace.frame([p.SerializeToString() for p in packets])


def _set(i, path, value):
    """A variant that sets packet i's field at a dotted path."""
    def edit(pb, ps):
        msg = ps[i]
        *parents, last = path.split(".")
        for name in parents:
            msg = msg[int(name)] if name.isdigit() else getattr(msg, name)
        if isinstance(value, list):
            getattr(msg, last)[:] = value
        elif value is None:
            msg.ClearField(last)
        else:
            setattr(msg, last, value)
    return edit


def _drop(*indices):
    def edit(pb, ps):
        for i in sorted(indices, reverse=True):
            del ps[i]
    return edit


def _move_names_9_to_12(pb, ps):
    ps[12].interned_data.event_names.extend(ps[9].interned_data.event_names)
    ps[9].interned_data.ClearField("event_names")


def _overlap(pb, ps):
    # A second kernel on the stream, T0 + 42 to T0 + 48: inside kernel_a at
    # its start, past it at its end.
    TE = pb.TrackEvent
    for at, ts, kind in ((15, T0 + 42, TE.TYPE_SLICE_BEGIN), (16, T0 + 48, TE.TYPE_SLICE_END)):
        ps.insert(at, pb.TracePacket(trusted_packet_sequence_id=1, sequence_flags=2, timestamp=ts,
                                     track_event=TE(type=kind, track_uuid=S, name="kernel_b")))


def _terminate_twice(pb, ps):
    TE = pb.TrackEvent
    ps.insert(15, pb.TracePacket(trusted_packet_sequence_id=1, sequence_flags=2, timestamp=T0 + 46,
                                 track_event=TE(type=TE.TYPE_SLICE_BEGIN, track_uuid=S, name="kernel_b",
                                                terminating_flow_ids=[FLOW])))
    ps.insert(16, pb.TracePacket(trusted_packet_sequence_id=1, sequence_flags=2, timestamp=T0 + 47,
                                 track_event=TE(type=TE.TYPE_SLICE_END, track_uuid=S)))


def _descriptor_on_thread_seq(pb, ps):
    p = ps.pop(5)  # the NVTX domain's descriptor, after the thread sequence's first packet
    p.trusted_packet_sequence_id = 2
    ps.insert(8, p)


def _clear_again(pb, ps):
    # Sequence 1 cleared again at the kernel: the __metadata category (iid 1,
    # from packet 7) is gone for jitscope_stats.
    ps[13].sequence_flags |= pb.TracePacket.SEQ_INCREMENTAL_STATE_CLEARED
    ps[13].trace_packet_defaults.timestamp_clock_id = 3


def _restarted_without_stats(pb, ps):
    # A flight recorder's snapshot: sequence 1 starts again at the kernel (a
    # window's part), first_packet_on_sequence with it; no jitscope_stats.
    del ps[16]
    _clear_again(pb, ps)
    ps[13].first_packet_on_sequence = True


def _restarted_back_in_time(pb, ps):
    # The same, its restart carrying a clock snapshot older than the first.
    _restarted_without_stats(pb, ps)
    ps[13].clock_snapshot.CopyFrom(ps[0].clock_snapshot)
    for c in ps[13].clock_snapshot.clocks:
        c.timestamp -= 1000


def _move_descriptor_after_use(pb, ps):
    ps.insert(15, ps.pop(6))  # the counter track's descriptor after its value


# (name, edit of the packet list or None, edit of the bytes or None,
#  checker flags, expected exit status, regexes each of which a line must match)
def _variants():
    cut_mid = lambda data, pb: data[:len(data) - 5]
    return [
        ("valid", None, None, [], 0, [r"17 packets, 2 sequences, 6 tracks, 3 slices, 1 flows: ok$"]),
        ("cut_with_flag", None, lambda d, pb: d[:_offset(d, 14) + 6], ["--cut"], 0,
         [r"14 packets, .*, 2 slices, 1 flows, cut: 6 bytes after packet 13: ok$"]),
        ("rotated_part", _drop(16), None, ["--rotated-part"], 0, [r"16 packets, .*: ok$"]),
        ("rotated_part_open_flow", _set(13, "track_event.terminating_flow_ids", []), None,
         ["--rotated-part"], 0, [r": ok$"]),
        # A span open at the rotation: its BEGIN stays without an END there
        # (the writer begins it again in the next file).
        ("rotated_part_open_slice", _drop(12, 16), None, ["--rotated-part"], 0, [r": ok$"]),
        ("rotated_part_end_without_begin", _drop(9, 16), None, ["--rotated-part"], 1,
         [r"packet 11 \(seq 2\): SLICE_END on track 2 without an open SLICE_BEGIN"]),
        ("snapshot", _restarted_without_stats, None, ["--snapshot"], 0, [r"16 packets, .*: ok$"]),
        ("snapshot_clock_back_in_time", _restarted_back_in_time, None, ["--snapshot"], 1,
         [r"packet 13 \(seq 1\): ClockSnapshot at MONOTONIC \d+ ns is earlier than the one before"]),
        ("snapshot_restart_without_flag", _restarted_without_stats, None, [], 1,
         [r"packet 13 \(seq 1\): first_packet_on_sequence on a packet that is not its sequence's first"]),
        ("snapshot_first_packet_flag_without_clear", _set(9, "first_packet_on_sequence", True), None,
         ["--snapshot"], 1,
         [r"packet 9 \(seq 2\): first_packet_on_sequence on a packet that is not its sequence's first"]),
        ("snapshot_open_slice", _drop(12, 16), None, ["--snapshot"], 1,
         [r"SLICE_BEGIN .* never ended"]),
        ("cut_without_flag", None, cut_mid, [], 1,
         [r"the file ends inside packet 16: \d+ bytes cut"]),
        ("garbage_bytes", None, lambda d, pb: d + b"\xff\xff\xff garbage", [], 1,
         [r"byte \d+: field \d+ wire type \d is not a TracePacket"]),
        ("undecodable_packet", None, lambda d, pb: d + b"\x0a\x02\x50\x80", [], 1,
         [r"packet 17 \(seq \?\): does not decode as a TracePacket",
          r"protoc --decode=perfetto.protos.Trace fails"]),
        ("unknown_field", None, lambda d, pb: d + _unknown(), [], 1,
         [r"packet 17 \(seq 1\): field 7777 is not in the schema"]),
        ("no_sequence_id", _set(15, "trusted_packet_sequence_id", None), None, [], 1,
         [r"packet 15 \(seq -\): no trusted_packet_sequence_id"]),
        ("missing_clear", _set(8, "sequence_flags", 2), None, [], 1,
         [r"packet 8 \(seq 2\): the first packet of sequence 2 lacks SEQ_INCREMENTAL_STATE_CLEARED"]),
        ("missing_first_packet_flag", _set(8, "first_packet_on_sequence", None), None, [], 1,
         [r"packet 8 \(seq 2\): the first packet of sequence 2 lacks first_packet_on_sequence"]),
        ("missing_needs_flag", _set(9, "sequence_flags", 0), None, [], 1,
         [r"packet 9 \(seq 2\): uses interned ids .* lacks SEQ_NEEDS_INCREMENTAL_STATE"]),
        ("iid_before_defined", _move_names_9_to_12, None, [], 1,
         [r"packet 9 \(seq 2\): event name iid 1 is not defined on sequence 2"]),
        ("category_iid_undefined", _set(13, "track_event.category_iids", [9]), None, [], 1,
         [r"packet 13 \(seq 1\): category iid 9 is not defined"]),
        ("annotation_iid_undefined", _set(12, "track_event.debug_annotations.0.name_iid", 5), None, [], 1,
         [r"packet 12 \(seq 2\): debug annotation name iid 5 is not defined"]),
        ("iid_redefined", _set(13, "interned_data.event_names.0.iid", 1), None, [], 1,
         [r"packet 13 \(seq 1\): event_names iid 1 redefined as 'kernel_a'"]),
        ("cleared_state_forgets_iids", _clear_again, None, [], 1,
         [r"packet 16 \(seq 1\): category iid 1 is not defined on sequence 1"]),
        ("end_without_begin", _drop(10), None, [], 1,
         [r"packet 10 \(seq 2\): SLICE_END on track 5 without an open SLICE_BEGIN"]),
        ("end_before_begin", _set(14, "timestamp", T0 + 39), None, [], 1,
         [r"packet 14 \(seq 1\): SLICE_END at \d+ ns is before its SLICE_BEGIN 'kernel_a'"]),
        ("begin_never_ended", _drop(14), None, [], 1,
         [r"packet 13 \(seq 1\): SLICE_BEGIN 'kernel_a' on track 4 never ended"]),
        ("begin_end_on_different_tracks", _set(12, "track_event.track_uuid", N), None, [], 1,
         [r"packet 12 \(seq 2\): SLICE_END on track 5 without an open SLICE_BEGIN",
          r"packet 9 \(seq 2\): SLICE_BEGIN 'compile_kernel' on track 2 never ended"]),
        ("slices_overlap", _overlap, None, [], 1,
         [r"slice 'kernel_b' \[\d+, \d+\] overlaps slice 'kernel_a' .* slices on a track must nest"]),
        ("flow_never_terminated", _set(13, "track_event.terminating_flow_ids", []), None, [], 1,
         [r"packet 9 \(seq 2\): flow 42 is never terminated"]),
        ("flow_never_started", _set(9, "track_event.flow_ids", []), None, [], 1,
         [r"packet 13 \(seq 1\): flow 42 is terminated but never started"]),
        ("flow_terminated_twice", _terminate_twice, None, [], 1, [r"flow 42 terminated 2 times"]),
        # A spawn arrow (ids in [2^52, 2^53)) ends in the worker's file: alone here, it is fine,
        # but still once only; an id outside that range gets no such leave.
        ("spawn_flow_alone", _set(13, "track_event.terminating_flow_ids", []), None, [], 0,
         [r": ok$"], SPAWN_FLOW),
        ("spawn_flow_terminated_twice", _terminate_twice, None, [], 1,
         [rf"flow {SPAWN_FLOW} terminated 2 times"], SPAWN_FLOW),
        ("near_spawn_flow_alone", _set(13, "track_event.terminating_flow_ids", []), None, [], 1,
         [rf"flow {(1 << 52) - 1} is never terminated"], (1 << 52) - 1),
        ("flow_on_end", _set(14, "track_event.flow_ids", [43]), None, [], 1,
         [r"packet 14 \(seq 1\): flow ids on a TrackEvent that is not a SLICE_BEGIN"]),
        ("missing_parent_track", _set(4, "track_descriptor.parent_uuid", 999), None, [], 1,
         [r"packet 4 \(seq 1\): track 4's parent 999 is not described before it"]),
        ("counter_parent_not_process", _set(6, "track_descriptor.parent_uuid", T), None, [], 1,
         [r"packet 6 \(seq 1\): track 6 \(a thread or counter\) has parent 2, which is not a process track"]),
        ("undescribed_track", _set(15, "track_event.track_uuid", 555), None, [], 1,
         [r"packet 15 \(seq 1\): track 555 has no TrackDescriptor before this event"]),
        ("descriptor_after_use", _move_descriptor_after_use, None, [], 1,
         [r"packet 14 \(seq 1\): track 6 has no TrackDescriptor before this event"]),
        ("descriptor_on_thread_sequence", _descriptor_on_thread_seq, None, [], 1,
         [r"packet 8 \(seq 2\): TrackDescriptor 5 on sequence 2, not the process sequence 1"]),
        ("no_track", _set(8, "trace_packet_defaults.track_event_defaults", None), None, [], 1,
         [r"packet 9 \(seq 2\): TrackEvent with no track_uuid and no default track"]),
        ("counter_on_slice_track", _set(15, "track_event.track_uuid", P), None, [], 1,
         [r"packet 15 \(seq 1\): TYPE_COUNTER on track 1, which is not a counter track"]),
        ("slice_on_counter_track", _set(14, "track_event.track_uuid", C), None, [], 1,
         [r"packet 14 \(seq 1\): TYPE_SLICE_END on counter track 6"]),
        ("counter_without_value", _set(15, "track_event.counter_value", None), None, [], 1,
         [r"packet 15 \(seq 1\): TYPE_COUNTER without counter_value"]),
        ("incremental_clock_undefined", _set(8, "clock_snapshot", None), None, [], 1,
         [r"packet 9 \(seq 2\): timestamp on clock 64, which no ClockSnapshot on sequence 2 defines"]),
        ("incremental_clock_not_incremental", _set(8, "clock_snapshot.clocks.0.is_incremental", None),
         None, [], 1, [r"packet 8 \(seq 2\): clock 64 in a ClockSnapshot is not is_incremental"]),
        ("undeclared_absolute_clock", _set(15, "timestamp_clock_id", 5), None, [], 1,
         [r"packet 15 \(seq 1\): timestamp on clock 5, which is not in any ClockSnapshot before"]),
        ("no_clock", _set(0, "trace_packet_defaults", None), None, [], 1,
         [r"packet 7 \(seq 1\): timestamp with no timestamp_clock_id and no sequence default"]),
        ("primary_clock_not_monotonic", _set(0, "clock_snapshot.primary_trace_clock", 6), None, [], 1,
         [r"packet 0 \(seq 1\): primary_trace_clock is 6, not BUILTIN_CLOCK_MONOTONIC"]),
        ("first_packet_not_clock", _set(0, "clock_snapshot", None), None, [], 1,
         [r"packet 0 \(seq 1\): the file's first packet is not a ClockSnapshot"]),
        ("missing_session", _set(7, "interned_data.event_names.0.name", "jitscope_sessio"), None, [], 1,
         [r": no __metadata instant jitscope_session$"]),
        ("missing_stats", _drop(16), None, [], 1, [r": no __metadata instant jitscope_stats$"]),
        ("metadata_off_process_track", _set(16, "track_event.track_uuid", T), None, [], 1,
         [r"packet 16 \(seq 1\): __metadata instant 'jitscope_stats' on track 2, not on a process track"]),
        ("empty_file", None, lambda d, pb: b"", [], 1, [r": no whole packet$"]),
    ]


def _unknown():
    # A packet whose only field, 7777 (varint 1), is no TracePacket field: it
    # decodes, as unknown; sequence id 1 keeps the other checks quiet.
    body = b"\x50\x01" + check_pftrace.write_varint(7777 << 3) + b"\x01"
    return check_pftrace.frame([body])


def _offset(data, index):
    """The byte offset of packet `index` in a serialized trace."""
    pos = 0
    for _ in range(index):
        size, body = check_pftrace.read_varint(data, pos + 1)
        pos = body + size
    return pos


VARIANTS = _variants()


def write_all(out_dir, pb):
    """Writes every variant; returns [(name, path, flags, status, regexes)]."""
    os.makedirs(out_dir, exist_ok=True)
    written = []
    for name, edit, edit_bytes, flags, status, expect, *flow in VARIANTS:
        packets = valid_packets(pb)
        if edit:
            edit(pb, packets)
        for p in packets:  # the variant's flow id in place of FLOW
            if flow and p.HasField("track_event"):
                for ids in (p.track_event.flow_ids, p.track_event.terminating_flow_ids):
                    ids[:] = [flow[0] if f == FLOW else f for f in ids]
        data = serialize(packets)
        if edit_bytes:
            data = edit_bytes(data, pb)
        path = os.path.join(out_dir, f"{name}.pftrace")
        with open(path, "wb") as f:
            f.write(data)
        written.append((name, path, flags, status, expect))
    return written


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out_dir")
    ap.add_argument("--proto-dir")
    args = ap.parse_args()
    try:
        _, pb = check_pftrace.load_schema(args.proto_dir, os.path.join(args.out_dir, "pb2"))
    except check_pftrace.SchemaError as e:
        print(f"make_broken_traces: {e}", file=sys.stderr)
        return 2
    for name, path, *_ in write_all(args.out_dir, pb):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
