/* The C API's names live in the plugin too (jitscope.h has its own hook). */
#include <jitscope/jitscope.h>

void plugin_c_work(void) {
  jitscope_span_begin("plugin_c_span");
  jitscope_instant("plugin_c_instant");
  jitscope_span_end();
}
