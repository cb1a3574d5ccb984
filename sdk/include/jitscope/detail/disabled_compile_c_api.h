/* The C API of <jitscope/compile.h> compiled out (JITSCOPE_DISABLE):
 * `static inline` no-ops; handles are NULL and int results 0 (nothing to
 * misuse). Internal: included by <jitscope/compile.h>. */
#ifndef JITSCOPE_DETAIL_DISABLED_COMPILE_C_API_H
#define JITSCOPE_DETAIL_DISABLED_COMPILE_C_API_H

#if !defined(JITSCOPE_DISABLE)
#error "detail/disabled_compile_c_api.h is for JITSCOPE_DISABLE builds only"
#endif

static inline void jitscope_unit_options_init(jitscope_unit_options* options) {
  if (options == NULL) return;
  options->frame = NULL;
  options->graph = NULL;
  options->is_forward = 1;
  options->recompile_reason = NULL;
  options->key = NULL;
}
static inline jitscope_unit* jitscope_unit_open(const jitscope_unit_options* options) {
  (void)options;
  return NULL;
}
static inline void jitscope_unit_close(jitscope_unit* unit) { (void)unit; }
static inline void jitscope_unit_compile_id(const jitscope_unit* unit, unsigned* frame,
                                            unsigned* attempt) {
  (void)unit;
  if (frame != NULL) *frame = 0;
  if (attempt != NULL) *attempt = 0;
}
static inline void jitscope_unit_fail(jitscope_unit* unit, const char* type, const char* reason) {
  (void)unit;
  (void)type;
  (void)reason;
}
static inline void jitscope_unit_cache_hit(jitscope_unit* unit, const char* key,
                                           const char* cache) {
  (void)unit;
  (void)key;
  (void)cache;
}
static inline void jitscope_unit_cache_miss(jitscope_unit* unit, const char* key,
                                            const char* cache) {
  (void)unit;
  (void)key;
  (void)cache;
}
static inline int jitscope_unit_waits_for(jitscope_unit* unit, unsigned frame, unsigned attempt,
                                          long long pid) {
  (void)unit;
  (void)frame;
  (void)attempt;
  (void)pid;
  return 0;
}
static inline void jitscope_unit_cache_lookup(jitscope_unit* unit, const char* layer,
                                              const jitscope_cache_key_part* parts, size_t count,
                                              int hit) {
  (void)unit;
  (void)layer;
  (void)parts;
  (void)count;
  (void)hit;
}
static inline int jitscope_unit_set_int(jitscope_unit* unit, const char* key, long long value) {
  (void)unit;
  (void)key;
  (void)value;
  return 0;
}
static inline int jitscope_unit_set_bool(jitscope_unit* unit, const char* key, int value) {
  (void)unit;
  (void)key;
  (void)value;
  return 0;
}
static inline int jitscope_unit_set_double(jitscope_unit* unit, const char* key, double value) {
  (void)unit;
  (void)key;
  (void)value;
  return 0;
}
static inline int jitscope_unit_set_string(jitscope_unit* unit, const char* key,
                                           const char* value) {
  (void)unit;
  (void)key;
  (void)value;
  return 0;
}
static inline int jitscope_unit_increment(jitscope_unit* unit, const char* key, long long by) {
  (void)unit;
  (void)key;
  (void)by;
  return 0;
}
static inline int jitscope_unit_artifact(jitscope_unit* unit, const char* kind, const void* data,
                                         size_t len, const char* extension) {
  (void)unit;
  (void)kind;
  (void)data;
  (void)len;
  (void)extension;
  return 0;
}
static inline jitscope_attachment* jitscope_unit_attach(jitscope_unit* unit) {
  (void)unit;
  return NULL;
}
static inline void jitscope_attachment_detach(jitscope_attachment* attachment) { (void)attachment; }
static inline jitscope_unit_ref* jitscope_unit_ref_get(const jitscope_unit* unit) {
  (void)unit;
  return NULL;
}
static inline void jitscope_unit_ref_free(jitscope_unit_ref* ref) { (void)ref; }
static inline jitscope_load_scope* jitscope_load_begin(const jitscope_unit_ref* ref) {
  (void)ref;
  return NULL;
}
static inline void jitscope_load_end(jitscope_load_scope* scope) { (void)scope; }
static inline const jitscope_phase_key* jitscope_phase_key_get(const char* key, const char* column,
                                                               unsigned flags) {
  (void)key;
  (void)column;
  (void)flags;
  return NULL;
}
static inline jitscope_phase* jitscope_phase_begin(const jitscope_phase_key* key) {
  (void)key;
  return NULL;
}
static inline void jitscope_phase_end(jitscope_phase* phase) { (void)phase; }

#endif /* JITSCOPE_DETAIL_DISABLED_COMPILE_C_API_H */
