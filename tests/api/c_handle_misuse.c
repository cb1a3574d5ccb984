/* The compile-unit C API's handles ended the ways callback code ends them by
 * mistake, from C: twice (an error path and the normal path), after their
 * unit closed, and through a copy kept elsewhere. Called by
 * c_handle_misuse_test.cpp, with and without a session. Returns 0, or the
 * number of the first check that failed; a use-after-free crashes it. */
#include <jitscope/compile.h>

#include <stddef.h>

int jitscope_c_handle_misuse(void) {
  const jitscope_phase_key* key = jitscope_phase_key_get("c_misuse_phase", "c_misuse_us", 0);
  jitscope_unit_options o;
  jitscope_unit_options_init(&o);
  o.frame = "c_misuse";
  o.key = "c_misuse_key";

  jitscope_unit* unit = jitscope_unit_open(&o);
  if (unit == NULL) return 1;
  jitscope_phase* phase = jitscope_phase_begin(key);
  if (phase == NULL) return 2;
  jitscope_phase* copy = phase; /* kept in a second callback's state */
  jitscope_phase_end(phase);
  jitscope_phase_end(phase); /* the error path ends it again */
  jitscope_phase_end(copy);

  /* A phase still open when its unit closes, ended after. */
  jitscope_phase* late = jitscope_phase_begin(key);
  jitscope_attachment* attached = jitscope_unit_attach(unit);
  jitscope_unit_ref* ref = jitscope_unit_ref_get(unit);
  jitscope_load_scope* load = jitscope_load_begin(ref);
  jitscope_unit_close(unit);
  jitscope_phase_end(late);
  jitscope_phase_end(late);

  /* The unit is closed: every call on it is refused, none crashes. */
  jitscope_unit_close(unit);
  if (jitscope_unit_set_int(unit, "after_close", 1) != -1) return 3;
  if (jitscope_unit_increment(unit, "after_close", 1) != -1) return 4;
  if (jitscope_unit_set_string(unit, "after_close", "x") != -1) return 5;
  jitscope_unit_fail(unit, "Late", "after close");
  jitscope_unit_cache_hit(unit, "k", NULL);
  unsigned frame = 99, attempt = 99;
  jitscope_unit_compile_id(unit, &frame, &attempt);
  if (frame != 0 || attempt != 0) return 6;
  if (jitscope_unit_attach(unit) != NULL) return 7;
  if (jitscope_unit_ref_get(unit) != NULL) return 8;

  jitscope_attachment_detach(attached);
  jitscope_attachment_detach(attached);
  jitscope_load_end(load);
  jitscope_load_end(load);
  jitscope_unit_ref_free(ref);
  jitscope_unit_ref_free(ref);
  if (jitscope_load_begin(ref) != NULL) return 9;

  /* A handle made later may take the freed one's place: the stale copy must
   * not end the new phase. */
  jitscope_unit* next = jitscope_unit_open(&o);
  jitscope_phase* fresh = jitscope_phase_begin(key);
  jitscope_phase_end(copy);  /* stale: refused */
  jitscope_unit_close(unit); /* stale: refused, `next` stays open */
  if (jitscope_unit_set_int(next, "still_open", 1) != 0) return 10;
  jitscope_phase_end(fresh);
  jitscope_unit_close(next);

  /* NULL everywhere. */
  jitscope_phase_end(NULL);
  jitscope_unit_close(NULL);
  jitscope_attachment_detach(NULL);
  jitscope_unit_ref_free(NULL);
  jitscope_load_end(NULL);
  return 0;
}
