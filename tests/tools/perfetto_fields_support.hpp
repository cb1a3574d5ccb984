// Reading the protobuf form as jitscope-report does (TraceReader::
// set_decoded_fields: each event as its fields, its args as text and the
// args' members EventDecoder reads, RawEvent::args_read) against reading
// its JSON text, event by event: perfetto_fields_test and
// perfetto_args_read_test.
#pragma once

#include "decoded_event_text.hpp"
#include "perfetto_trace_builder.hpp"
#include "trace_reader_support.hpp"

#include <event_decoder.hpp>
#include <trace_reader.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace jitscope::testing {

namespace tools = jitscope::tools;

inline std::string write_trace(const std::string& bytes) {
  return write_trace_file(bytes, "pf_fields");
}

struct Decoded {
  bool ok = false;
  std::string error;
  std::vector<std::string> events;
  std::uint64_t ignored = 0;      // EventDecoder::fields_ignored
  std::uint64_t with_fields = 0;  // events handed over with RawEvent::fields
  std::vector<bool> args_read;    // each event's RawEvent::args_read
  std::vector<std::string> compile_ids;
  std::uint64_t reader_events = 0;
  std::vector<std::string> warnings;
};

// `path` read and decoded as jitscope-report does (fields) or through the
// JSON text; `stop_after` > 0 stops the read at that event.
inline Decoded decode(const std::string& path, bool fields, std::size_t chunk,
                      std::size_t stop_after = 0,
                      std::size_t max_bytes = tools::TraceReader::kMaxEventBytes) {
  tools::TraceReader reader(chunk);
  reader.set_decoded_fields(fields);
  reader.set_max_event_bytes(max_bytes);
  tools::EventDecoder decoder;
  tools::DecodedEvent ev;
  Decoded d;
  d.ok = reader.read(
      path,
      [&](const tools::RawEvent& raw) {
        if (raw.fields != nullptr) ++d.with_fields;
        std::string why;
        if (!decoder.decode(raw, &ev, &why)) {
          d.events.push_back("error: " + why);
          return false;
        }
        d.events.push_back(decoded_event_text(ev));
        d.args_read.push_back(raw.args_read);
        d.compile_ids.emplace_back(ev.compile_id);
        if (stop_after != 0 && d.events.size() == stop_after) {
          d.error = "stopped";
          return false;
        }
        return true;
      },
      nullptr, &d.error);
  d.ignored = decoder.fields_ignored();
  d.reader_events = reader.events();
  d.warnings = tools::repair_warnings(reader.repairs());
  return d;
}

// Both readings of `path` agree, event by event; returns the fields one.
// Every event comes with its fields unless `all_fields` is false (times
// past 10^18 ns come as their JSON text).
inline Decoded expect_same(const std::string& path,
                           std::size_t chunk = tools::TraceReader::kDefaultChunkSize,
                           bool all_fields = true,
                           std::size_t max_bytes = tools::TraceReader::kMaxEventBytes) {
  const Decoded text = decode(path, false, chunk, 0, max_bytes);
  const Decoded direct = decode(path, true, chunk, 0, max_bytes);
  EXPECT_EQ(direct.ok, text.ok);
  EXPECT_EQ(direct.error, text.error);
  EXPECT_EQ(direct.ignored, text.ignored);
  EXPECT_EQ(direct.reader_events, text.reader_events);
  EXPECT_EQ(direct.warnings, text.warnings);
  EXPECT_EQ(text.with_fields, 0u);
  EXPECT_EQ(std::count(text.args_read.begin(), text.args_read.end(), true), 0);
  if (all_fields) EXPECT_EQ(direct.with_fields, direct.events.size());
  EXPECT_EQ(direct.events.size(), text.events.size());
  for (std::size_t i = 0; i < direct.events.size() && i < text.events.size(); ++i) {
    EXPECT_EQ(direct.events[i], text.events[i]) << "event " << i;
  }
  return direct;
}

}  // namespace jitscope::testing
