/* jitscope autotuning sessions from C (autotune.hpp).
 *
 * Quickstart
 *   #include <jitscope/autotune.h>
 *
 *   jitscope_autotune* tune = jitscope_autotune_begin("matmul");
 *   jitscope_tune_param config[] = {{"block", JITSCOPE_TUNE_INT, 128, 0, NULL}};
 *   long t = jitscope_autotune_trial(tune, config, 1);
 *   jitscope_autotune_step* s = jitscope_autotune_compile(tune, t);
 *   ...                                          build it
 *   jitscope_autotune_step_end(s);
 *   s = jitscope_autotune_benchmark(tune, t);
 *   ...                                          time it
 *   jitscope_autotune_step_end(s);
 *   jitscope_autotune_result(tune, t, us);
 *   jitscope_autotune_winner(tune, t);
 *   jitscope_autotune_end(tune);                 frees
 *
 * Semantics are the C++ API's (docs/autotuning.md): a trial is its index
 * in the session; its compile is its compile steps, or a compile unit
 * named by jitscope_autotune_compiled_by (jitscope_unit_compile_id's
 * numbers). Parameter names are kept for the process (each distinct name
 * once, as span names are); string values are copied. Every call is safe
 * with NULL handles and with trials the session never made, and does
 * nothing then (a stale handle is said once, never dereferenced).
 *
 * Compiled out (JITSCOPE_DISABLE): `static inline` no-ops returning NULL
 * handles and trial -1 (detail/disabled_autotune_c_api.h).
 */
#ifndef JITSCOPE_AUTOTUNE_H
#define JITSCOPE_AUTOTUNE_H

#include <jitscope/jitscope.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct jitscope_autotune jitscope_autotune;           /* a tuning session */
typedef struct jitscope_autotune_step jitscope_autotune_step; /* a trial's compile or benchmark */

/* A config parameter's type: which of i, d, s holds its value (a bool in i). */
#define JITSCOPE_TUNE_INT 0
#define JITSCOPE_TUNE_DOUBLE 1
#define JITSCOPE_TUNE_BOOL 2
#define JITSCOPE_TUNE_STRING 3

typedef struct jitscope_tune_param {
  const char* name; /* NULL or "": the parameter is left out */
  int type;         /* JITSCOPE_TUNE_* */
  long long i;
  double d;
  const char* s; /* NULL: "" */
} jitscope_tune_param;

#if defined(JITSCOPE_DISABLE)
#include <jitscope/detail/disabled_autotune_c_api.h>
#else
/* A tuning session of `kernel` (NULL: ""). NULL only when out of memory. */
JITSCOPE_API jitscope_autotune* jitscope_autotune_begin(const char* kernel);
/* Ends the session (its span is written) and frees the handle. */
JITSCOPE_API void jitscope_autotune_end(jitscope_autotune* tune);
/* The next trial, of `count` parameters: its index, or -1 (NULL handle). */
JITSCOPE_API long jitscope_autotune_trial(jitscope_autotune* tune,
                                          const jitscope_tune_param* config, size_t count);
/* A step of trial `trial`, until jitscope_autotune_step_end (which frees it).
 * NULL for an unknown trial or out of memory. */
JITSCOPE_API jitscope_autotune_step* jitscope_autotune_compile(jitscope_autotune* tune, long trial);
JITSCOPE_API jitscope_autotune_step* jitscope_autotune_benchmark(jitscope_autotune* tune,
                                                                 long trial);
JITSCOPE_API void jitscope_autotune_step_end(jitscope_autotune_step* step);
/* The trial's compile was the unit of compile id frame/attempt. */
JITSCOPE_API void jitscope_autotune_compiled_by(jitscope_autotune* tune, long trial, unsigned frame,
                                                unsigned attempt);
JITSCOPE_API void jitscope_autotune_result(jitscope_autotune* tune, long trial, double value);
JITSCOPE_API void jitscope_autotune_failed(jitscope_autotune* tune, long trial, const char* reason);
JITSCOPE_API void jitscope_autotune_winner(jitscope_autotune* tune, long trial);
#endif /* JITSCOPE_DISABLE */

#ifdef __cplusplus
}
#endif

#endif /* JITSCOPE_AUTOTUNE_H */
