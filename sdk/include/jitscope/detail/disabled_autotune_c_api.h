/* The C API of <jitscope/autotune.h> compiled out (JITSCOPE_DISABLE):
 * `static inline` no-ops; handles are NULL and trials -1. Internal:
 * included by <jitscope/autotune.h>. */
#ifndef JITSCOPE_DETAIL_DISABLED_AUTOTUNE_C_API_H
#define JITSCOPE_DETAIL_DISABLED_AUTOTUNE_C_API_H

#if !defined(JITSCOPE_DISABLE)
#error "detail/disabled_autotune_c_api.h is for JITSCOPE_DISABLE builds only"
#endif

static inline jitscope_autotune* jitscope_autotune_begin(const char* kernel) {
  (void)kernel;
  return NULL;
}
static inline void jitscope_autotune_end(jitscope_autotune* tune) { (void)tune; }
static inline long jitscope_autotune_trial(jitscope_autotune* tune,
                                           const jitscope_tune_param* config, size_t count) {
  (void)tune;
  (void)config;
  (void)count;
  return -1;
}
static inline jitscope_autotune_step* jitscope_autotune_compile(jitscope_autotune* tune,
                                                                long trial) {
  (void)tune;
  (void)trial;
  return NULL;
}
static inline jitscope_autotune_step* jitscope_autotune_benchmark(jitscope_autotune* tune,
                                                                  long trial) {
  (void)tune;
  (void)trial;
  return NULL;
}
static inline void jitscope_autotune_step_end(jitscope_autotune_step* step) { (void)step; }
static inline void jitscope_autotune_compiled_by(jitscope_autotune* tune, long trial,
                                                 unsigned frame, unsigned attempt) {
  (void)tune;
  (void)trial;
  (void)frame;
  (void)attempt;
}
static inline void jitscope_autotune_result(jitscope_autotune* tune, long trial, double value) {
  (void)tune;
  (void)trial;
  (void)value;
}
static inline void jitscope_autotune_failed(jitscope_autotune* tune, long trial,
                                            const char* reason) {
  (void)tune;
  (void)trial;
  (void)reason;
}
static inline void jitscope_autotune_winner(jitscope_autotune* tune, long trial) {
  (void)tune;
  (void)trial;
}

#endif /* JITSCOPE_DETAIL_DISABLED_AUTOTUNE_C_API_H */
