// A ring record built by hand, for the trace writers' tests that feed them
// record by record (tie_break_test, perfetto_writer_test).
#pragma once

#include "flush/trace_writer.hpp"
#include "ring/record.hpp"
#include "ring/thread_registry.hpp"

#include <cstdint>
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

}  // namespace jitscope::detail
