// Ring records built by hand, and a writer fed with them, for the trace
// writers' tests (tie_break_test, perfetto_writer_test, drain_cut_test,
// record_decode_test), and the events such a writer made.
#pragma once

#include "flush/perfetto_wire.hpp"
#include "format/trace_writer.hpp"
#include "ring/record.hpp"
#include "ring/thread_registry.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace jitscope::detail {

inline Record record(RecordKind kind, std::uint64_t ts, const char* name, std::uint8_t index,
                     std::uint8_t flags = 0) {
  Record r{};
  r.ts = ts;
  r.name = name;
  r.kind = kind;
  r.type = ValueType::kNone;
  r.index = index;
  r.flags = flags;
  return r;
}

// The JSON trace one writer makes of `records`, as one thread's ring holds
// them from position 0; with `close_at`, the spans still open are closed
// there as at a stop or a crash.
inline std::string write_json_trace(const std::vector<Record>& records,
                                    std::uint64_t close_at = 0) {
  struct StringSink final : TraceSink {
    void write(std::string_view bytes) noexcept override { text.append(bytes); }
    std::string text;
  } sink;
  SessionInfo info;
  info.process_name = "records";
  info.pid = 1;
  info.conversion = ClockConversion::identity();
  info.overflow = "block";
  TraceWriter writer(sink, info);
  writer.begin_trace();
  ThreadState t(1u << kSessionGenerationShift, 1024, OverflowPolicy::kBlock, 7, "t");
  for (std::size_t i = 0; i < records.size(); ++i) t.ring.slot(i) = records[i];
  t.ring.commit(records.size());
  writer.drain(t);
  if (close_at != 0) writer.close_open_spans(t, close_at);
  writer.settle(t);
  writer.end_trace();
  return sink.text;
}

// A sink that keeps each file it is given (rotation: one more).
class FilesSink final : public TraceSink {
 public:
  explicit FilesSink(bool rotate) : rotate_(rotate) { files.emplace_back(); }
  void write(std::string_view bytes) noexcept override { files.back().append(bytes); }
  bool can_rotate() const noexcept override { return rotate_; }
  bool next_file() noexcept override {
    files.emplace_back();
    return true;
  }
  std::vector<std::string> files;

 private:
  bool rotate_;
};

// The records of one thread's ring, built in order.
struct Records {
  std::vector<Record> r;
  void add(const Record& x) { r.push_back(x); }
  void bytes(std::string_view s) {
    const std::size_t at = r.size();
    r.resize(at + payload_slots(s.size()));
    std::memcpy(static_cast<void*>(r.data() + at), s.data(), s.size());
  }
  void begin(std::uint64_t ts, const char* name, std::uint8_t depth, std::uint8_t flags = 0,
             std::uint64_t unit = 0) {
    Record x = record(RecordKind::kBegin, ts, name, depth, flags);
    x.value.u64 = unit;
    add(x);
  }
  void begin_dyn(std::uint64_t ts, std::string_view name, std::uint8_t depth) {
    Record x = record(RecordKind::kBegin, ts, nullptr, depth, kFlagDynamicName);
    x.name_len = static_cast<std::uint32_t>(name.size());
    add(x);
    bytes(name);
  }
  void end(std::uint64_t ts) { add(record(RecordKind::kEnd, ts, nullptr, 0)); }
  void arg_int(std::uint8_t on, const char* key, std::int64_t v) {
    Record x = record(RecordKind::kArg, 0, key, on);
    x.type = ValueType::kInt;
    x.value.i64 = v;
    add(x);
  }
  void arg_uint(std::uint8_t on, const char* key, std::uint64_t v) {
    Record x = record(RecordKind::kArg, 0, key, on);
    x.type = ValueType::kUint;
    x.value.u64 = v;
    add(x);
  }
  void arg_double(std::uint8_t on, const char* key, double v) {
    Record x = record(RecordKind::kArg, 0, key, on);
    x.type = ValueType::kDouble;
    x.value.f64 = v;
    add(x);
  }
  void arg_bool(std::uint8_t on, const char* key, bool v) {
    Record x = record(RecordKind::kArg, 0, key, on);
    x.type = ValueType::kBool;
    x.value.u64 = v ? 1 : 0;
    add(x);
  }
  void arg_string(std::uint8_t on, const char* key, std::string_view v,
                  ValueType type = ValueType::kString) {
    Record x = record(RecordKind::kArg, 0, key, on);
    x.type = type;
    x.value.u64 = v.size();
    add(x);
    bytes(v);
  }
  void instant(std::uint64_t ts, const char* name, std::uint8_t args) {
    add(record(RecordKind::kInstant, ts, name, args));
  }
  void counter(std::uint64_t ts, const char* name, double v) {
    Record x = record(RecordKind::kCounter, ts, name, 0);
    x.value.f64 = v;
    add(x);
  }
  void captured(CapturedKind kind, std::uint64_t begin, std::uint64_t end, const char* name) {
    Record x = record(RecordKind::kCaptured, begin, name, static_cast<std::uint8_t>(kind));
    x.value.u64 = end;
    add(x);
    Record extra{};
    const CapturedExtra c{nullptr, 0, 0, 0, 0};
    std::memcpy(static_cast<void*>(&extra), &c, sizeof c);
    add(extra);
  }
};

// How write_trace's writer is set up and fed.
struct Options {
  bool perfetto = false;
  std::uint64_t max_bytes = 0;
  std::uint64_t rotate = 0;
  std::uint64_t close_at = 0;
  std::size_t batch = 0;  // records per drain (0: all at once)
};

// What one writer made of `records` (one thread's, drained `batch` at a time).
struct WrittenTrace {
  std::vector<std::string> files;
  std::uint64_t events = 0, over_cap = 0, incomplete = 0, decode_errors = 0;
};

inline WrittenTrace write_trace(const std::vector<Record>& records, const Options& o) {
  FilesSink sink(o.rotate != 0);
  SessionInfo info;
  info.process_name = "pf";
  info.pid = 4242;
  info.conversion = ClockConversion::identity();
  info.overflow = "block";
  info.host = "h";
  info.perfetto = o.perfetto;
  info.max_trace_bytes = o.max_bytes;
  info.rotate_bytes = o.rotate;
  TraceWriter writer(sink, info);
  writer.begin_trace();
  ThreadState t(1u << kSessionGenerationShift, 1u << 12, OverflowPolicy::kBlock, 7, "worker");
  const std::size_t batch = o.batch != 0 ? o.batch : 1000;
  for (std::size_t at = 0; at < records.size();) {
    const std::size_t n = std::min(batch, records.size() - at);
    for (std::size_t i = 0; i < n; ++i) t.ring.slot(i) = records[at + i];
    t.ring.commit(n);
    writer.drain(t);
    at += n;
  }
  if (o.close_at != 0) writer.close_open_spans(t, o.close_at);
  writer.settle(t);
  writer.end_trace();
  return {sink.files, writer.events_written(), writer.events_over_cap(), writer.spans_incomplete(),
          writer.decode_errors()};
}

// The events of a trace, in file order, without the metadata whose values
// are the writer's own clock (the session's, the stats').
inline std::vector<nlohmann::json> events_of(const WrittenTrace& w, bool perfetto) {
  using nlohmann::json;
  std::vector<json> out;
  for (const std::string& f : w.files) {
    std::vector<json> file;
    if (perfetto) {
      testing::pfwire::Reader reader;
      bool cut = true;
      reader.read(f, &cut);
      EXPECT_FALSE(cut);
      for (const std::string& e : reader.errors) ADD_FAILURE() << e;
      file = reader.events;
    } else {
      std::string text = f;
      while (!text.empty() && text.back() == '\n') text.pop_back();
      if (!text.empty() && text.back() != ']') text += "]";
      for (const json& e : json::parse(text)) file.push_back(e);
    }
    for (const json& e : file) {
      const std::string name = e.value("name", "");
      if (e.value("ph", "") == "M" && name.starts_with("jitscope_")) continue;
      out.push_back(e);
    }
  }
  return out;
}

}  // namespace jitscope::detail
