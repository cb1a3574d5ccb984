/* Exercises the C API from real C (compiled as C99). Called by c_api_test.cpp. */
#include <jitscope/jitscope.h>

#include <string.h>

int jitscope_c_scenario(const char* path) {
  jitscope_config cfg;
  jitscope_config_init(&cfg);
  cfg.output_path = path;
  cfg.flush_interval_ms = 5;
  cfg.cupti = JITSCOPE_CUPTI_OFF; /* the test checks stderr exactly */
  if (jitscope_start(&cfg) != 0) return 1;
  if (!jitscope_active()) return 2;
  jitscope_thread_name("c-main");
  jitscope_span_begin("c_outer");
  {
    char buf[32];
    strcpy(buf, "c_dynamic");
    jitscope_span_begin_copy(buf, strlen(buf));
    memset(buf, 'X', sizeof buf - 1); /* the copy must already be taken */
    jitscope_instant("c_instant");
    jitscope_counter("c_counter", 42.5);
    jitscope_span_end();
  }
  jitscope_span_end();
  jitscope_span_end(); /* unbalanced: counted, ignored */
  /* NULLs are ignored, never a crash. */
  jitscope_span_begin(NULL);
  jitscope_span_begin_copy(NULL, 5);
  jitscope_instant(NULL);
  jitscope_counter(NULL, 1.0);
  jitscope_thread_name(NULL);
  jitscope_start(&cfg); /* a session is active: fails with a message */
  if (jitscope_last_error()[0] == '\0') return 3;
  if (jitscope_stop() != 0) return 4;
  if (jitscope_active()) return 5;
  return 0;
}

int jitscope_c_bad_config(void) {
  jitscope_config cfg;
  jitscope_config_init(&cfg); /* no output path */
  if (jitscope_start(&cfg) == 0) return 1;
  if (strstr(jitscope_last_error(), "output path") == NULL) return 2;
  cfg.output_path = "/nonexistent-dir/x.json";
  if (jitscope_start(&cfg) == 0) return 3;
  if (strstr(jitscope_last_error(), "cannot open") == NULL) return 4;
  cfg.cupti = 7;
  if (jitscope_start(&cfg) == 0) return 5;
  if (strstr(jitscope_last_error(), "JITSCOPE_CUPTI_AUTO") == NULL) return 6;
  cfg.cupti = JITSCOPE_CUPTI_OFF;
  cfg.compression = 3;
  if (jitscope_start(&cfg) == 0) return 7;
  if (strstr(jitscope_last_error(), "JITSCOPE_COMPRESSION_NONE") == NULL) return 8;
  jitscope_config_init(&cfg);
  if (cfg.compression != JITSCOPE_COMPRESSION_NONE) return 9;
  jitscope_config_init(NULL);
  return jitscope_stop(); /* no session: 0 */
}

/* A Perfetto trace with zstd-compressed packets, from C. */
int jitscope_c_compressed(const char* path) {
  jitscope_config cfg;
  jitscope_config_init(&cfg);
  cfg.output_path = path;
  cfg.cupti = JITSCOPE_CUPTI_OFF;
  cfg.format = JITSCOPE_FORMAT_PERFETTO;
  cfg.compression = JITSCOPE_COMPRESSION_ZSTD;
  if (jitscope_start(&cfg) != 0) return 1;
  for (int i = 0; i < 100; ++i) {
    jitscope_span_begin("c_compressed");
    jitscope_span_end();
  }
  return jitscope_stop() != 0 ? 2 : 0;
}
