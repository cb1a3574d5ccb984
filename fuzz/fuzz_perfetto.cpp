// fuzz_perfetto: TraceReader on Perfetto's protobuf form (perfetto_reader.cpp,
// perfetto_decoder.hpp) in process. The input is a Trace's bytes after its
// first packet tag: the target writes 0x0a first, so the reader takes the
// protobuf path for nearly every input (the first field tag decides).
// Checked:
// - every outcome is events or an error; a failed read has a message of the
//   form "<path>: byte N: ...";
// - the reader is chunk-size blind: read again 1..61 bytes per read(2), the
//   same events (text and offsets), ending, error and repairs;
// - every event handed over parses as a JSON object (simdjson DOM): the
//   synthesized text is always valid JSON, whatever the names and args;
// - read as jitscope-report reads it (set_decoded_fields: each event as its
//   fields and args), every event decodes to what its JSON text decodes to,
//   with the same ending, error, repairs and fields ignored.
// Not covered: gzip'd protobuf (the gzip layer has its own tests), inputs
// over 8 KiB.
#include "fuzz_support.hpp"

#include <event_decoder.hpp>
#include <trace_reader.hpp>

#include "tools/decoded_event_text.hpp"

#include <simdjson.h>

#include <string>
#include <string_view>
#include <vector>

namespace {

using namespace jitscope;
using jitscope::fuzz::MemFile;

struct Seen {
  std::string json;
  std::uint64_t offset;
};

struct Read {
  bool ok = false;
  std::string error;
  std::vector<Seen> events;
  std::vector<std::string> warnings;
  bool protobuf = false;
};

Read read(const std::string& path, std::size_t chunk) {
  tools::TraceReader reader(chunk);
  Read r;
  r.ok = reader.read(
      path,
      [&](const tools::RawEvent& e) {
        r.events.push_back({std::string(e.json), e.offset});
        return true;
      },
      nullptr, &r.error);
  r.warnings = tools::repair_warnings(reader.repairs());
  r.protobuf = reader.protobuf();
  return r;
}

// Each event decoded, as text (decoded_event_text), and what decoding said.
struct Decoded {
  std::vector<std::string> events;
  std::uint64_t ignored = 0;
  bool decode_failed = false;
};

// `r`'s JSON texts decoded one by one.
Decoded decode_texts(const Read& r) {
  tools::EventDecoder decoder;
  tools::DecodedEvent ev;
  Decoded d;
  std::string buf, why;
  for (const Seen& e : r.events) {
    buf.assign(e.json);
    buf.append(tools::kJsonPadding, ' ');
    if (!decoder.decode(tools::RawEvent{std::string_view(buf.data(), e.json.size()), e.offset}, &ev,
                        &why)) {
      d.decode_failed = true;
      break;
    }
    d.events.push_back(jitscope::testing::decoded_event_text(ev));
  }
  d.ignored = decoder.fields_ignored();
  return d;
}

// `path` read with its events' fields handed over, decoded as jitscope-report does.
Decoded decode_fields(const std::string& path, std::size_t chunk, Read* r) {
  tools::TraceReader reader(chunk);
  reader.set_decoded_fields(true);
  tools::EventDecoder decoder;
  tools::DecodedEvent ev;
  Decoded d;
  std::string why;
  r->ok = reader.read(
      path,
      [&](const tools::RawEvent& e) {
        if (!decoder.decode(e, &ev, &why)) {
          d.decode_failed = true;
          return false;
        }
        d.events.push_back(jitscope::testing::decoded_event_text(ev));
        return true;
      },
      nullptr, &r->error);
  r->warnings = tools::repair_warnings(reader.repairs());
  d.ignored = decoder.fields_ignored();
  return d;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static MemFile file("jitscope-fuzz-pftrace");
  static simdjson::dom::parser parser;
  std::string input = "\x0a";
  input.append(reinterpret_cast<const char*>(data), size);
  file.set(input);

  const Read a = read(file.path(), tools::TraceReader::kDefaultChunkSize);
  FUZZ_CHECK(a.ok || a.error.rfind(file.path() + ": byte ", 0) == 0, a.error);
  const Read b = read(file.path(), 1 + size % 61);
  FUZZ_CHECK(a.ok == b.ok && a.error == b.error && a.warnings == b.warnings, b.error);
  FUZZ_CHECK(a.events.size() == b.events.size(), input);
  for (std::size_t i = 0; i < a.events.size(); ++i) {
    FUZZ_CHECK(a.events[i].json == b.events[i].json && a.events[i].offset == b.events[i].offset,
               a.events[i].json);
    if (!a.protobuf) continue;  // a JSON input: fuzz_report's business
    simdjson::dom::element doc;
    FUZZ_CHECK(parser.parse(a.events[i].json).get(doc) == simdjson::SUCCESS && doc.is_object(),
               a.events[i].json);
  }
  if (!a.protobuf) return 0;
  const Decoded texts = decode_texts(a);
  FUZZ_CHECK(!texts.decode_failed, input);
  Read c;
  const Decoded fields = decode_fields(file.path(), 1 + size % 53, &c);
  FUZZ_CHECK(!fields.decode_failed, input);
  FUZZ_CHECK(c.ok == a.ok && c.error == a.error && c.warnings == a.warnings, c.error);
  FUZZ_CHECK(fields.events == texts.events && fields.ignored == texts.ignored, input);
  return 0;
}
