// TraceReader's protobuf form: the Trace's top-level fields framed in a
// bounded buffer, each packet handed whole to PerfettoDecoder
// (perfetto_reader.hpp, trace_reader.hpp).
#include "perfetto_reader.hpp"

#include "input_file.hpp"
#include "json_scan.hpp"
#include "perfetto_decoder.hpp"
#include "proto_wire.hpp"
#include "trace_reader.hpp"

#include <algorithm>
#include <cstring>

namespace jitscope::tools {

TraceForm detect_trace_form(std::string_view head) noexcept {
  if (head.empty() || head[0] != '\x0a') return TraceForm::kJson;
  std::size_t i = 1;
  while (i < head.size() && is_json_ws(head[i])) ++i;
  if (i == head.size()) return TraceForm::kUndecided;
  if (head[i] == '[' || head[i] == '{') return TraceForm::kJson;
  // The first packet: its length, then the tag of its first field.
  const char* p = head.data() + 1;
  const char* const end = head.data() + head.size();
  std::uint64_t length = 0, tag = 0;
  bool truncated = false;
  if (!proto::read_varint(&p, end, &length, &truncated)) {
    return truncated ? TraceForm::kUndecided : TraceForm::kJson;
  }
  if (length == 0) return TraceForm::kProtobuf;  // an empty packet
  if (!proto::read_varint(&p, end, &tag, &truncated)) {
    return truncated ? TraceForm::kUndecided : TraceForm::kJson;
  }
  const std::uint64_t wire = tag & 7;
  const bool field =
      (tag >> 3) != 0 && (wire == detail::pf::kVarint || wire == detail::pf::kFixed64 ||
                          wire == detail::pf::kLengthDelimited || wire == detail::pf::kFixed32);
  return field ? TraceForm::kProtobuf : TraceForm::kJson;
}

bool TraceReader::read_protobuf(InputFile& in, const std::string& head,
                                const std::function<bool(const RawEvent&)>& on_event,
                                std::string* error) {
  namespace pf = detail::pf;
  protobuf_ = true;
  const std::string& label = in.label();
  PerfettoDecoder decoder(
      [&on_event](const RawEvent& e) { return on_event(e); }, max_event_bytes_, max_memory_,
      decoded_fields_ ? PerfettoDecoder::Output::kFields : PerfettoDecoder::Output::kJson);
  std::vector<char>& buf = buffer_;
  std::size_t pos = 0, end = head.size();
  std::uint64_t base = 0;  // input offset of buf[0]
  bool eof = false;
  if (buf.size() < end) buf.resize(end);
  std::memcpy(buf.data(), head.data(), head.size());
  decoder.set_buffer_bytes(buf.size());
  bytes_read_ = head.size();

  auto fail = [&](std::uint64_t at, const std::string& what) {
    if (error != nullptr) *error = label + ": byte " + std::to_string(at) + ": " + what;
    return false;
  };
  std::string why;
  bool read_failed = false;
  // Makes [pos, pos + need) readable unless the input ends first (then
  // false, eof set) or a read fails (false, read_failed set, *error said).
  auto fill = [&](std::size_t need) {
    while (end - pos < need) {
      if (eof) return false;
      if (pos > 0) {  // keep only what is not consumed
        std::memmove(buf.data(), buf.data() + pos, end - pos);
        base += pos;
        end -= pos;
        pos = 0;
      }
      // Tests shrink chunk_size_ to cross every boundary; otherwise whole
      // packets in reads of at least 1 MiB.
      std::size_t to_read = std::min(chunk_size_, std::max(need - end, std::size_t{1} << 20));
      // The room the packet needs, no more: the buffer counts against the
      // decoder's memory bound, and one big packet must not leave it big.
      std::size_t want = std::max(need, end + to_read);
      // Nor more than the input holds: a packet's length is the input's
      // word, and a short file that claims 200 MiB gets a buffer of its own
      // size (+1: room to see its end). Of unknown size (a pipe, gzip; a
      // file at or past the size it had), reads fill the room there is, and
      // none left, the buffer grows by what it holds (doubling: copies stay
      // linear), so a claim costs at most twice the bytes that came.
      // Past four times the room needed (and 16 MiB), the buffer shrinks.
      const auto oversized = [&](std::size_t room) {
        return buf.size() > 4 * room + (std::size_t{16} << 20);
      };
      const std::uint64_t hint = in.size_hint();
      if (hint != InputFile::kUnknownSize && bytes_read_ < hint) {
        const std::uint64_t left = hint - bytes_read_;
        to_read = static_cast<std::size_t>(std::min<std::uint64_t>(to_read, left + 1));
        want = static_cast<std::size_t>(std::min<std::uint64_t>(want, end + left + 1));
      } else if (buf.size() > end && !oversized(want)) {
        to_read = std::min(to_read, buf.size() - end);
        want = buf.size();
      } else {
        to_read = std::min(to_read, std::max(end, std::size_t{64} << 10));
        want = end + to_read;
      }
      if (buf.size() < want || oversized(want)) {
        std::vector<char> next(want);
        std::memcpy(next.data(), buf.data(), end);
        buf.swap(next);
        decoder.set_buffer_bytes(buf.size());
      }
      const long n = in.read(buf.data() + end, to_read, &why);
      if (n < 0) {
        read_failed = true;
        fail(base + end, why);
        return false;
      }
      if (n == 0) {
        eof = true;
        return false;
      }
      end += static_cast<std::size_t>(n);
      bytes_read_ += static_cast<std::uint64_t>(n);
    }
    return true;
  };
  auto finish = [&](bool ok) {
    decoder.finish();
    repairs_.perfetto = decoder.skips();
    events_ = decoder.events();
    largest_event_ = decoder.largest_event();
    return ok;
  };
  // The input ends inside a top-level field (a packet cut by a crash, a
  // full disk): the packets before it are the trace.
  auto cut = [&](std::size_t start) {
    repairs_.cut_event = true;
    repairs_.cut_packet = true;
    repairs_.cut_event_offset = base + start;
    repairs_.cut_event_bytes = end - start;
    return finish(true);
  };

  for (;;) {
    fill(20);  // a tag and a length: two varints of at most 10 bytes
    if (read_failed) return finish(false);
    if (pos == end) return finish(true);
    const std::size_t start = pos;
    const char* p = buf.data() + pos;
    const char* const e = buf.data() + end;
    std::uint64_t tag = 0, value = 0;
    bool truncated = false;
    if (!proto::read_varint(&p, e, &tag, &truncated)) {
      return truncated ? cut(start)
                       : finish(fail(base + start, "a malformed varint (a field tag)"));
    }
    const auto wire = static_cast<std::uint32_t>(tag & 7);
    if ((tag >> 3) == 0) return finish(fail(base + start, "field number 0 in the Trace"));
    if ((tag >> 3) == pf::trace::kPacket && wire != pf::kLengthDelimited) {
      return finish(fail(base + start,
                         "Trace.packet has wire type " + std::to_string(wire) + ", expected 2"));
    }
    std::size_t size = 0;  // after the tag (and length)
    switch (wire) {
      case pf::kVarint:
        if (!proto::read_varint(&p, e, &value, &truncated)) {
          return truncated ? cut(start) : finish(fail(base + start, "a malformed varint"));
        }
        break;
      case pf::kFixed64: size = 8; break;
      case pf::kFixed32: size = 4; break;
      case pf::kLengthDelimited:
        if (!proto::read_varint(&p, e, &value, &truncated)) {
          return truncated ? cut(start)
                           : finish(fail(base + start, "a malformed varint (a packet's length)"));
        }
        if (value > max_event_bytes_) {
          const std::size_t max = max_event_bytes_;
          return finish(
              fail(base + start, "a packet larger than " + (max % (std::size_t{1} << 20) == 0
                                                                ? std::to_string(max >> 20) + " MiB"
                                                                : std::to_string(max) + " bytes")));
        }
        size = static_cast<std::size_t>(value);
        break;
      default:
        return finish(fail(base + start, "a Trace field of wire type " + std::to_string(wire) +
                                             " (not in Perfetto's schema)"));
    }
    const std::size_t header = static_cast<std::size_t>(p - (buf.data() + start));
    // (fill may move the unread bytes to the buffer's start: pos follows them)
    if (!fill(header + size)) return read_failed ? finish(false) : cut(pos);
    const std::size_t body = pos + header;
    pos = body + size;
    if ((tag >> 3) != pf::trace::kPacket) continue;  // another Trace field: skipped
    const std::string_view packet(buf.data() + body, size);
    if (!decoder.packet(packet, base + body, error)) {
      if (!decoder.stopped() && error != nullptr) *error = label + ": " + *error;
      return finish(false);
    }
  }
}

}  // namespace jitscope::tools
