/* The autotuning C API (jitscope/autotune.h) from C: a session of two
 * trials with typed parameters, steps, a unit as a trial's compile, a
 * result, a failure and the winner; then NULL handles, unknown trials and
 * an ended handle, which must do nothing. c_autotune_test.cpp reads the
 * trace back. */
#include <jitscope/autotune.h>
#include <jitscope/compile.h>

#include <stddef.h>

int jitscope_c_autotune_scenario(void) {
  jitscope_autotune* tune = jitscope_autotune_begin("matmul");
  if (tune == NULL) return 1;
  char name[] = "block"; /* a writable buffer: the name must be kept */
  jitscope_tune_param config[] = {
      {name, JITSCOPE_TUNE_INT, 128, 0, NULL},       {"fast", JITSCOPE_TUNE_BOOL, 1, 0, NULL},
      {"dtype", JITSCOPE_TUNE_STRING, 0, 0, "bf16"}, {"ratio", JITSCOPE_TUNE_DOUBLE, 0, 0.5, NULL},
      {NULL, JITSCOPE_TUNE_INT, 7, 0, NULL}, /* no name: left out */
  };
  long first = jitscope_autotune_trial(tune, config, 5);
  name[0] = 'X'; /* the first trial's kept name is unchanged */
  long second = jitscope_autotune_trial(tune, config, 1);
  if (first != 0 || second != 1) return 2;

  jitscope_autotune_step* step = jitscope_autotune_compile(tune, first);
  if (step == NULL) return 3;
  jitscope_autotune_step_end(step);
  step = jitscope_autotune_benchmark(tune, first);
  jitscope_autotune_step_end(step);
  jitscope_autotune_result(tune, first, 2.5);

  jitscope_unit_options o;
  jitscope_unit_options_init(&o);
  o.frame = "matmul_second";
  jitscope_unit* unit = jitscope_unit_open(&o);
  unsigned frame = 0, attempt = 0;
  jitscope_unit_compile_id(unit, &frame, &attempt);
  jitscope_unit_close(unit);
  jitscope_autotune_compiled_by(tune, second, frame, attempt);
  jitscope_autotune_failed(tune, second, "out of shared memory");
  jitscope_autotune_winner(tune, first);

  /* Nothing happens for these. */
  jitscope_autotune_result(tune, 2, 1.0);
  jitscope_autotune_result(tune, -1, 1.0);
  if (jitscope_autotune_compile(tune, 99) != NULL) return 4;
  if (jitscope_autotune_trial(NULL, config, 1) != -1) return 5;
  jitscope_autotune_step_end(NULL);
  jitscope_autotune_winner(NULL, 0);
  jitscope_autotune_end(NULL);

  jitscope_autotune_end(tune);
  jitscope_autotune_end(tune);      /* ended: refused, said once */
  jitscope_autotune_step_end(step); /* ended too */
  return 0;
}
