/* The C API of <jitscope/jitscope.h> compiled out (JITSCOPE_DISABLE):
 * `static inline` no-ops, so no jitscope library is needed and each
 * translation unit has its own copy (no clash with the library's functions
 * in a program that links it). jitscope_start() returns -1 and
 * jitscope_last_error() always says that jitscope is compiled out.
 * Internal: included by <jitscope/jitscope.h>. */
#ifndef JITSCOPE_DETAIL_DISABLED_C_API_H
#define JITSCOPE_DETAIL_DISABLED_C_API_H

#if !defined(JITSCOPE_DISABLE)
#error "detail/disabled_c_api.h is for JITSCOPE_DISABLE builds only"
#endif

/* The library's defaults (jitscope::kDefaultRingCapacity and
 * kDefaultFlushInterval), for code that prints or checks them. */
static inline void jitscope_config_init(jitscope_config* cfg) {
  if (cfg == NULL) return;
  cfg->output_path = NULL;
  cfg->ring_capacity = 65536;
  cfg->overflow = JITSCOPE_OVERFLOW_DROP;
  cfg->flush_interval_ms = 100;
  cfg->process_name = NULL;
  cfg->cupti = JITSCOPE_CUPTI_AUTO;
  cfg->crash_handler = 1;
  cfg->max_trace_bytes = 0;
  cfg->rotate_bytes = 0;
}
static inline int jitscope_start(const jitscope_config* cfg) {
  (void)cfg;
  return -1;
}
static inline int jitscope_stop(void) { return 0; }
static inline int jitscope_active(void) { return 0; }
static inline const char* jitscope_last_error(void) { return JITSCOPE_COMPILED_OUT_MESSAGE; }

static inline void jitscope_span_begin(const char* static_name) { (void)static_name; }
static inline void jitscope_span_begin_copy(const char* name, size_t len) {
  (void)name;
  (void)len;
}
static inline void jitscope_span_end(void) {}
static inline jitscope_span jitscope_span_open(const char* static_name) {
  jitscope_span span = {{0, 0, 0, 0}};
  (void)static_name;
  return span;
}
static inline jitscope_span jitscope_span_open_copy(const char* name, size_t len) {
  jitscope_span span = {{0, 0, 0, 0}};
  (void)name;
  (void)len;
  return span;
}
static inline void jitscope_span_close(jitscope_span* span) { (void)span; }
static inline void jitscope_instant(const char* static_name) { (void)static_name; }
static inline void jitscope_counter(const char* static_name, double value) {
  (void)static_name;
  (void)value;
}
static inline void jitscope_thread_name(const char* name) { (void)name; }
static inline int jitscope_note_child_process(int pid, const char* trace_path, const char* label) {
  (void)pid;
  (void)trace_path;
  (void)label;
  return -1;
}
static inline void jitscope_mark_ready(void) {}
static inline int jitscope_snapshot(const char* path) {
  (void)path;
  return -1;
}
static inline int jitscope_note_task_sent(uint64_t task) {
  (void)task;
  return -1;
}
static inline int jitscope_note_task_received(int64_t sender_pid, uint64_t task) {
  (void)sender_pid;
  (void)task;
  return -1;
}

#endif /* JITSCOPE_DETAIL_DISABLED_C_API_H */
