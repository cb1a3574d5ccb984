/* jitscope compile units, phases and attachments from C (compile.hpp).
 *
 * Quickstart
 *   #include <jitscope/compile.h>
 *   static const jitscope_phase_key* lower_key;
 *   if (!lower_key) lower_key = jitscope_phase_key_get("lower", "lower_time_us", 0);
 *
 *   jitscope_unit_options o;
 *   jitscope_unit_options_init(&o);
 *   o.frame = kernel_name;                          // same frame again: a recompile
 *   jitscope_unit* unit = jitscope_unit_open(&o);   // [0/0] model__graph_0
 *   jitscope_phase* p = jitscope_phase_begin(lower_key);
 *   ...                                             // (another callback)
 *   jitscope_phase_end(p);
 *   jitscope_unit_set_int(unit, "kernels", 3);
 *   jitscope_unit_close(unit);                      // writes the record; frees
 *
 * Semantics are the C++ API's (docs/compile-units.md). A unit, phase or
 * attachment ends on the thread that began it (an end on another thread is
 * refused with one `jitscope:` line; the object stays open where it began
 * and its memory is kept). Phases may end in any order. Every call is safe
 * with NULL and does nothing then; functions returning int give 0 on
 * success, -1 and jitscope_last_error() otherwise. Phases are timed and
 * records kept without a trace session, as in C++.
 *
 * Compiled out (JITSCOPE_DISABLE): `static inline` no-ops returning NULL
 * handles (detail/disabled_compile_c_api.h); no library is needed.
 */
#ifndef JITSCOPE_COMPILE_H
#define JITSCOPE_COMPILE_H

#include <jitscope/jitscope.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct jitscope_unit jitscope_unit;             /* an open compile unit */
typedef struct jitscope_phase jitscope_phase;           /* an open phase */
typedef struct jitscope_phase_key jitscope_phase_key;   /* a registered phase key */
typedef struct jitscope_attachment jitscope_attachment; /* a thread attached to a unit */
typedef struct jitscope_unit_ref jitscope_unit_ref;     /* a unit, kept past its close */
typedef struct jitscope_load_scope jitscope_load_scope; /* CUDA loads credited to a unit */

typedef struct jitscope_unit_options {
  const char* frame;            /* what is compiled; NULL or "": a new frame */
  const char* graph;            /* the unit's graph name; NULL: "graph" */
  int is_forward;               /* 1 (default) or 0 */
  const char* recompile_reason; /* NULL: none */
  const char* key;              /* a stable name for what is compiled; NULL: the frame */
} jitscope_unit_options;

/* Phase key flags. */
#define JITSCOPE_PHASE_COMPILE_EVENT 1u /* listed in the unit record's compile_events */
#define JITSCOPE_PHASE_EXCLUSIVE 2u     /* its column gets self time (PhaseOptions::exclusive) */

/* One part of a cache key, by name (NULL name or value: ""). */
typedef struct jitscope_cache_key_part {
  const char* name;
  const char* value;
} jitscope_cache_key_part;

#if defined(JITSCOPE_DISABLE)
#include <jitscope/detail/disabled_compile_c_api.h>
#else
JITSCOPE_API void jitscope_unit_options_init(jitscope_unit_options* options);
/* Opens a unit on the calling thread (NULL options: the defaults). NULL
 * only when out of memory. */
JITSCOPE_API jitscope_unit* jitscope_unit_open(const jitscope_unit_options* options);
/* Closes the unit (its record is written) and frees the handle. */
JITSCOPE_API void jitscope_unit_close(jitscope_unit* unit);
/* The unit's compile id "frame/attempt" (0/0 for NULL). */
JITSCOPE_API void jitscope_unit_compile_id(const jitscope_unit* unit, unsigned* frame,
                                           unsigned* attempt);
JITSCOPE_API void jitscope_unit_fail(jitscope_unit* unit, const char* type, const char* reason);
/* cache NULL: "cache". */
JITSCOPE_API void jitscope_unit_cache_hit(jitscope_unit* unit, const char* key, const char* cache);
JITSCOPE_API void jitscope_unit_cache_miss(jitscope_unit* unit, const char* key, const char* cache);
/* A lookup in cache layer `layer` (NULL: "cache") with its key in `count`
 * named parts; `hit` nonzero for a hit: CompileUnit::cache_lookup, whose
 * misses jitscope-report explains by the parts that differ (docs/caches.md). */
JITSCOPE_API void jitscope_unit_cache_lookup(jitscope_unit* unit, const char* layer,
                                             const jitscope_cache_key_part* parts, size_t count,
                                             int hit);
/* This unit waited for unit frame/attempt of process `pid` (0: this one):
 * CompileUnit::waits_for, which jitscope-report's critical path follows
 * (docs/critical-path.md). 0, or -1 (jitscope_last_error says why). */
JITSCOPE_API int jitscope_unit_waits_for(jitscope_unit* unit, unsigned frame, unsigned attempt,
                                         long long pid);
/* Metric-level data on the unit's record; keys ending in "_us" are columns. */
JITSCOPE_API int jitscope_unit_set_int(jitscope_unit* unit, const char* key, long long value);
JITSCOPE_API int jitscope_unit_set_double(jitscope_unit* unit, const char* key, double value);
JITSCOPE_API int jitscope_unit_set_string(jitscope_unit* unit, const char* key, const char* value);
JITSCOPE_API int jitscope_unit_set_bool(jitscope_unit* unit, const char* key, int value);
JITSCOPE_API int jitscope_unit_increment(jitscope_unit* unit, const char* key, long long by);
/* Writes `len` bytes as an artifact of the unit (CompileUnit::artifact);
 * extension NULL: "txt". */
JITSCOPE_API int jitscope_unit_artifact(jitscope_unit* unit, const char* kind, const void* data,
                                        size_t len, const char* extension);

/* Makes `unit` current on the calling thread until detached (a worker
 * thread doing the unit's work). Attach while the unit is open. NULL when
 * `unit` is NULL or out of memory. */
JITSCOPE_API jitscope_attachment* jitscope_unit_attach(jitscope_unit* unit);
/* Detaches and frees the handle; on the thread that attached. */
JITSCOPE_API void jitscope_attachment_detach(jitscope_attachment* attachment);

/* A handle to `unit` that stays valid after the unit closes, for loading
 * its binary later (CompileUnitRef). Take it before jitscope_unit_close.
 * NULL when `unit` is NULL or out of memory. */
JITSCOPE_API jitscope_unit_ref* jitscope_unit_ref_get(const jitscope_unit* unit);
JITSCOPE_API void jitscope_unit_ref_free(jitscope_unit_ref* ref);
/* Until jitscope_load_end, the CUDA modules and libraries this thread loads
 * are credited to the unit (their kernels' compiled_by; LoadScope,
 * docs/gpu-activity.md). Scopes may end in any order; one ended on another
 * thread is said once and ends at its own thread's next load. NULL when
 * `ref` is NULL or out of memory. */
JITSCOPE_API jitscope_load_scope* jitscope_load_begin(const jitscope_unit_ref* ref);
JITSCOPE_API void jitscope_load_end(jitscope_load_scope* scope);

/* The key named `key`, registered on first use with its metrics column
 * (NULL: none; else ending in "_us") and flags; later calls return the same
 * key (a different column or flags is said once and ignored). It lives for
 * the process: get it once. NULL for a NULL or empty name. */
JITSCOPE_API const jitscope_phase_key* jitscope_phase_key_get(const char* key, const char* column,
                                                              unsigned flags);
/* Begins a phase; it ends with jitscope_phase_end (which frees the handle).
 * NULL for a NULL key or out of memory. */
JITSCOPE_API jitscope_phase* jitscope_phase_begin(const jitscope_phase_key* key);
JITSCOPE_API void jitscope_phase_end(jitscope_phase* phase);
#endif /* JITSCOPE_DISABLE */

#ifdef __cplusplus
}
#endif

#endif /* JITSCOPE_COMPILE_H */
