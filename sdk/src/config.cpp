// Config validation and the JITSCOPE_* environment variables. Every variable
// is checked strictly: a bad value or an unknown JITSCOPE_ name is an error
// that names it, never a silent default.
#include "clock.hpp"

#include <jitscope/jitscope.hpp>

#include <charconv>
#include <cstdlib>
#include <cstring>
#include <string>

extern char** environ;

namespace jitscope {
namespace {

struct KnownVariable {
  const char* name;
  const char* meaning;
};

// Also the list the README documents; keep them in step.
constexpr KnownVariable kVariables[] = {
    {"JITSCOPE_TRACE", "output path; starts a session at load, stops at exit"},
    {"JITSCOPE_RING_CAPACITY", "records per thread ring"},
    {"JITSCOPE_OVERFLOW", "drop|block"},
    {"JITSCOPE_FLUSH_INTERVAL_MS", "flusher period"},
    {"JITSCOPE_PROCESS_NAME", "process name in the trace"},
    {"JITSCOPE_CLOCK", "auto|tsc|monotonic"},
    {"JITSCOPE_METRICS", "compile records file (JSON lines)"},
    {"JITSCOPE_COMPILE_TIMES", "off|table|csv: compile-times report on stderr at stop"},
    {"JITSCOPE_PROGRESS", "0|1: progress bar on a terminal"},
};

bool parse_uint(const char* text, std::uint64_t& out) {
  const char* end = text + std::strlen(text);
  if (text == end) return false;
  auto [ptr, ec] = std::from_chars(text, end, out, 10);
  return ec == std::errc() && ptr == end;
}

Status range_error(const char* variable, const char* value, std::uint64_t lo, std::uint64_t hi) {
  return Status::error(std::string(variable) + "='" + value + "' is not a whole number in [" +
                       std::to_string(lo) + ", " + std::to_string(hi) + "]");
}

}  // namespace

Status Config::validate() const noexcept {
  try {
    if (output_path.empty()) return Status::error("no output path (set Config::output_path)");
    if (!metrics_path.empty() && metrics_path == output_path) {
      return Status::error("metrics_path and output_path are the same file: " + output_path);
    }
    if (ring_capacity < kMinRingCapacity || ring_capacity > kMaxRingCapacity) {
      return Status::error("ring_capacity " + std::to_string(ring_capacity) + " is outside [" +
                           std::to_string(kMinRingCapacity) + ", " +
                           std::to_string(kMaxRingCapacity) + "]");
    }
    if (flush_interval.count() < 1 || flush_interval.count() > 60000) {
      return Status::error("flush_interval " + std::to_string(flush_interval.count()) +
                           " ms is outside [1, 60000]");
    }
    if (clock == ClockChoice::kTsc && !detail::tsc_is_invariant()) {
      return Status::error("clock tsc requested, but this CPU's TSC is not invariant "
                           "(needs constant_tsc and nonstop_tsc)");
    }
    return {};
  } catch (...) {
    return Status::error("out of memory");
  }
}

Status Config::from_env(Config* out, bool require_trace) noexcept {
  if (out == nullptr) return Status::error("Config::from_env: null config");
  try {
    Config cfg = *out;
    // Unknown JITSCOPE_ names are most often typos of known ones.
    for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
      if (std::strncmp(*e, "JITSCOPE_", 9) != 0) continue;
      const char* eq = std::strchr(*e, '=');
      const std::string name(*e, eq ? static_cast<std::size_t>(eq - *e) : std::strlen(*e));
      bool known = false;
      for (const auto& v : kVariables) known = known || name == v.name;
      if (!known) {
        std::string list;
        for (const auto& v : kVariables) list += std::string(list.empty() ? "" : ", ") + v.name;
        return Status::error("unknown variable " + name + " (known: " + list + ")");
      }
    }
    if (const char* v = std::getenv("JITSCOPE_TRACE")) {
      if (*v == '\0') return Status::error("JITSCOPE_TRACE is set but empty");
      cfg.output_path = v;
    } else if (require_trace) {
      return Status::error("JITSCOPE_TRACE is not set");
    }
    if (const char* v = std::getenv("JITSCOPE_RING_CAPACITY")) {
      std::uint64_t n = 0;
      if (!parse_uint(v, n) || n < kMinRingCapacity || n > kMaxRingCapacity) {
        return range_error("JITSCOPE_RING_CAPACITY", v, kMinRingCapacity, kMaxRingCapacity);
      }
      cfg.ring_capacity = static_cast<std::size_t>(n);
    }
    if (const char* v = std::getenv("JITSCOPE_OVERFLOW")) {
      if (std::strcmp(v, "drop") == 0) {
        cfg.overflow = OverflowPolicy::kDrop;
      } else if (std::strcmp(v, "block") == 0) {
        cfg.overflow = OverflowPolicy::kBlock;
      } else {
        return Status::error(std::string("JITSCOPE_OVERFLOW='") + v + "' is not drop or block");
      }
    }
    if (const char* v = std::getenv("JITSCOPE_FLUSH_INTERVAL_MS")) {
      std::uint64_t n = 0;
      if (!parse_uint(v, n) || n < 1 || n > 60000) {
        return range_error("JITSCOPE_FLUSH_INTERVAL_MS", v, 1, 60000);
      }
      cfg.flush_interval = std::chrono::milliseconds(n);
    }
    if (const char* v = std::getenv("JITSCOPE_PROCESS_NAME")) {
      if (*v == '\0') return Status::error("JITSCOPE_PROCESS_NAME is set but empty");
      cfg.process_name = v;
    }
    if (const char* v = std::getenv("JITSCOPE_CLOCK")) {
      if (std::strcmp(v, "auto") == 0) {
        cfg.clock = ClockChoice::kAuto;
      } else if (std::strcmp(v, "tsc") == 0) {
        cfg.clock = ClockChoice::kTsc;
      } else if (std::strcmp(v, "monotonic") == 0) {
        cfg.clock = ClockChoice::kMonotonic;
      } else {
        return Status::error(std::string("JITSCOPE_CLOCK='") + v +
                             "' is not auto, tsc or monotonic");
      }
    }
    if (const char* v = std::getenv("JITSCOPE_METRICS")) {
      if (*v == '\0') return Status::error("JITSCOPE_METRICS is set but empty");
      cfg.metrics_path = v;
    }
    if (const char* v = std::getenv("JITSCOPE_COMPILE_TIMES")) {
      if (std::strcmp(v, "off") == 0) {
        cfg.compile_times = CompileTimesReport::kOff;
      } else if (std::strcmp(v, "table") == 0) {
        cfg.compile_times = CompileTimesReport::kTable;
      } else if (std::strcmp(v, "csv") == 0) {
        cfg.compile_times = CompileTimesReport::kCsv;
      } else {
        return Status::error(std::string("JITSCOPE_COMPILE_TIMES='") + v +
                             "' is not off, table or csv");
      }
    }
    if (const char* v = std::getenv("JITSCOPE_PROGRESS")) {
      if (std::strcmp(v, "0") != 0 && std::strcmp(v, "1") != 0) {
        return Status::error(std::string("JITSCOPE_PROGRESS='") + v + "' is not 0 or 1");
      }
    }
    if (Status st = cfg.validate(); !st) return st;
    *out = std::move(cfg);
    return {};
  } catch (...) {
    return Status::error("out of memory reading the environment");
  }
}

}  // namespace jitscope
