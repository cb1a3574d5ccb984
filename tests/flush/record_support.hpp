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

// Gives hand-built records the serials the producer writes (record.hpp):
// the tests describe a span's args by the depth of their span (Arg::index,
// 0 = outermost) and let each End close the innermost open span; this sets
// each End's value and each span arg's ts to its span's serial, the low 32
// bits of its Begin's ring position. Records are numbered from 0 across
// every call, as a fresh ring numbers them.
class SpanLinker {
 public:
  void link(std::vector<Record>& records) {
    std::uint32_t instant_args = 0;
    for (std::size_t i = 0; i < records.size();) {
      Record& r = records[i];
      const std::size_t slots = group_slots(r);
      switch (r.kind) {
        case RecordKind::kBegin: open_.push_back(static_cast<std::uint32_t>(next_ + i)); break;
        case RecordKind::kEnd:
          if (!open_.empty()) {
            r.value.u64 = open_.back();
            open_.pop_back();
          }
          break;
        case RecordKind::kInstant: instant_args = r.index; break;
        case RecordKind::kArg:
          if (instant_args > 0) {
            --instant_args;
          } else if (r.index < open_.size()) {
            r.ts = open_[r.index];
            r.index = 0;
          }
          break;
        default: break;
      }
      i += slots;
    }
    next_ += records.size();
  }

 private:
  std::vector<std::uint32_t> open_;
  std::uint64_t next_ = 0;
};

// The same for one batch that is the whole of a ring's records.
inline std::vector<Record> linked(std::vector<Record> records) {
  SpanLinker().link(records);
  return records;
}

// The JSON trace one writer makes of `records`, as one thread's ring holds
// them from position 0 (no linking: the serials are the caller's); with
// `close_at`, the spans still open are closed there as at a stop or a crash.
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
