// A plugin that records events named by its own string literals, loaded and
// unloaded by unload_test.cpp while a session runs (its names are unmapped
// by dlclose()).
#include <jitscope/jitscope.h>
#include <jitscope/jitscope.hpp>

namespace {

// Records during dlclose(), before the unload hook drains: C++ static
// destructors run first.
struct RecordsWhenUnloaded {
  ~RecordsWhenUnloaded() { JITSCOPE_INSTANT("plugin_static_dtor"); }
} g_records_when_unloaded;

}  // namespace

extern "C" void plugin_c_work(void);

extern "C" __attribute__((visibility("default"))) void plugin_work(int round) {
  JITSCOPE_SPAN("plugin_span");
  jitscope::Span with_args("plugin_args", {{"plugin_key", round}});
  JITSCOPE_INSTANT("plugin_instant", {"plugin_instant_key", round});
  JITSCOPE_COUNTER("plugin_counter", round);
  plugin_c_work();
}

// Leaves a span open across the unload: the host ends it afterwards.
extern "C" __attribute__((visibility("default"))) void plugin_open_span(void) {
  jitscope_span_begin("plugin_open");
}
