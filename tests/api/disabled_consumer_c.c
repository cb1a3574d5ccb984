/* The C API compiled out (JITSCOPE_DISABLE), from C: every call once. Part
 * of disabled_consumer (disabled_consumer.cpp runs it). */
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
  if (jitscope_stop() != 0) {
    fprintf(stderr, "FAILED: C jitscope_stop must return 0\n");
    ++failures;
  }
  return failures;
}
