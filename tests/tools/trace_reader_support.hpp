// What a TraceReader gives for one file at one chunk size, for the reader's
// tests: its events (json, byte offset), top-level fields, end state and
// repairs. Every event's simdjson padding is read, so that ASan checks it.
// And traces to read: bytes in a file, a session the SDK writes.
#pragma once

#include "trace_support.hpp"

#include <trace_reader.hpp>

#include <jitscope/compile.hpp>
#include <jitscope/jitscope.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
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

// `bytes` in a new temporary file; its path.
inline std::string write_trace_file(const std::string& bytes, const std::string& stem) {
  const std::string path = temp_path(stem);
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

// A session of every kind of SDK event (a unit with a phase, a span with
// args of each type and text to escape, an instant, a counter, a failure,
// a thread name with quotes, repeated spans) in `format`; the trace's path.
inline std::string write_sdk_trace(const std::string& stem, TraceFormat format) {
  Config cfg = test_config(stem);
  cfg.format = format;
  EXPECT_TRUE(start(cfg).ok());
  set_thread_name("worker \"one\"");
  {
    CompileUnit unit({.frame = "kernel_7", .key = "k7"});
    Phase phase("lower", {.column = "lower_us"});
    JITSCOPE_SPAN_ARGS("pass", {"n", std::int64_t{-42}}, {"ratio", 0.125}, {"ok", true},
                       {"ir", std::string_view("func @main \xC3\xA9 \"q\"\n")});
    instant("cache_miss", {{"key", std::string_view("abc")}});
    counter("bytes", 123456789);
    unit.fail("ValueError", "bad \\ shape");
  }
  for (int i = 0; i < 20; ++i) JITSCOPE_SPAN("loop");
  EXPECT_TRUE(stop().ok());
  return cfg.output_path;
}

}  // namespace jitscope::testing
