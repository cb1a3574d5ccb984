/* jitscope C API.
 *
 * Quickstart
 *   #include <jitscope/jitscope.h>
 *   jitscope_config cfg;
 *   jitscope_config_init(&cfg);            // defaults
 *   cfg.output_path = "trace.json";
 *   if (jitscope_start(&cfg) != 0) fprintf(stderr, "%s\n", jitscope_last_error());
 *   jitscope_span_begin("compile");        // string literal: stored by pointer
 *   jitscope_span_begin_copy(name, len);   // runtime name: copied
 *   jitscope_span_end();                   // closes the innermost span
 *   jitscope_span_end();
 *   jitscope_span s = jitscope_span_open("pass");  // ended by handle:
 *   jitscope_span_close(&s);                       //   any order
 *   jitscope_stop();
 *
 * Every call is safe with NULL pointers and without a session (it does
 * nothing); an end with nothing open is counted and ignored. Costs are the
 * C++ API's (jitscope.hpp) plus one call.
 *
 * Compiled out (JITSCOPE_DISABLE defined before the include): every call is
 * a `static inline` no-op (detail/disabled_c_api.h), no library is needed,
 * jitscope_start() returns -1 and jitscope_last_error() says why.
 */
#ifndef JITSCOPE_JITSCOPE_H
#define JITSCOPE_JITSCOPE_H

#include <jitscope/detail/unload_hook.h>
#include <jitscope/detail/export.hpp>

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum jitscope_overflow {
  JITSCOPE_OVERFLOW_DROP = 0,
  JITSCOPE_OVERFLOW_BLOCK = 1
} jitscope_overflow;

/* The CUPTI collector (GPU activity); see jitscope::CuptiMode. */
typedef enum jitscope_cupti {
  JITSCOPE_CUPTI_AUTO = 0, /* on when a CUDA driver is present */
  JITSCOPE_CUPTI_ON = 1,
  JITSCOPE_CUPTI_OFF = 2
} jitscope_cupti;

typedef struct jitscope_config {
  const char* output_path; /* required */
  size_t ring_capacity;    /* 32-byte records per thread */
  jitscope_overflow overflow;
  unsigned flush_interval_ms;
  const char* process_name; /* NULL: the executable's name */
  int cupti;                /* a jitscope_cupti value (an int: any value is checked) */
  int crash_handler;        /* 1: flush on a fatal signal or std::terminate (default); 0: off */
  unsigned long long max_trace_bytes; /* cap on the trace's bytes; 0: none (else >= 64 KiB) */
  unsigned long long rotate_bytes;    /* new numbered file at this size; 0: one file */
  int format;      /* a jitscope_format value: the trace's form (0: by the path's extension) */
  int compression; /* a jitscope_compression value: the Perfetto form's packets (0: none) */
} jitscope_config;

/* The trace's form; see jitscope::TraceFormat. */
typedef enum jitscope_format {
  JITSCOPE_FORMAT_AUTO = 0, /* by extension: ".pftrace" is Perfetto's protobuf, else JSON */
  JITSCOPE_FORMAT_JSON = 1,
  JITSCOPE_FORMAT_PERFETTO = 2
} jitscope_format;

/* Compression of the Perfetto form; see jitscope::TraceCompression. */
typedef enum jitscope_compression {
  JITSCOPE_COMPRESSION_NONE = 0,
  JITSCOPE_COMPRESSION_DEFLATE = 1,
  JITSCOPE_COMPRESSION_ZSTD = 2
} jitscope_compression;

/* An open span's handle (jitscope_span_open); opaque: copy it, zero it. */
typedef struct jitscope_span {
  unsigned words[4];
} jitscope_span;

#if defined(JITSCOPE_DISABLE)
#include <jitscope/detail/disabled_c_api.h>
#else
/* Fills *cfg with the defaults (no output path). */
JITSCOPE_API void jitscope_config_init(jitscope_config* cfg);
/* 0 on success; -1 and jitscope_last_error() otherwise. NULL cfg: from JITSCOPE_* env. */
JITSCOPE_API int jitscope_start(const jitscope_config* cfg);
/* 0 on success (or no session); -1 if the output had an I/O error. */
JITSCOPE_API int jitscope_stop(void);
JITSCOPE_API int jitscope_active(void);
/* The reason for the calling thread's last failed start/stop; "" if none. */
JITSCOPE_API const char* jitscope_last_error(void);

JITSCOPE_API void jitscope_span_begin(const char* static_name);
JITSCOPE_API void jitscope_span_begin_copy(const char* name, size_t len);
JITSCOPE_API void jitscope_span_end(void);
/* A span ended by handle, for hooks that begin it in one callback and end
 * it in another: ends exactly that span (spans opened inside it and still
 * open end with it, marked), on the thread that opened it. Closing twice,
 * or a zeroed handle, does nothing. */
JITSCOPE_API jitscope_span jitscope_span_open(const char* static_name);
JITSCOPE_API jitscope_span jitscope_span_open_copy(const char* name, size_t len);
JITSCOPE_API void jitscope_span_close(jitscope_span* span);
JITSCOPE_API void jitscope_instant(const char* static_name);
JITSCOPE_API void jitscope_counter(const char* static_name, double value);
JITSCOPE_API void jitscope_thread_name(const char* name);
/* Lists a worker process and its own trace in this session's trace
 * (jitscope::note_child_process). 0 on success; -1 and jitscope_last_error()
 * without a session or for pid <= 0. A NULL or "" trace path: the worker's
 * file beside this session's trace (trace.worker-<pid>.json). label may be
 * NULL. */
JITSCOPE_API int jitscope_note_child_process(int pid, const char* trace_path, const char* label);
/* The two ends of an arrow from the thread that hands a task to another
 * process to the thread there that starts it (jitscope::note_task_sent,
 * note_task_received): `task` is any number both know. 0 on success; -1
 * and jitscope_last_error() without a session (or a sender_pid <= 0). */
JITSCOPE_API int jitscope_note_task_sent(uint64_t task);
/* Flight recorder (jitscope::snapshot): writes the window of a session
 * started with flight_recorder_bytes / JITSCOPE_FLIGHT to `path` (NULL or
 * "": the next numbered snapshot) in the flusher's next cycle. 0 if taken;
 * -1 and jitscope_last_error() if refused. */
JITSCOPE_API int jitscope_snapshot(const char* path);
/* Warm-up is over (jitscope::mark_ready): compile units opened from now on,
 * until the session stops, are compiles while serving. */
JITSCOPE_API void jitscope_mark_ready(void);
JITSCOPE_API int jitscope_note_task_received(int64_t sender_pid, uint64_t task);
#endif /* JITSCOPE_DISABLE */

#ifdef __cplusplus
}
#endif

#endif /* JITSCOPE_JITSCOPE_H */
