// The C API: thin, null-safe wrappers over the C++ one.
#include <jitscope/jitscope.h>
#include <jitscope/jitscope.hpp>

#include "api/c_last_error.hpp"
#include "base/boundary.hpp"
#include "base/log.hpp"
#include "ring/thread_registry.hpp"

#include <algorithm>
#include <cstring>
#include <string>
#include <type_traits>

namespace {

// A plain array, not a std::string: glibc destroys the main thread's
// thread_locals before atexit handlers, which may still call jitscope_stop().
thread_local char t_last_error[512];

// An enum field as the integer the caller stored. C lets an enum object hold
// any int; loading one outside the enumerators' range as the enum type is
// undefined in C++ (UBSan's -fsanitize=enum stops the host there).
template <class E>
long long raw_enum(const E& field) noexcept {
  std::underlying_type_t<E> value;
  static_assert(sizeof value == sizeof field);
  std::memcpy(&value, &field, sizeof value);
  return static_cast<long long>(static_cast<std::make_signed_t<std::underlying_type_t<E>>>(value));
}

}  // namespace

void jitscope_set_c_last_error(const jitscope::Status& st) noexcept {
  const std::string& msg = st.message();
  const std::size_t n = st.ok() ? 0 : std::min(msg.size(), sizeof t_last_error - 1);
  std::memcpy(t_last_error, msg.data(), n);
  t_last_error[n] = '\0';
}

extern "C" {

void jitscope_config_init(jitscope_config* cfg) {
  if (cfg == nullptr) return;
  cfg->output_path = nullptr;
  cfg->ring_capacity = jitscope::kDefaultRingCapacity;
  cfg->overflow = JITSCOPE_OVERFLOW_DROP;
  cfg->flush_interval_ms = static_cast<unsigned>(jitscope::kDefaultFlushInterval.count());
  cfg->process_name = nullptr;
  cfg->cupti = JITSCOPE_CUPTI_AUTO;
  cfg->crash_handler = 1;
  cfg->max_trace_bytes = 0;
  cfg->rotate_bytes = 0;
  cfg->format = JITSCOPE_FORMAT_AUTO;
  cfg->compression = JITSCOPE_COMPRESSION_NONE;
}

int jitscope_start(const jitscope_config* cfg) {
  const jitscope::Status st = jitscope::detail::guarded_status("jitscope_start", [&] {
    jitscope::Status result;
    jitscope::Config config;
    if (cfg == nullptr) {
      result = jitscope::Config::from_env(&config);
      if (!result) jitscope::detail::log_line("no session started: " + result.message());
    } else {
      if (cfg->output_path != nullptr) config.output_path = cfg->output_path;
      config.ring_capacity = cfg->ring_capacity;
      const long long overflow = raw_enum(cfg->overflow);
      if (overflow != JITSCOPE_OVERFLOW_DROP && overflow != JITSCOPE_OVERFLOW_BLOCK) {
        result = jitscope::Status::error("overflow must be JITSCOPE_OVERFLOW_DROP or _BLOCK");
      }
      config.overflow = overflow == JITSCOPE_OVERFLOW_BLOCK ? jitscope::OverflowPolicy::kBlock
                                                            : jitscope::OverflowPolicy::kDrop;
      config.flush_interval = std::chrono::milliseconds(cfg->flush_interval_ms);
      if (cfg->process_name != nullptr) config.process_name = cfg->process_name;
      switch (cfg->cupti) {
        case JITSCOPE_CUPTI_AUTO: config.cupti = jitscope::CuptiMode::kAuto; break;
        case JITSCOPE_CUPTI_ON: config.cupti = jitscope::CuptiMode::kOn; break;
        case JITSCOPE_CUPTI_OFF: config.cupti = jitscope::CuptiMode::kOff; break;
        default:
          if (result)
            result = jitscope::Status::error("cupti must be JITSCOPE_CUPTI_AUTO, _ON or _OFF");
      }
      if (cfg->crash_handler != 0 && cfg->crash_handler != 1 && result) {
        result = jitscope::Status::error("crash_handler must be 0 or 1");
      }
      config.crash_handler = cfg->crash_handler != 0;
      config.max_trace_bytes = cfg->max_trace_bytes;
      config.rotate_bytes = cfg->rotate_bytes;
      switch (cfg->format) {
        case JITSCOPE_FORMAT_AUTO: config.format = jitscope::TraceFormat::kAuto; break;
        case JITSCOPE_FORMAT_JSON: config.format = jitscope::TraceFormat::kJson; break;
        case JITSCOPE_FORMAT_PERFETTO: config.format = jitscope::TraceFormat::kPerfetto; break;
        default:
          if (result) {
            result =
                jitscope::Status::error("format must be JITSCOPE_FORMAT_AUTO, _JSON or _PERFETTO");
          }
      }
      switch (cfg->compression) {
        case JITSCOPE_COMPRESSION_NONE:
          config.compression = jitscope::TraceCompression::kNone;
          break;
        case JITSCOPE_COMPRESSION_DEFLATE:
          config.compression = jitscope::TraceCompression::kDeflate;
          break;
        case JITSCOPE_COMPRESSION_ZSTD:
          config.compression = jitscope::TraceCompression::kZstd;
          break;
        default:
          if (result) {
            result = jitscope::Status::error(
                "compression must be JITSCOPE_COMPRESSION_NONE, _DEFLATE or _ZSTD");
          }
      }
      // start() says why it refuses a config on stderr; so do these checks.
      if (!result) jitscope::detail::log_line(result.message());
    }
    if (result) result = jitscope::start(config);
    return result;
  });
  jitscope_set_c_last_error(st);
  return st ? 0 : -1;
}

int jitscope_stop(void) {
  const jitscope::Status st = jitscope::stop();
  jitscope_set_c_last_error(st);
  return st ? 0 : -1;
}

int jitscope_active(void) { return jitscope::active() ? 1 : 0; }

const char* jitscope_last_error(void) { return t_last_error; }

void jitscope_span_begin(const char* static_name) {
  if (static_name == nullptr) return;
  const std::uint32_t s = jitscope::detail::session_word();
  if (s != 0) jitscope::detail::begin_static(s, jitscope::detail::read_clock(s), static_name);
}

void jitscope_span_begin_copy(const char* name, size_t len) {
  if (name == nullptr) return;
  const std::uint32_t s = jitscope::detail::session_word();
  if (s != 0) {
    jitscope::detail::begin_dynamic(s, jitscope::detail::read_clock(s),
                                    std::string_view(name, len));
  }
}

static_assert(sizeof(jitscope_span) >= sizeof(jitscope::detail::SpanToken));

namespace {
jitscope_span to_c(const jitscope::detail::SpanToken& token) noexcept {
  const std::uint64_t serial = token.serial_word;  // with its kLibraryEndBit
  return {{token.session(), static_cast<unsigned>(serial), static_cast<unsigned>(serial >> 32),
           0}};  // word 3: spare
}
}  // namespace

jitscope_span jitscope_span_open(const char* static_name) {
  jitscope::detail::SpanToken token;
  const std::uint32_t s = jitscope::detail::session_word();
  if (static_name != nullptr && s != 0) {
    token = jitscope::detail::begin_static(s, jitscope::detail::read_clock(s), static_name);
  }
  return to_c(token);
}

jitscope_span jitscope_span_open_copy(const char* name, size_t len) {
  jitscope::detail::SpanToken token;
  const std::uint32_t s = jitscope::detail::session_word();
  if (name != nullptr && s != 0) {
    token = jitscope::detail::begin_dynamic(s, jitscope::detail::read_clock(s),
                                            std::string_view(name, len));
  }
  return to_c(token);
}

void jitscope_span_close(jitscope_span* span) {
  if (span == nullptr) return;
  const jitscope::detail::SpanToken token{span->words[0],
                                          span->words[1] | std::uint64_t{span->words[2]} << 32};
  *span = jitscope_span{};
  if (token.session() != 0) jitscope::detail::end_span_timed(token);
}

// The C API's end has no token: one with serial 0 ends the
// innermost span of `session`.
static jitscope::detail::SpanToken innermost(std::uint32_t session) noexcept {
  return {session, 0};
}

void jitscope_span_end(void) {
  using namespace jitscope::detail;
  const ThreadState* t = current_thread_state_if_registered();
  // The innermost open span began in this thread's session, which may have
  // ended since: end it there (its NVTX range pops, as a C++ Span's does).
  if (t != nullptr && t->depth() > 0) {
    end_span(innermost(t->session), read_clock(t->session));
    return;
  }
  // Nothing open: an end in the current session counts as unbalanced, also
  // on a thread with no event in it yet or only in an earlier session (it
  // registers here, as on any first event).
  const std::uint32_t s = session_word();
  if (s != 0 && current_thread_state(s) != nullptr) end_span(innermost(s), read_clock(s));
}

void jitscope_instant(const char* static_name) {
  if (static_name == nullptr) return;
  const std::uint32_t s = jitscope::detail::session_word();
  if (s != 0) {
    jitscope::detail::instant(s, jitscope::detail::read_clock(s), static_name, {}, nullptr, 0);
  }
}

void jitscope_counter(const char* static_name, double value) {
  if (static_name == nullptr) return;
  const std::uint32_t s = jitscope::detail::session_word();
  if (s != 0) {
    jitscope::detail::counter(s, jitscope::detail::read_clock(s), static_name, {}, value);
  }
}

void jitscope_thread_name(const char* name) {
  if (name == nullptr) return;
  jitscope::set_thread_name(name);
}

int jitscope_note_child_process(int pid, const char* trace_path, const char* label) {
  // NULL: the worker file beside this session's trace (as "").
  const jitscope::Status st = jitscope::note_child_process(
      pid, trace_path == nullptr ? "" : trace_path, label == nullptr ? "" : label);
  jitscope_set_c_last_error(st);
  return st ? 0 : -1;
}

int jitscope_note_task_sent(uint64_t task) {
  const jitscope::Status st = jitscope::note_task_sent(task);
  jitscope_set_c_last_error(st);
  return st ? 0 : -1;
}

void jitscope_mark_ready(void) { jitscope::mark_ready(); }

int jitscope_snapshot(const char* path) {
  const jitscope::Status st = jitscope::snapshot(path != nullptr ? path : "");
  jitscope_set_c_last_error(st);
  return st ? 0 : -1;
}

int jitscope_note_task_received(int64_t sender_pid, uint64_t task) {
  const jitscope::Status st = jitscope::note_task_received(sender_pid, task);
  jitscope_set_c_last_error(st);
  return st ? 0 : -1;
}

}  // extern "C"
