// A ring record built by hand, for the trace writers' tests that feed them
// record by record (tie_break_test, perfetto_writer_test).
#pragma once

#include "ring/record.hpp"

#include <cstdint>

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

}  // namespace jitscope::detail
