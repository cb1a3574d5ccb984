/* The C API from C with NULL pointers and out-of-range values, as C code can
 * pass them. Called by c_api_hostile_test.cpp. */
#include <jitscope/jitscope.h>

#include <stddef.h>

/* Every call that takes a pointer, with NULL. Returns 0, or the number of the
 * first call whose result was wrong. With a session, it lists three
 * children of pid 4242: two at the worker's file beside the trace (a NULL
 * path), labels "label" and "", and one at /tmp/null-label.json, no label. */
int jitscope_hostile_null_calls(int session_active) {
  jitscope_config_init(NULL);
  jitscope_span_begin(NULL);
  jitscope_span_begin_copy(NULL, 5);
  jitscope_span_begin_copy(NULL, 0);
  jitscope_instant(NULL);
  jitscope_counter(NULL, 1.0);
  jitscope_thread_name(NULL);
  /* A NULL path: the worker's file beside the trace; an error without a
   * session. */
  if (jitscope_note_child_process(4242, NULL, "label") != (session_active ? 0 : -1)) return 1;
  if (jitscope_last_error() == NULL ||
      (jitscope_last_error()[0] == '\0') != (session_active != 0)) {
    return 2;
  }
  if (jitscope_note_child_process(4242, NULL, NULL) != (session_active ? 0 : -1)) return 3;
  if (jitscope_note_child_process(0, "/tmp/x.json", NULL) != -1) return 4;
  if (jitscope_note_child_process(-1, NULL, NULL) != -1) return 5;
  if (jitscope_active() != session_active) return 6;
  /* A NULL label is allowed; without a session it is still an error. */
  if (jitscope_note_child_process(4242, "/tmp/null-label.json", NULL) !=
      (session_active ? 0 : -1)) {
    return 7;
  }
  if (jitscope_last_error() == NULL) return 8;
  return 0;
}

/* C lets an enum object hold any int. */
void jitscope_hostile_set_overflow(jitscope_config* cfg, int value) {
  cfg->overflow = (jitscope_overflow)value;
}
