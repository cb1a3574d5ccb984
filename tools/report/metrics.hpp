// The metrics file (JITSCOPE_METRICS, docs/compile-units.md): one JSON
// object per line. Compile records carry "compile_id" ("3/1", or null for a
// runtime record); "record":"gpu" lines carry the unit's GPU totals.
#pragma once

#include "report_data.hpp"

#include <cstdint>
#include <map>
#include <string>

namespace jitscope::report {

struct MetricsFile {
  std::map<std::string, UnitMetrics> units;  // by compile_id
  std::uint64_t runtime_records = 0;
  std::int64_t runtime_duration_ns = 0;
  std::uint64_t autotune_records = 0;  // "record":"autotune": a tuning session each
  std::uint64_t lines = 0;
};

// false with *error = "<path>: line N: <what>" for an unreadable file, a
// line that is not a JSON object, a record without a usable compile_id, or
// a duration_us that is not a number of µs fitting in int64 ns (other *_us
// columns that do not fit are left out).
// Blank lines are skipped. Read through InputFile, as a trace is: "-" is
// stdin, and gzip'd input (metrics.jsonl.gz) is inflated as it is read.
bool read_metrics(const std::string& path, MetricsFile* out, std::string* error);

}  // namespace jitscope::report
