/* Compile units, phases, attachments and span handles from real C (compiled
 * as C99), the shape of a JIT's callback hooks. Called by
 * c_compile_api_test.cpp; each failed check returns its own number. */
#include <jitscope/compile.h>

#include <pthread.h>
#include <stddef.h>
#include <string.h>
#include <time.h>

static void sleep_ms(long ms) {
  struct timespec t = {0, ms * 1000000L};
  nanosleep(&t, NULL);
}

/* A hook's state, kept between its "start" and "done" callbacks. */
typedef struct hook_state {
  jitscope_unit* unit;
  jitscope_phase* outer;
  jitscope_phase* inner;
  jitscope_span pass;
} hook_state;

static const jitscope_phase_key* key_codegen;
static const jitscope_phase_key* key_pass;

static void on_compile_start(hook_state* s, const char* kernel) {
  jitscope_unit_options o;
  jitscope_unit_options_init(&o);
  o.frame = kernel;
  o.graph = "kernel";
  s->unit = jitscope_unit_open(&o);
  s->outer = jitscope_phase_begin(key_codegen);
  s->inner = jitscope_phase_begin(key_pass);
  s->pass = jitscope_span_open("c_pass_span");
}

static int on_compile_done(hook_state* s) {
  sleep_ms(2);
  jitscope_span_close(&s->pass);
  jitscope_span_close(&s->pass); /* a second close does nothing */
  jitscope_phase_end(s->outer);  /* before the inner one: out of order */
  jitscope_phase_end(s->inner);
  if (jitscope_unit_set_int(s->unit, "kernels", 2) != 0) return 20;
  if (jitscope_unit_set_double(s->unit, "occupancy", 0.5) != 0) return 21;
  if (jitscope_unit_set_string(s->unit, "arch", "sm_90") != 0) return 22;
  if (jitscope_unit_set_bool(s->unit, "fast_math", 1) != 0) return 29;
  if (jitscope_unit_increment(s->unit, "kernels", 1) != 0) return 23;
  if (jitscope_unit_set_int(s->unit, "compile_id", 1) == 0) return 24; /* reserved key */
  if (strstr(jitscope_last_error(), "compile_id") == NULL) return 25;
  if (jitscope_unit_set_string(s->unit, "arch", NULL) == 0) return 26;
  jitscope_unit_cache_miss(s->unit, "k0", NULL);
  {
    const jitscope_cache_key_part key[] = {{"source", "s1"}, {"options", NULL}};
    jitscope_unit_cache_lookup(s->unit, "ptx", key, 2, 0);
    jitscope_unit_cache_lookup(s->unit, NULL, NULL, 5, 1); /* no parts: an empty key */
  }
  /* Waits for the first compile of the frame (0/0), of this process: the
   * recompile (0/1) does; 0/0 itself is refused. */
  {
    unsigned frame = 0, attempt = 0;
    jitscope_unit_compile_id(s->unit, &frame, &attempt);
    if (attempt == 0) {
      if (jitscope_unit_waits_for(s->unit, 0, 0, 0) == 0) return 30;
      if (strstr(jitscope_last_error(), "itself") == NULL) return 34;
    } else if (jitscope_unit_waits_for(s->unit, 0, 0, 0) != 0) {
      return 35;
    }
  }
  if (jitscope_unit_waits_for(NULL, 0, 0, 0) == 0) return 31;
  if (jitscope_unit_waits_for(s->unit, 0, 0, -1) == 0) return 32;
  if (strstr(jitscope_last_error(), "pid") == NULL) return 33;
  if (jitscope_unit_artifact(s->unit, "ptx", ".version 7.8", 12, "ptx") != 0) return 27;
  if (jitscope_unit_artifact(s->unit, "ptx", NULL, 3, NULL) == 0) return 28;
  jitscope_unit_close(s->unit);
  return 0;
}

static void* worker(void* arg) {
  jitscope_attachment* a = jitscope_unit_attach((jitscope_unit*)arg);
  jitscope_phase* p = jitscope_phase_begin(key_pass);
  jitscope_span s = jitscope_span_open_copy("c_worker_span", strlen("c_worker_span"));
  sleep_ms(1);
  jitscope_span_close(&s);
  jitscope_phase_end(p);
  jitscope_attachment_detach(a);
  return NULL;
}

int jitscope_c_compile_scenario(void) {
  hook_state s;
  pthread_t t;
  unsigned frame = 9, attempt = 9;
  key_codegen = jitscope_phase_key_get("c_codegen", "c_codegen_us", JITSCOPE_PHASE_EXCLUSIVE);
  key_pass = jitscope_phase_key_get("c_pass", "c_codegen_us", JITSCOPE_PHASE_EXCLUSIVE);
  if (key_codegen == NULL || key_pass == NULL) return 1;
  if (jitscope_phase_key_get("c_codegen", "c_codegen_us", JITSCOPE_PHASE_EXCLUSIVE) != key_codegen)
    return 2;
  if (jitscope_phase_key_get("", NULL, 0) != NULL || jitscope_phase_key_get(NULL, NULL, 0) != NULL)
    return 3;

  on_compile_start(&s, "saxpy");
  if (s.unit == NULL || s.outer == NULL || s.inner == NULL) return 4;
  jitscope_unit_compile_id(s.unit, &frame, &attempt);
  if (frame != 0 || attempt != 0) return 5;
  if (pthread_create(&t, NULL, worker, s.unit) != 0) return 6;
  pthread_join(t, NULL);
  {
    int rc = on_compile_done(&s);
    if (rc != 0) return rc;
  }
  /* The same frame again: a recompile, attempt 1. */
  on_compile_start(&s, "saxpy");
  jitscope_unit_compile_id(s.unit, &frame, &attempt);
  if (frame != 0 || attempt != 1) return 7;
  jitscope_unit_fail(s.unit, "PtxasError", "too many registers");
  {
    int rc = on_compile_done(&s);
    if (rc != 0) return rc;
  }

  /* NULLs are ignored, never a crash. */
  jitscope_unit_close(NULL);
  jitscope_unit_fail(NULL, NULL, NULL);
  jitscope_unit_cache_hit(NULL, "k", NULL);
  jitscope_unit_compile_id(NULL, NULL, NULL);
  if (jitscope_unit_set_int(NULL, "k", 1) == 0) return 8;
  if (jitscope_unit_attach(NULL) != NULL) return 10;
  jitscope_attachment_detach(NULL);
  if (jitscope_unit_ref_get(NULL) != NULL || jitscope_load_begin(NULL) != NULL) return 12;
  jitscope_unit_ref_free(NULL);
  jitscope_load_end(NULL);
  if (jitscope_phase_begin(NULL) != NULL) return 11;
  jitscope_phase_end(NULL);
  jitscope_span_close(NULL);
  return 0;
}
