#!/usr/bin/env python3
"""Checks jitscope's Perfetto protobuf traces (.pftrace) against the schema
and against the contract in docs/perfetto-format.md.

usage: check_pftrace.py [--cut] [--rotated-part] [--snapshot] [--compressed] [--proto-dir DIR]
                        [--gen-dir DIR] FILE...

For each file:
  1. Debian's `protoc --decode=perfetto.protos.Trace` decodes it (only the
     whole packets of a cut file); a field the schema does not name is a
     problem (a wrong field number decodes as "unknown", not as an error);
  2. the packets are parsed with the module protoc generates from
     perfetto_trace.proto (never committed: generated into --gen-dir, again
     only when the schema file changed), and the
     rules a decoder cannot see are checked: sequence ids, the clear flag,
     interning, track descriptors before use, parents, slice pairing and
     nesting, clocks, flows, counters, the __metadata instants.

--cut           the file was cut by a crash or SIGKILL: it may end inside a
                packet (the bytes after the last whole packet are reported),
                slices may stay open, jitscope_stats may be missing.
--compressed    the writer was asked to compress: no compressed packet is
                a problem.
--rotated-part  a rotated file other than the last: jitscope_stats (written
                when the session ends) may be missing; a span open at the
                rotation leaves its BEGIN without an END (the writer begins
                it again in the next file, docs/perfetto-format.md); and a
                flow may start or end in another part (a rotation can fall
                between a call's slice and its kernel's). An END without its
                BEGIN is still a problem.
--snapshot      a flight recorder's snapshot (docs/flight-recorder.md): the
                window's parts each start their sequences again, with
                first_packet_on_sequence as a file's first packet has it
                (allowed again on a packet that clears the sequence's
                state); jitscope_stats (written when the session ends) is
                missing; a flow whose other end went with the window's
                oldest part may lack it. Every BEGIN must still have its
                END, and every END its BEGIN.

A compressed packet (compressed_packets: deflate, zstd_compressed_packets:
zstd; docs/perfetto-format.md) is inflated and its packets are checked in
its place; it must hold whole packets and nothing else, and stay under
Perfetto's 512 KB (zstd needs python3-zstandard).

An arrow between processes (flow ids in [2^52, 2^53), base/spawn_flow.hpp:
a worker's spawn, or a task handed to another process) joins two
processes' traces: one end is in each file, so only "at most once per
file" is checked for it.

Output: one line per problem, "FILE: packet I (seq S): what"; then one
summary line per file. Exit 0 when clean, 1 on problems, 2 on usage or a
missing schema, 78 when a file needs a module that is not installed
(python3-zstandard for zstd packets). Needs python3-protobuf and protoc (tests/perfetto/
with_protobuf.sh finds or installs them). Not checked: the contents of args,
names and pids against what the program recorded (the writer's own tests
know what they recorded), and Perfetto's UI-only fields.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading

HERE = os.path.dirname(os.path.abspath(__file__))
# ../shared beside the repository (shared/README.md); the env variable and
# --proto-dir name another copy.
DEFAULT_PROTO_DIR = os.environ.get(
    "JITSCOPE_PERFETTO_PROTO_DIR", os.path.join(HERE, "..", "..", "..", "shared", "perfetto"))
PROTO = "perfetto_trace.proto"
MONOTONIC, BOOTTIME = 3, 6
MAX_PRINTED = 50  # per file: a broken writer must not print a million lines
SKIP_MISSING_MODULE = 78  # with_protobuf.sh turns it into ctest's skip (77)


def is_spawn_flow(flow_id):
    """An arrow between processes (a spawn's or a task's), whose other end is
    in the other process's file."""
    return (1 << 52) <= flow_id < (1 << 53)


class SchemaError(Exception):
    pass


def load_schema(proto_dir=None, gen_dir=None):
    """Generates perfetto_trace_pb2 with protoc (once per schema file: a
    stamp in gen_dir names the file it came from) and imports it."""
    proto_dir = os.path.abspath(proto_dir or DEFAULT_PROTO_DIR)
    proto_path = os.path.join(proto_dir, PROTO)
    if not os.path.isfile(proto_path):
        raise SchemaError(
            f"the Perfetto schema is missing: {proto_path} (it comes with "
            "the shared folder ../shared beside the repository, shared/perfetto/; set "
            "JITSCOPE_PERFETTO_PROTO_DIR or --proto-dir to another copy)")
    gen_dir = gen_dir or tempfile.mkdtemp(prefix="pftrace_pb2.")
    os.makedirs(gen_dir, exist_ok=True)
    st = os.stat(proto_path)
    stamp = f"{proto_path} {st.st_size} {st.st_mtime_ns}\n"
    stamp_path = os.path.join(gen_dir, "perfetto_trace_pb2.stamp")
    try:
        with open(stamp_path) as f:
            current = f.read() == stamp
    except OSError:
        current = False
    # protoc costs half a second a check, and a suite runs dozens of checks.
    if not current or not os.path.isfile(os.path.join(gen_dir, "perfetto_trace_pb2.py")):
        # Generated beside, then renamed: checks run at once (ctest -j) may
        # share gen_dir. The stamp goes last, so it never names an older module.
        tmp = tempfile.mkdtemp(dir=gen_dir)
        subprocess.run(["protoc", f"--proto_path={proto_dir}", f"--python_out={tmp}", PROTO],
                       check=True)
        with open(os.path.join(tmp, "stamp"), "w") as f:
            f.write(stamp)
        os.replace(os.path.join(tmp, "perfetto_trace_pb2.py"),
                   os.path.join(gen_dir, "perfetto_trace_pb2.py"))
        os.replace(os.path.join(tmp, "stamp"), stamp_path)
        os.rmdir(tmp)
    sys.path.insert(0, gen_dir)
    import perfetto_trace_pb2  # noqa: E402 (generated just above)
    return proto_dir, perfetto_trace_pb2


def read_varint(data, pos):
    """Returns (value, next position), or (None, pos) when data ends first."""
    value = shift = 0
    while pos < len(data):
        b = data[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if not b & 0x80:
            return value, pos
        shift += 7
        if shift > 63:
            raise ValueError("varint longer than 10 bytes")
    return None, pos


def split_packets(data):
    """Splits a Trace into its packet fields at the wire level, so that a cut
    file still yields its whole packets. Returns (the packets' bytes, the end
    of the last whole packet, an error or None: bytes that are no packet)."""
    packets, pos = [], 0
    while pos < len(data):
        start = pos
        try:
            tag, pos = read_varint(data, pos)
            if tag is None:
                return packets, start, None
            if tag != (1 << 3 | 2):
                return packets, start, (f"byte {start}: field {tag >> 3} wire type {tag & 7} is not "
                                    "a TracePacket (a Trace holds only field 1, length-delimited)")
            size, pos = read_varint(data, pos)
        except ValueError as e:
            return packets, start, f"byte {start}: {e}: not a Trace"
        if size is None or pos + size > len(data):
            return packets, start, None  # cut inside this packet
        packets.append(data[pos:pos + size])
        pos += size
    return packets, pos, None


COMPRESSED_FIELDS = {50: "deflate", 133: "zstd"}  # TracePacket.(zstd_)compressed_packets
MAX_COMPRESSED_PACKET = 512 * 1024  # Perfetto's bound for each, with its field ids and sizes


def write_varint(value):
    """`value` as a varint's bytes."""
    out = bytearray()
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def frame(packets):
    """The packets' bytes as a Trace's (field 1, length-delimited, each)."""
    return b"".join(b"\x0a" + write_varint(len(p)) + p for p in packets)


class MissingModule(Exception):
    """A Python module the check needs for this file is not installed."""


def inflate(codec, blob):
    """A compressed packet's payload, inflated; raises ValueError (or
    MissingModule: zstd without python3-zstandard)."""
    if codec == "deflate":
        import zlib
        try:
            d = zlib.decompressobj()
            out = d.decompress(blob)
        except zlib.error as e:
            raise ValueError(f"corrupt deflate data: {e}") from e
        if not d.eof or d.unused_data:
            raise ValueError("the zlib stream is cut off or followed by other bytes")
        return out
    try:
        import zstandard
    except ImportError as e:
        raise MissingModule("zstd packets need python3-zstandard "
                            "(apt-get install -y python3-zstandard)") from e
    # One frame after another, as the tools read them (python3-zstandard
    # 0.20 has no read_across_frames).
    out, rest = b"", blob
    while rest:
        try:
            d = zstandard.ZstdDecompressor().decompressobj()
            out += d.decompress(rest)
        except zstandard.ZstdError as e:
            raise ValueError(f"corrupt zstd data: {e}") from e
        if not d.eof:
            raise ValueError("the zstd frame is cut off")
        rest = d.unused_data
    return out


def expand_compressed(packets):
    """Replaces each compressed packet by the packets it holds (Perfetto
    decodes them in its place). Returns (packets, how many were compressed
    per codec, problems)."""
    out, counts, problems = [], {}, []
    for i, p in enumerate(packets):
        try:
            tag, pos = read_varint(p, 0) if p else (None, 0)
        except ValueError:
            tag, pos = None, 0  # not a compressed packet; the checker reports what it is
        codec = COMPRESSED_FIELDS.get(tag >> 3) if tag is not None and tag & 7 == 2 else None
        if codec is None:
            out.append(p)
            continue
        counts[codec] = counts.get(codec, 0) + 1
        size, body = read_varint(p, pos)
        if size is None or body + size != len(p):
            problems.append(f"packet {i}: a compressed packet with fields besides its {codec} data")
            continue
        if len(p) + 5 > MAX_COMPRESSED_PACKET:
            problems.append(f"packet {i}: a compressed packet of {len(p)} bytes (Perfetto: < 512 KB)")
        try:
            payload = inflate(codec, p[body:])
        except MissingModule:
            raise
        except ValueError as e:
            problems.append(f"packet {i}: {codec}: {e}")
            continue
        inner, end, error = split_packets(payload)
        if error or end != len(payload):
            problems.append(f"packet {i}: its {codec} data is not whole packets: {error or 'cut'}")
        for q in inner:
            try:
                first = read_varint(q, 0)[0] if q else None
            except ValueError:
                first = None
            if first is not None and first & 7 == 2 and first >> 3 in COMPRESSED_FIELDS:
                problems.append(f"packet {i}: a compressed packet inside a compressed packet")
        out += inner
    return out, counts, problems


def protoc_unknown_fields(proto_dir, data):
    """Runs protoc --decode; returns (error text or None, [(packet index,
    field number)] of the fields the schema does not know). The text is read
    as it comes: it is many times the size of a large trace."""
    proc = subprocess.Popen(["protoc", f"--proto_path={proto_dir}", "--decode=perfetto.protos.Trace",
                             PROTO], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)

    def feed():
        try:
            proc.stdin.write(data)
            proc.stdin.close()
        except BrokenPipeError:  # protoc gave up early; its status says why
            pass
    writer = threading.Thread(target=feed)
    writer.start()
    unknown, index = [], -1
    # protoc prints a known field by name and an unknown one by its number.
    for line in proc.stdout:
        if line == b"packet {\n":
            index += 1
        m = re.match(rb"\s+(\d+)(: | \{)", line)
        if m:
            unknown.append((index, int(m.group(1))))
    writer.join()
    err = proc.stderr.read().decode(errors="replace").strip()
    if proc.wait() != 0:
        return err or f"exit {proc.returncode}", []
    return None, unknown


class Checker:
    def __init__(self, pb, cut, rotated_part, snapshot=False):
        self.pb, self.cut, self.rotated_part, self.snapshot = pb, cut, rotated_part, snapshot
        self.problems = []
        self.seqs = {}  # seq id -> its state (see sequence())
        self.tracks = {}  # uuid -> TrackDescriptor (the latest)
        self.open = {}  # uuid -> stack of [name, begin ts, packet index]
        self.closed = {}  # uuid -> [(begin ts, end ts, name, packet index)]
        self.flow_starts, self.flow_ends = {}, {}  # flow id -> [(packet index, ts)]
        self.last_clock_snapshot = {}  # (clock ids, seq or None) -> latest MONOTONIC reading
        self.declared_clocks = set()
        self.metadata = set()
        self.slices = 0
        self.seq_of = []  # packet index -> its sequence id, for the lines of finish()

    def problem(self, index, seq, what):
        if seq is None and index is not None:
            seq = self.seq_of[index]
        self.problems.append(f"packet {index} (seq {seq}): {what}" if index is not None else what)

    def sequence(self, seq):
        return self.seqs.setdefault(seq, {"interned": None, "defaults": None, "clocks": {}})

    def check(self, packets):
        TP = self.pb.TracePacket
        for i, raw in enumerate(packets):
            p = TP()
            try:
                p.ParseFromString(raw)
            except Exception as e:  # DecodeError; the message names the field
                self.seq_of.append("?")
                self.problem(i, "?", f"does not decode as a TracePacket: {e}")
                continue
            self.seq_of.append(p.trusted_packet_sequence_id
                               if p.HasField("trusted_packet_sequence_id") else "-")
            if i == 0:
                self.first_packet(p)
            if not p.HasField("trusted_packet_sequence_id"):
                self.problem(i, "-", "no trusted_packet_sequence_id")
                continue
            self.packet(i, p.trusted_packet_sequence_id, p)
        self.finish()

    def first_packet(self, p):
        snap = p.clock_snapshot if p.HasField("clock_snapshot") else None
        if snap is None:
            self.problem(0, None, "the file's first packet is not a ClockSnapshot")
            return
        if snap.primary_trace_clock != MONOTONIC:
            self.problem(0, None,
                         f"primary_trace_clock is {snap.primary_trace_clock}, not BUILTIN_CLOCK_MONOTONIC (3)")
        have = {c.clock_id for c in snap.clocks}
        for cid, name in ((MONOTONIC, "MONOTONIC"), (BOOTTIME, "BOOTTIME"), (1, "REALTIME")):
            if cid not in have:
                self.problem(0, None, f"the first ClockSnapshot lacks {name}")

    def packet(self, i, seq, p):
        TP = self.pb.TracePacket
        first = seq not in self.seqs
        st = self.sequence(seq)
        cleared = bool(p.sequence_flags & TP.SEQ_INCREMENTAL_STATE_CLEARED)
        if first and not cleared:
            self.problem(i, seq, f"the first packet of sequence {seq} lacks SEQ_INCREMENTAL_STATE_CLEARED")
        if first and not p.first_packet_on_sequence:
            self.problem(i, seq, f"the first packet of sequence {seq} lacks first_packet_on_sequence")
        if not first and p.first_packet_on_sequence and not (self.snapshot and cleared):
            self.problem(i, seq, "first_packet_on_sequence on a packet that is not its sequence's first")
        if cleared or first:
            # Interned ids and defaults are incremental state: a clear drops them.
            st["interned"] = {"names": {}, "cats": {}, "ann": {}, "strs": {}}
            st["defaults"] = None
        if p.HasField("trace_packet_defaults"):
            st["defaults"] = p.trace_packet_defaults
        uses_state = False
        if p.HasField("interned_data"):
            self.intern(i, seq, st, p.interned_data)
        if p.HasField("clock_snapshot"):
            self.clock_snapshot(i, seq, st, p.clock_snapshot)
        ts = None
        if p.HasField("timestamp") and not p.HasField("clock_snapshot"):
            ts, by_default = self.resolve_ts(i, seq, st, p)
            uses_state |= by_default
        if p.HasField("track_descriptor"):
            self.descriptor(i, seq, p.track_descriptor)
        if p.HasField("track_event"):
            if ts is None and not p.HasField("timestamp"):
                self.problem(i, seq, "TrackEvent without a timestamp")
            uses_state |= self.track_event(i, seq, st, p.track_event, ts)
        if uses_state and not p.sequence_flags & TP.SEQ_NEEDS_INCREMENTAL_STATE:
            self.problem(i, seq, "uses interned ids or the sequence's defaults but lacks "
                         "SEQ_NEEDS_INCREMENTAL_STATE")

    def intern(self, i, seq, st, data):
        for field, table in (("event_names", "names"), ("event_categories", "cats"),
                             ("debug_annotation_names", "ann"),
                             ("debug_annotation_string_values", "strs")):
            for entry in getattr(data, field):
                value = entry.str if table == "strs" else entry.name
                old = st["interned"][table].get(entry.iid)
                if old is not None and old != value:
                    self.problem(i, seq, f"{field} iid {entry.iid} redefined as {value!r} "
                                 f"(was {old!r}) without a clear")
                st["interned"][table][entry.iid] = value

    def lookup(self, i, seq, st, table, iid, what):
        value = st["interned"][table].get(iid)
        if value is None:
            self.problem(i, seq, f"{what} iid {iid} is not defined on sequence {seq} "
                         "(in this packet or an earlier one since the last clear)")
        return value

    def clock_snapshot(self, i, seq, st, snap):
        clocks = {c.clock_id: c for c in snap.clocks}
        # Perfetto's trace processor rejects a snapshot whose trace clock
        # (MONOTONIC here) is earlier than the last one of the same clocks
        # (sequence-scoped clocks count per sequence).
        if MONOTONIC in clocks:
            key = (frozenset(clocks), seq if any(cid >= 64 for cid in clocks) else None)
            mono = clocks[MONOTONIC].timestamp
            last = self.last_clock_snapshot.get(key)
            if last is not None and mono < last:
                self.problem(i, seq, f"ClockSnapshot at MONOTONIC {mono} ns is earlier than the one "
                             f"before with the same clocks ({last} ns): a reader rejects it")
            self.last_clock_snapshot[key] = max(mono, last or 0)
        for cid, c in clocks.items():
            if cid < 64:
                self.declared_clocks.add(cid)
            elif cid < 128:
                if not c.is_incremental:
                    self.problem(i, seq, f"clock {cid} in a ClockSnapshot is not is_incremental")
                if MONOTONIC not in clocks:
                    self.problem(i, seq, f"the ClockSnapshot defining clock {cid} has no "
                                 "MONOTONIC reading of the same instant")
                    continue
                # last value of the clock, and its offset to MONOTONIC
                st["clocks"][cid] = [c.timestamp, clocks[MONOTONIC].timestamp - c.timestamp]
            else:
                self.problem(i, seq, f"clock id {cid} is reserved (128 and up)")

    def resolve_ts(self, i, seq, st, p):
        """Returns (the timestamp in MONOTONIC ns or None, whether it used the defaults)."""
        d = st["defaults"]
        by_default = False
        if p.HasField("timestamp_clock_id"):
            cid = p.timestamp_clock_id
        elif d is not None and d.HasField("timestamp_clock_id"):
            cid, by_default = d.timestamp_clock_id, True
        else:
            self.problem(i, seq, "timestamp with no timestamp_clock_id and no sequence default "
                         "(it would be read as BOOTTIME)")
            return None, False
        if 64 <= cid < 128:
            clock = st["clocks"].get(cid)
            if clock is None:
                self.problem(i, seq, f"timestamp on clock {cid}, which no ClockSnapshot on "
                             f"sequence {seq} defines before")
                return None, by_default
            clock[0] += p.timestamp  # a delta from the sequence's previous timestamp
            return clock[0] + clock[1], by_default
        if cid not in self.declared_clocks:
            self.problem(i, seq, f"timestamp on clock {cid}, which is not in any ClockSnapshot before")
            return None, by_default
        return p.timestamp if cid == MONOTONIC else None, by_default

    def descriptor(self, i, seq, d):
        if seq != 1:
            self.problem(i, seq, f"TrackDescriptor {d.uuid} on sequence {seq}, not the process sequence 1")
        if d.HasField("parent_uuid"):
            parent = self.tracks.get(d.parent_uuid)
            if parent is None:
                self.problem(i, seq, f"track {d.uuid}'s parent {d.parent_uuid} is not described before it")
            elif (d.HasField("thread") or d.HasField("counter")) and not parent.HasField("process"):
                self.problem(i, seq, f"track {d.uuid} (a thread or counter) has parent "
                             f"{d.parent_uuid}, which is not a process track")
        self.tracks[d.uuid] = d

    def track_event(self, i, seq, st, ev, ts):
        TE = self.pb.TrackEvent
        used = False
        name = None
        if ev.HasField("name_iid"):
            name, used = self.lookup(i, seq, st, "names", ev.name_iid, "event name"), True
        elif ev.HasField("name"):
            name = ev.name
        cats = list(ev.categories)
        for iid in ev.category_iids:
            cats.append(self.lookup(i, seq, st, "cats", iid, "category"))
            used = True
        used |= self.annotations(i, seq, st, ev.debug_annotations, True)
        if ev.HasField("track_uuid"):
            uuid = ev.track_uuid
        else:
            d = st["defaults"]
            if d is None or not d.track_event_defaults.HasField("track_uuid"):
                self.problem(i, seq, "TrackEvent with no track_uuid and no default track")
                return used
            uuid, used = d.track_event_defaults.track_uuid, True
        track = self.tracks.get(uuid)
        if track is None:
            self.problem(i, seq, f"track {uuid} has no TrackDescriptor before this event")
        is_counter = track is not None and track.HasField("counter")
        kind = ev.type
        if kind == TE.TYPE_COUNTER:
            if track is not None and not is_counter:
                self.problem(i, seq, f"TYPE_COUNTER on track {uuid}, which is not a counter track")
            if not ev.HasField("counter_value") and not ev.HasField("double_counter_value"):
                self.problem(i, seq, "TYPE_COUNTER without counter_value or double_counter_value")
        elif is_counter:
            self.problem(i, seq, f"{TE.Type.Name(kind)} on counter track {uuid}")
        if kind in (TE.TYPE_SLICE_BEGIN, TE.TYPE_INSTANT) and name is None:
            self.problem(i, seq, f"{TE.Type.Name(kind)} without a name")
        if kind == TE.TYPE_SLICE_BEGIN:
            self.open.setdefault(uuid, []).append([name, ts, i])
        elif kind == TE.TYPE_SLICE_END:
            self.slice_end(i, seq, uuid, ts)
        elif kind == TE.TYPE_INSTANT and "__metadata" in cats:
            self.metadata.add(name)
            if track is not None and not track.HasField("process"):
                self.problem(i, seq, f"__metadata instant {name!r} on track {uuid}, not on a process track")
        elif kind not in (TE.TYPE_INSTANT, TE.TYPE_COUNTER):
            self.problem(i, seq, f"TrackEvent type {kind} is not one jitscope writes")
        if (ev.flow_ids or ev.terminating_flow_ids) and kind != TE.TYPE_SLICE_BEGIN:
            self.problem(i, seq, "flow ids on a TrackEvent that is not a SLICE_BEGIN")
        for f in ev.flow_ids:
            self.flow_starts.setdefault(f, []).append((i, ts))
        for f in ev.terminating_flow_ids:
            self.flow_ends.setdefault(f, []).append((i, ts))
        return used

    def annotations(self, i, seq, st, anns, top):
        used = False
        for a in anns:
            if a.HasField("name_iid"):
                self.lookup(i, seq, st, "ann", a.name_iid, "debug annotation name")
                used = True
            elif top and not a.HasField("name"):
                self.problem(i, seq, "debug annotation without a name")
            if a.HasField("string_value_iid"):
                self.lookup(i, seq, st, "strs", a.string_value_iid, "debug annotation string")
                used = True
            used |= self.annotations(i, seq, st, a.dict_entries, True)
            used |= self.annotations(i, seq, st, a.array_values, False)
        return used

    def slice_end(self, i, seq, uuid, ts):
        # Paired in file order, as the writer meant them; finish() then checks
        # that the pairs nest in time, so Perfetto's time-sorted pairing
        # makes the same slices.
        stack = self.open.get(uuid)
        if not stack:
            self.problem(i, seq, f"SLICE_END on track {uuid} without an open SLICE_BEGIN")
            return
        name, begin, bi = stack.pop()
        if ts is not None and begin is not None and ts < begin:
            self.problem(i, seq, f"SLICE_END at {ts} ns is before its SLICE_BEGIN {name!r} at "
                         f"{begin} ns (packet {bi})")
            return
        self.slices += 1
        if ts is not None and begin is not None:
            self.closed.setdefault(uuid, []).append((begin, ts, name, bi))

    def finish(self):
        for uuid, slices in self.closed.items():
            # Slices of a track nest: each one lies inside or wholly outside any other.
            stack = []
            for b, e, name, bi in sorted(slices, key=lambda s: (s[0], -s[1])):
                while stack and stack[-1][1] <= b:
                    stack.pop()
                if stack and e > stack[-1][1]:
                    o = stack[-1]
                    self.problem(bi, None, f"slice {name!r} [{b}, {e}] overlaps slice {o[2]!r} "
                                 f"[{o[0]}, {o[1]}] (packet {o[3]}) on track {uuid}: slices on a track must nest")
                stack.append((b, e, name, bi))
        if not self.cut and not self.rotated_part:
            for uuid, stack in self.open.items():
                for name, _, bi in stack:
                    self.problem(bi, None, f"SLICE_BEGIN {name!r} on track {uuid} never ended")
        for f, starts in self.flow_starts.items():
            ends = self.flow_ends.get(f, [])
            if len(starts) > 1:
                self.problem(starts[1][0], None, f"flow {f} started {len(starts)} times")
            if not ends and not self.rotated_part and not self.snapshot and not is_spawn_flow(f):
                self.problem(starts[0][0], None, f"flow {f} is never terminated")
            elif ends and starts[0][1] is not None and ends[0][1] is not None and ends[0][1] < starts[0][1]:
                self.problem(ends[0][0], None, f"flow {f} terminates at {ends[0][1]} ns, before it starts "
                             f"at {starts[0][1]} ns")
        for f, ends in self.flow_ends.items():
            if len(ends) > 1:
                self.problem(ends[1][0], None, f"flow {f} terminated {len(ends)} times")
            if f not in self.flow_starts and not self.rotated_part and not self.snapshot \
                    and not is_spawn_flow(f):
                self.problem(ends[0][0], None, f"flow {f} is terminated but never started")
        if 1 not in self.seqs:
            self.problem(None, None, "no packet on sequence 1, the process sequence")
        for name in ("jitscope_session", "jitscope_stats"):
            if name not in self.metadata and not (
                    name == "jitscope_stats" and (self.cut or self.rotated_part or self.snapshot)):
                self.problem(None, None, f"no __metadata instant {name}")


def check_file(path, pb, proto_dir, cut, rotated_part, compressed_required=False, snapshot=False):
    """Returns (problem lines, summary)."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        return [f"cannot read: {e.strerror}"], "not checked"
    packets, end, error = split_packets(data)
    cut_bytes = 0 if error else len(data) - end
    problems = []
    if error:
        problems.append(error)
    if cut_bytes and not cut:
        problems.append(f"the file ends inside packet {len(packets)}: {cut_bytes} bytes cut "
                        "(--cut checks a trace cut by a crash)")
    if not packets:
        problems.append("no whole packet")
    packets, compressed, inflate_problems = expand_compressed(packets)
    problems += inflate_problems
    if compressed_required and not compressed:
        problems.append("no compressed packet (--compressed: the writer was asked to compress)")
    # protoc decodes the whole packets: all of a good file, the part before
    # the cut or the garbage otherwise (those are reported above); those of
    # a compressed packet in its place.
    checker = Checker(pb, cut, rotated_part, snapshot)
    checker.check(packets)
    protoc_error, unknown = protoc_unknown_fields(proto_dir, frame(packets) if compressed else data[:end])
    if protoc_error:
        problems.append(f"protoc --decode=perfetto.protos.Trace fails: {protoc_error}")
    for index, field in unknown:
        problems.append(f"packet {index} (seq {checker.seq_of[index]}): field {field} is not in the "
                        "schema (protoc decodes it as unknown)")
    problems += checker.problems
    summary = (f"{len(packets)} packets, {len(checker.seqs)} sequences, {len(checker.tracks)} tracks, "
               f"{checker.slices} slices, {len(checker.flow_starts)} flows")
    for codec, n in sorted(compressed.items()):
        summary += f", {n} {codec} packets"
    if cut:
        summary += f", cut: {cut_bytes} bytes after packet {len(packets) - 1}"
    return problems, summary


def arg_parser():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("files", nargs="+")
    ap.add_argument("--cut", action="store_true", help="a trace cut by a crash or SIGKILL")
    ap.add_argument("--rotated-part", action="store_true", help="a rotated file other than the last")
    ap.add_argument("--snapshot", action="store_true", help="a flight recorder's snapshot")
    ap.add_argument("--compressed", action="store_true", help="the file must hold compressed packets")
    ap.add_argument("--proto-dir", help=f"the folder of {PROTO} (default: {DEFAULT_PROTO_DIR})")
    ap.add_argument("--gen-dir", help="where protoc writes the Python module (default: a temporary folder)")
    return ap


def check_files(args, pb, proto_dir):
    """The check of args.files: (exit status, the lines it prints)."""
    bad, out = 0, []
    for path in args.files:
        try:
            problems, summary = check_file(path, pb, proto_dir, args.cut, args.rotated_part,
                                           args.compressed, args.snapshot)
        except MissingModule as e:
            out.append(f"{path}: SKIPPED: {e}")
            return SKIP_MISSING_MODULE, out
        out += [f"{path}: {line}" for line in problems[:MAX_PRINTED]]
        if len(problems) > MAX_PRINTED:
            out.append(f"{path}: ... and {len(problems) - MAX_PRINTED} more problems")
        out.append(f"{path}: {summary}: " + (f"{len(problems)} problem{'s' if len(problems) > 1 else ''}" if problems else "ok"))
        bad |= bool(problems)
    return (1 if bad else 0), out


def main():
    args = arg_parser().parse_args()
    gen_dir = args.gen_dir or tempfile.mkdtemp(prefix="pftrace_pb2.")
    try:
        proto_dir, pb = load_schema(args.proto_dir, gen_dir)
    except SchemaError as e:
        print(f"check_pftrace: {e}", file=sys.stderr)
        return 2
    finally:
        if not args.gen_dir:
            shutil.rmtree(gen_dir, ignore_errors=True)
    status, lines = check_files(args, pb, proto_dir)
    for line in lines:
        print(line)
    return status


if __name__ == "__main__":
    sys.exit(main())
