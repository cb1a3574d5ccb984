/* The C API compiled out (JITSCOPE_DISABLE), from C: every call once. Part
 * of disabled_consumer (disabled_consumer.cpp runs it). */
#include <jitscope/autotune.h>
#include <jitscope/compile.h>
#include <jitscope/jitscope.h>

#include <stdio.h>
#include <string.h>

int c_api_failures(void) {
  int failures = 0;
  jitscope_config cfg;
  jitscope_config_init(&cfg);
  jitscope_config_init(NULL);
  if (cfg.ring_capacity != 65536 || cfg.flush_interval_ms != 100 || cfg.crash_handler != 1 ||
      cfg.output_path != NULL) {
    fprintf(stderr, "FAILED: C jitscope_config_init defaults\n");
    ++failures;
  }
  cfg.output_path = "never_written_c.json";
  if (jitscope_start(&cfg) != -1 || jitscope_start(NULL) != -1) {
    fprintf(stderr, "FAILED: C jitscope_start must return -1\n");
    ++failures;
  }
  printf("jitscope_start(): -1 \"%s\"\n", jitscope_last_error());
  if (strstr(jitscope_last_error(), "compiled out") == NULL) {
    fprintf(stderr, "FAILED: C jitscope_last_error\n");
    ++failures;
  }
  if (jitscope_active() != 0) {
    fprintf(stderr, "FAILED: C jitscope_active\n");
    ++failures;
  }
  jitscope_thread_name("c_thread");
  jitscope_span_begin("c_span");
  jitscope_span_begin_copy("dynamic", 7);
  jitscope_instant("c_instant");
  jitscope_counter("c_counter", 1.5);
  jitscope_span_end();
  jitscope_span_end();
  if (jitscope_note_child_process(42, "child.json", NULL) != -1) {
    fprintf(stderr, "FAILED: C jitscope_note_child_process must return -1\n");
    ++failures;
  }
  jitscope_mark_ready();
  if (jitscope_snapshot(NULL) != -1 || jitscope_snapshot("s.json") != -1) {
    fprintf(stderr, "FAILED: C jitscope_snapshot must return -1\n");
    ++failures;
  }
  if (jitscope_note_task_sent(7) != -1 || jitscope_note_task_received(42, 7) != -1) {
    fprintf(stderr, "FAILED: C jitscope_note_task_sent/received must return -1\n");
    ++failures;
  }
  {
    jitscope_span s = jitscope_span_open("c_span");
    jitscope_span d = jitscope_span_open_copy("dynamic", 7);
    jitscope_unit_options o;
    jitscope_unit* unit;
    unsigned frame = 1, attempt = 1;
    jitscope_span_close(&d);
    jitscope_span_close(&s);
    jitscope_unit_options_init(&o);
    jitscope_unit_options_init(NULL);
    unit = jitscope_unit_open(&o);
    jitscope_unit_compile_id(unit, &frame, &attempt);
    jitscope_unit_fail(unit, "t", "r");
    jitscope_unit_cache_hit(unit, "k", NULL);
    jitscope_unit_cache_miss(unit, "k", NULL);
    jitscope_unit_cache_lookup(unit, "l", NULL, 0, 1);
    jitscope_attachment_detach(jitscope_unit_attach(unit));
    jitscope_load_end(jitscope_load_begin(jitscope_unit_ref_get(unit)));
    jitscope_unit_ref_free(jitscope_unit_ref_get(unit));
    jitscope_phase_end(jitscope_phase_begin(jitscope_phase_key_get("p", "p_us", 0)));
    if (unit != NULL || frame != 0 || attempt != 0 || o.is_forward != 1 ||
        jitscope_unit_set_int(unit, "k", 1) != 0 || jitscope_unit_set_double(unit, "k", 1) != 0 ||
        jitscope_unit_set_string(unit, "k", "v") != 0 ||
        jitscope_unit_set_bool(unit, "k", 1) != 0 || jitscope_unit_increment(unit, "k", 1) != 0 ||
        jitscope_unit_waits_for(unit, 0, 0, 0) != 0) {
      fprintf(stderr, "FAILED: C compile API compiled out\n");
      ++failures;
    }
    jitscope_unit_close(unit);
  }
  if (jitscope_stop() != 0) {
    fprintf(stderr, "FAILED: C jitscope_stop must return 0\n");
    ++failures;
  }
  {
    jitscope_tune_param p = {"block", JITSCOPE_TUNE_INT, 128, 0, NULL};
    jitscope_autotune* tune = jitscope_autotune_begin("matmul");
    long t = jitscope_autotune_trial(tune, &p, 1);
    jitscope_autotune_step* s = jitscope_autotune_compile(tune, t);
    if (tune != NULL || t != -1 || s != NULL || jitscope_autotune_benchmark(tune, t) != NULL) {
      fprintf(stderr, "FAILED: C autotune handles must be NULL and trials -1\n");
      ++failures;
    }
    jitscope_autotune_step_end(s);
    jitscope_autotune_compiled_by(tune, t, 0, 0);
    jitscope_autotune_result(tune, t, 1.0);
    jitscope_autotune_failed(tune, t, "x");
    jitscope_autotune_winner(tune, t);
    jitscope_autotune_end(tune);
  }
  return failures;
}
