// What a TraceReader gives for one file at one chunk size, for the reader's
// tests: its events (json, byte offset), top-level fields, end state and
// repairs. Every event's simdjson padding is read, so that ASan checks it.
#pragma once

#include <trace_reader.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace jitscope::testing {

struct ReaderOutput {
  bool ok = false;
  std::string error;
  std::vector<std::pair<std::string, std::uint64_t>> events;  // json, offset
  std::vector<std::pair<std::string, std::string>> fields;    // key, raw json
  bool unterminated = false;
  tools::InputRepairs repairs;
  std::vector<std::string> warnings;  // repair_warnings(repairs)
};

inline ReaderOutput read_with(const std::string& path, std::size_t chunk) {
  tools::TraceReader reader(chunk);
  ReaderOutput r;
  r.ok = reader.read(
      path,
      [&](const tools::RawEvent& e) {
        volatile char sink = 0;
        for (std::size_t k = 0; k < tools::kJsonPadding; ++k)
          sink = sink + e.json.data()[e.json.size() + k];
        r.events.emplace_back(std::string(e.json), e.offset);
        return true;
      },
      [&](const tools::TopLevelField& f) { r.fields.emplace_back(f.key, f.raw_json); }, &r.error);
  r.unterminated = reader.unterminated();
  r.repairs = reader.repairs();
  r.warnings = tools::repair_warnings(reader.repairs());
  if (r.ok) EXPECT_EQ(reader.events(), r.events.size());
  return r;
}

}  // namespace jitscope::testing
