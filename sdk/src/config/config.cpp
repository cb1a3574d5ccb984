// Config validation and the JITSCOPE_* environment variables. Every variable
// is checked strictly: a bad value or an unknown JITSCOPE_ name is an error
// that names it, never a silent default.
#include "base/boundary.hpp"
#include "base/env_variables.hpp"
#include "base/spawn_flow.hpp"
#include "clock/clock.hpp"
#include "crash/signal_names.hpp"
#include "cupti/cupti.hpp"

#include <jitscope/jitscope.hpp>

#include <charconv>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>

namespace jitscope {
namespace {

bool parse_uint(const char* text, std::uint64_t& out) {
  const char* end = text + std::strlen(text);
  if (text == end) return false;
  auto [ptr, ec] = std::from_chars(text, end, out, 10);
  return ec == std::errc() && ptr == end;
}

// A byte size: digits, then an optional K, M or G (powers of 1024).
bool parse_size(const char* text, std::uint64_t& out) {
  std::size_t n = std::strlen(text);
  if (n == 0) return false;
  unsigned shift = 0;
  switch (text[n - 1]) {
    case 'K':
      shift = 10;
      --n;
      break;
    case 'M':
      shift = 20;
      --n;
      break;
    case 'G':
      shift = 30;
      --n;
      break;
    default: break;
  }
  std::uint64_t value = 0;
  if (n == 0) return false;
  auto [ptr, ec] = std::from_chars(text, text + n, value, 10);
  if (ec != std::errc() || ptr != text + n) return false;
  if (shift != 0 && value > (std::numeric_limits<std::uint64_t>::max() >> shift)) return false;
  out = value << shift;
  return true;
}

// A size variable: 0 (off) or at least kMinTraceBytes.
Status parse_trace_size(const char* variable, const char* text, std::uint64_t& out) {
  std::uint64_t n = 0;
  if (!parse_size(text, n) || (n != 0 && n < kMinTraceBytes)) {
    return Status::error(
        std::string(variable) + "='" + text +
        "' is not 0 or a size of at least 64K (bytes, or a number with K, M or G)");
  }
  out = n;
  return {};
}

Status range_error(const char* variable, const char* value, std::uint64_t lo, std::uint64_t hi) {
  return Status::error(std::string(variable) + "='" + value + "' is not a whole number in [" +
                       std::to_string(lo) + ", " + std::to_string(hi) + "]");
}

template <class E>
struct Choice {
  const char* word;
  E value;
};

// `variable`'s value is one of a fixed set of words: sets `out`, or an error
// that lists them ("... is not a, b or c").
template <class E, std::size_t N>
Status parse_choice(const char* variable, const char* text, const Choice<E> (&choices)[N], E& out) {
  for (const Choice<E>& c : choices) {
    if (std::strcmp(text, c.word) == 0) {
      out = c.value;
      return {};
    }
  }
  std::string list;
  for (std::size_t i = 0; i < N; ++i) {
    list += std::string(i == 0 ? "" : i + 1 == N ? " or " : ", ") + choices[i].word;
  }
  return Status::error(std::string(variable) + "='" + text + "' is not " + list);
}

// "500ms", "2s" or a number of ms, at most a day.
bool parse_duration_ms(std::string_view text, std::chrono::milliseconds& out) {
  std::uint64_t scale = 1;
  if (text.size() > 2 && text.substr(text.size() - 2) == "ms") {
    text.remove_suffix(2);
  } else if (text.size() > 1 && text.back() == 's') {
    text.remove_suffix(1);
    scale = 1000;
  }
  std::uint64_t n = 0;
  if (!parse_uint(std::string(text).c_str(), n) || n > 86'400'000 / scale) return false;
  out = std::chrono::milliseconds(n * scale);
  return true;
}

// A 1-or-0 variable.
Status parse_flag(const char* variable, const char* text, bool& out) {
  static constexpr Choice<bool> kChoices[] = {{"1", true}, {"0", false}};
  return parse_choice(variable, text, kChoices, out);
}

// A variable that, when set, must not be empty.
Status parse_nonempty(const char* variable, const char* text, std::string& out) {
  if (*text == '\0') return Status::error(std::string(variable) + " is set but empty");
  out = text;
  return {};
}

}  // namespace

Status Config::validate() const noexcept {
  return detail::guarded_status("validating the config", [&]() -> Status {
    if (output_path.empty()) return Status::error("no output path (set Config::output_path)");
    if (!metrics_path.empty() && metrics_path == output_path) {
      return Status::error("metrics_path and output_path are the same file: " + output_path);
    }
    if (parent_pid < 0 || parent_pid > detail::kMaxPid) {
      return Status::error("parent_pid " + std::to_string(parent_pid) + " is outside [0, " +
                           std::to_string(detail::kMaxPid) + "]");
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
    if (cupti_buffer_bytes < detail::kMinCuptiBufferBytes ||
        cupti_buffer_bytes > detail::kMaxCuptiBufferBytes || cupti_buffer_bytes % 8 != 0) {
      return Status::error("cupti_buffer_bytes " + std::to_string(cupti_buffer_bytes) +
                           " is not a multiple of 8 in [" +
                           std::to_string(detail::kMinCuptiBufferBytes) + ", " +
                           std::to_string(detail::kMaxCuptiBufferBytes) + "]");
    }
    if (cupti_buffers < detail::kMinCuptiBuffers || cupti_buffers > detail::kMaxCuptiBuffers) {
      return Status::error("cupti_buffers " + std::to_string(cupti_buffers) + " is outside [" +
                           std::to_string(detail::kMinCuptiBuffers) + ", " +
                           std::to_string(detail::kMaxCuptiBuffers) + "]");
    }
    for (const auto& [what, bytes] :
         {std::pair{"max_trace_bytes", max_trace_bytes}, std::pair{"rotate_bytes", rotate_bytes}}) {
      if (bytes != 0 && bytes < kMinTraceBytes) {
        return Status::error(std::string(what) + " " + std::to_string(bytes) +
                             " is below the minimum of " + std::to_string(kMinTraceBytes) +
                             " bytes (0 turns it off)");
      }
    }
    if (flight_recorder_bytes != 0) {
      if (flight_recorder_bytes < kMinTraceBytes) {
        return Status::error("flight_recorder_bytes " + std::to_string(flight_recorder_bytes) +
                             " is below the minimum of " + std::to_string(kMinTraceBytes) +
                             " bytes (0 turns the flight recorder off)");
      }
      if (max_trace_bytes != 0 || rotate_bytes != 0) {
        return Status::error(
            "the flight recorder's window bounds the trace: max_trace_bytes and rotate_bytes "
            "(JITSCOPE_MAX_TRACE_SIZE, JITSCOPE_ROTATE_SIZE) do not apply with it");
      }
      if (max_snapshots < 1) return Status::error("max_snapshots must be at least 1");
    }
    if (snapshot_signal != 0) {
      if (detail::signal_number(std::to_string(snapshot_signal)) == 0) {
        return Status::error("snapshot_signal " + std::to_string(snapshot_signal) +
                             " is not SIGUSR1, SIGUSR2, SIGHUP, SIGWINCH or SIGURG");
      }
      if (flight_recorder_bytes == 0) {
        return Status::error(
            "snapshot_signal (JITSCOPE_SNAPSHOT_SIGNAL) asks the flight recorder for "
            "snapshots: set flight_recorder_bytes (JITSCOPE_FLIGHT) too");
      }
    }
    if (snapshot_slow_unit.count() < 0 || snapshot_slow_unit.count() > 86'400'000) {
      return Status::error("snapshot_slow_unit " + std::to_string(snapshot_slow_unit.count()) +
                           " ms is outside [0, 86400000] (0: off)");
    }
    if (snapshot_miss_storm > 100'000) {
      return Status::error("snapshot_miss_storm " + std::to_string(snapshot_miss_storm) +
                           " is outside [0, 100000] (0: off)");
    }
    if (snapshot_miss_storm_window.count() < 1 || snapshot_miss_storm_window.count() > 86'400'000) {
      return Status::error("snapshot_miss_storm_window " +
                           std::to_string(snapshot_miss_storm_window.count()) +
                           " ms is outside [1, 86400000] (a day)");
    }
    if (snapshot_min_interval.count() < 0 || snapshot_min_interval.count() > 86'400'000) {
      return Status::error("snapshot_min_interval " +
                           std::to_string(snapshot_min_interval.count()) +
                           " ms is outside [0, 86400000] (a day)");
    }
    if (compression != TraceCompression::kNone && compression != TraceCompression::kDeflate &&
        compression != TraceCompression::kZstd) {
      return Status::error("compression " + std::to_string(static_cast<int>(compression)) +
                           " is not kNone, kDeflate or kZstd");
    }
    if (clock == ClockChoice::kTsc && !detail::tsc_is_invariant()) {
      return Status::error(
          "clock tsc requested, but this CPU's TSC is not invariant "
          "(needs constant_tsc and nonstop_tsc)");
    }
    return {};
  });
}

Status Config::from_env(Config* out, bool require_trace) noexcept {
  if (out == nullptr) return Status::error("Config::from_env: null config");
  return detail::guarded_status("reading the JITSCOPE_* environment", [&]() -> Status {
    Config cfg = *out;
    // Unknown JITSCOPE_ names are most often typos of known ones.
    if (std::string unknown = detail::unknown_variables(); !unknown.empty()) {
      return Status::error(unknown);
    }
    if (const char* v = std::getenv("JITSCOPE_TRACE")) {
      if (Status st = parse_nonempty("JITSCOPE_TRACE", v, cfg.output_path); !st) return st;
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
      static constexpr Choice<OverflowPolicy> kChoices[] = {{"drop", OverflowPolicy::kDrop},
                                                            {"block", OverflowPolicy::kBlock}};
      if (Status st = parse_choice("JITSCOPE_OVERFLOW", v, kChoices, cfg.overflow); !st) return st;
    }
    if (const char* v = std::getenv("JITSCOPE_FORMAT")) {
      static constexpr Choice<TraceFormat> kChoices[] = {{"json", TraceFormat::kJson},
                                                         {"perfetto", TraceFormat::kPerfetto}};
      if (Status st = parse_choice("JITSCOPE_FORMAT", v, kChoices, cfg.format); !st) return st;
    }
    if (const char* v = std::getenv("JITSCOPE_COMPRESSION")) {
      static constexpr Choice<TraceCompression> kChoices[] = {
          {"none", TraceCompression::kNone},
          {"deflate", TraceCompression::kDeflate},
          {"zstd", TraceCompression::kZstd}};
      if (Status st = parse_choice("JITSCOPE_COMPRESSION", v, kChoices, cfg.compression); !st) {
        return st;
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
      if (Status st = parse_nonempty("JITSCOPE_PROCESS_NAME", v, cfg.process_name); !st) return st;
    }
    if (const char* v = std::getenv("JITSCOPE_CLOCK")) {
      static constexpr Choice<ClockChoice> kChoices[] = {{"auto", ClockChoice::kAuto},
                                                         {"tsc", ClockChoice::kTsc},
                                                         {"monotonic", ClockChoice::kMonotonic}};
      if (Status st = parse_choice("JITSCOPE_CLOCK", v, kChoices, cfg.clock); !st) return st;
    }
    if (const char* v = std::getenv("JITSCOPE_METRICS")) {
      if (Status st = parse_nonempty("JITSCOPE_METRICS", v, cfg.metrics_path); !st) return st;
    }
    if (const char* v = std::getenv("JITSCOPE_COMPILE_TIMES")) {
      static constexpr Choice<CompileTimesReport> kChoices[] = {
          {"off", CompileTimesReport::kOff},
          {"table", CompileTimesReport::kTable},
          {"csv", CompileTimesReport::kCsv}};
      if (Status st = parse_choice("JITSCOPE_COMPILE_TIMES", v, kChoices, cfg.compile_times); !st) {
        return st;
      }
    }
    if (const char* v = std::getenv("JITSCOPE_PROGRESS")) {
      // Read by the progress bar itself (step_log.cpp); checked here with the rest.
      static constexpr Choice<bool> kChoices[] = {{"0", false}, {"1", true}};
      bool progress = false;
      if (Status st = parse_choice("JITSCOPE_PROGRESS", v, kChoices, progress); !st) return st;
    }
    if (const char* v = std::getenv("JITSCOPE_NVTX")) {
      enum class Nvtx { kOn, kOff, kEmit, kCapture };
      static constexpr Choice<Nvtx> kChoices[] = {{"on", Nvtx::kOn},
                                                  {"off", Nvtx::kOff},
                                                  {"emit", Nvtx::kEmit},
                                                  {"capture", Nvtx::kCapture}};
      Nvtx nvtx = Nvtx::kOn;
      if (Status st = parse_choice("JITSCOPE_NVTX", v, kChoices, nvtx); !st) return st;
      cfg.nvtx_emit = nvtx == Nvtx::kOn || nvtx == Nvtx::kEmit;
      cfg.nvtx_capture = nvtx == Nvtx::kOn || nvtx == Nvtx::kCapture;
    }
    if (const char* v = std::getenv("JITSCOPE_CUPTI")) {
      static constexpr Choice<CuptiMode> kChoices[] = {
          {"auto", CuptiMode::kAuto}, {"on", CuptiMode::kOn}, {"off", CuptiMode::kOff}};
      if (Status st = parse_choice("JITSCOPE_CUPTI", v, kChoices, cfg.cupti); !st) return st;
    }
    if (const char* v = std::getenv("JITSCOPE_CUPTI_BUFFER_KB")) {
      constexpr std::uint64_t lo = detail::kMinCuptiBufferBytes / 1024;
      constexpr std::uint64_t hi = detail::kMaxCuptiBufferBytes / 1024;
      std::uint64_t n = 0;
      if (!parse_uint(v, n) || n < lo || n > hi)
        return range_error("JITSCOPE_CUPTI_BUFFER_KB", v, lo, hi);
      cfg.cupti_buffer_bytes = static_cast<std::size_t>(n) * 1024;
    }
    if (const char* v = std::getenv("JITSCOPE_CUPTI_BUFFERS")) {
      std::uint64_t n = 0;
      if (!parse_uint(v, n) || n < detail::kMinCuptiBuffers || n > detail::kMaxCuptiBuffers) {
        return range_error("JITSCOPE_CUPTI_BUFFERS", v, detail::kMinCuptiBuffers,
                           detail::kMaxCuptiBuffers);
      }
      cfg.cupti_buffers = static_cast<std::size_t>(n);
    }
    if (const char* v = std::getenv("JITSCOPE_CRASH_HANDLER")) {
      if (Status st = parse_flag("JITSCOPE_CRASH_HANDLER", v, cfg.crash_handler); !st) return st;
    }
    if (const char* v = std::getenv("JITSCOPE_MAX_TRACE_SIZE")) {
      if (Status st = parse_trace_size("JITSCOPE_MAX_TRACE_SIZE", v, cfg.max_trace_bytes); !st) {
        return st;
      }
    }
    if (const char* v = std::getenv("JITSCOPE_ROTATE_SIZE")) {
      if (Status st = parse_trace_size("JITSCOPE_ROTATE_SIZE", v, cfg.rotate_bytes); !st) return st;
    }
    if (const char* v = std::getenv("JITSCOPE_FLIGHT")) {
      if (Status st = parse_trace_size("JITSCOPE_FLIGHT", v, cfg.flight_recorder_bytes); !st) {
        return st;
      }
    }
    if (const char* v = std::getenv("JITSCOPE_MAX_SNAPSHOTS")) {
      std::uint64_t n = 0;
      if (!parse_uint(v, n) || n < 1 || n > 100000) {
        return range_error("JITSCOPE_MAX_SNAPSHOTS", v, 1, 100000);
      }
      cfg.max_snapshots = static_cast<std::uint32_t>(n);
    }
    if (const char* v = std::getenv("JITSCOPE_SNAPSHOT_SLOW_UNIT")) {
      if (!parse_duration_ms(v, cfg.snapshot_slow_unit)) {
        return Status::error(std::string("JITSCOPE_SNAPSHOT_SLOW_UNIT=") + v +
                             ": not a duration of at most a day (500ms, 2s, or ms)");
      }
    }
    if (const char* v = std::getenv("JITSCOPE_SNAPSHOT_MISS_STORM")) {
      // "20/10s": 20 misses within 10 s; "20": within the default window.
      const std::string_view text = v;
      const std::size_t slash = text.find('/');
      std::uint64_t n = 0;
      if (!parse_uint(std::string(text.substr(0, slash)).c_str(), n) || n > 100'000 ||
          (slash != std::string_view::npos &&
           (!parse_duration_ms(text.substr(slash + 1), cfg.snapshot_miss_storm_window) ||
            cfg.snapshot_miss_storm_window.count() == 0))) {
        return Status::error(std::string("JITSCOPE_SNAPSHOT_MISS_STORM=") + v +
                             ": not <misses>/<duration> (20/10s, 50/500ms; at most 100000 "
                             "misses and a day; 0, off)");
      }
      cfg.snapshot_miss_storm = static_cast<std::uint32_t>(n);
    }
    if (const char* v = std::getenv("JITSCOPE_SNAPSHOT_AFTER_READY")) {
      if (Status st = parse_flag("JITSCOPE_SNAPSHOT_AFTER_READY", v, cfg.snapshot_after_ready); !st)
        return st;
    }
    if (const char* v = std::getenv("JITSCOPE_SNAPSHOT_FAILED_UNIT")) {
      if (Status st = parse_flag("JITSCOPE_SNAPSHOT_FAILED_UNIT", v, cfg.snapshot_failed_unit); !st)
        return st;
    }
    if (const char* v = std::getenv("JITSCOPE_SNAPSHOT_SIGNAL")) {
      cfg.snapshot_signal = detail::signal_number(v);
      if (cfg.snapshot_signal == 0) {
        return Status::error(std::string("JITSCOPE_SNAPSHOT_SIGNAL=") + v +
                             ": not SIGUSR1, SIGUSR2, SIGHUP, SIGWINCH or SIGURG (a name, "
                             "with or without SIG, or its number)");
      }
    }
    if (const char* v = std::getenv("JITSCOPE_SNAPSHOT_MIN_INTERVAL_MS")) {
      std::uint64_t n = 0;
      if (!parse_uint(v, n) || n > 86'400'000) {
        return range_error("JITSCOPE_SNAPSHOT_MIN_INTERVAL_MS", v, 0, 86'400'000);
      }
      cfg.snapshot_min_interval = std::chrono::milliseconds(n);
    }
    if (const char* v = std::getenv("JITSCOPE_ARTIFACTS")) {
      if (Status st = parse_nonempty("JITSCOPE_ARTIFACTS", v, cfg.artifacts_dir); !st) return st;
    }
    if (const char* v = std::getenv("JITSCOPE_MAX_ARTIFACT_SIZE")) {
      if (!parse_size(v, cfg.max_artifact_bytes)) {
        return Status::error(std::string("JITSCOPE_MAX_ARTIFACT_SIZE='") + v +
                             "' is not a byte count (digits with an optional K, M or G; 0: "
                             "artifacts off)");
      }
    }
    if (const char* v = std::getenv("JITSCOPE_PARENT_PID")) {
      if (!detail::parse_parent_pid(v, cfg.parent_pid)) {
        return range_error("JITSCOPE_PARENT_PID", v, 1, detail::kMaxPid);
      }
    }
    if (Status st = cfg.validate(); !st) return st;
    *out = std::move(cfg);
    return {};
  });
}

}  // namespace jitscope
