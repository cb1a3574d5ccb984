// A plugin that records events is dlclose()d during a session, 30 times:
// every event keeps its name (the literals were unmapped before the
// flusher's next cycle), a span the plugin left open ends whole after the
// unload, and the host neither crashes nor reads unmapped memory (run under
// the asan preset too).
#include "trace_support.hpp"

#include <jitscope/jitscope.h>
#include <jitscope/jitscope.hpp>

#include <dlfcn.h>

#include <chrono>
#include <map>
#include <set>
#include <string>

namespace jitscope::testing {
namespace {

struct Plugin {
  void* handle = nullptr;
  void (*work)(int) = nullptr;
  void (*open_span)() = nullptr;
};

Plugin load_plugin() {
  Plugin p;
  p.handle = ::dlopen(UNLOAD_PLUGIN, RTLD_NOW | RTLD_LOCAL);
  if (p.handle == nullptr) {
    ADD_FAILURE() << ::dlerror();
    return p;
  }
  p.work = reinterpret_cast<void (*)(int)>(::dlsym(p.handle, "plugin_work"));
  p.open_span = reinterpret_cast<void (*)()>(::dlsym(p.handle, "plugin_open_span"));
  return p;
}

TEST(PluginUnload, EventsOfAnUnloadedPluginKeepTheirNames) {
  Config cfg;
  cfg.output_path = temp_path("unload");
  // Long: without the unload's own drain, nothing is written before stop(),
  // when the plugin's names are long unmapped.
  cfg.flush_interval = std::chrono::seconds(30);
  cfg.cupti = CuptiMode::kOff;
  ASSERT_TRUE(start(cfg));
  constexpr int kCycles = 30;
  auto slowest = std::chrono::steady_clock::duration::zero();
  for (int i = 0; i < kCycles; ++i) {
    Plugin p = load_plugin();
    ASSERT_NE(p.work, nullptr);
    ASSERT_NE(p.open_span, nullptr);
    p.work(i);
    p.open_span();
    const auto before = std::chrono::steady_clock::now();
    ASSERT_EQ(::dlclose(p.handle), 0) << ::dlerror();
    slowest = std::max(slowest, std::chrono::steady_clock::now() - before);
    // Really unmapped, or this test proves nothing.
    ASSERT_EQ(::dlopen(UNLOAD_PLUGIN, RTLD_NOW | RTLD_NOLOAD), nullptr)
        << "the plugin stayed loaded after dlclose";
    jitscope_span_end();  // the plugin's span, ended with its image gone
  }
  std::printf("slowest dlclose: %lld us\n",
              static_cast<long long>(
                  std::chrono::duration_cast<std::chrono::microseconds>(slowest).count()));
  SessionStats stats;
  ASSERT_TRUE(stop(&stats));
  EXPECT_EQ(stats.spans_incomplete, 0u);
  EXPECT_EQ(stats.events_dropped, 0u);

  const nlohmann::json trace = load_trace(cfg.output_path);
  std::map<std::string, int> count;  // "ph name" -> events
  std::set<std::int64_t> arg_rounds, instant_rounds, counter_rounds;
  for (const auto& e : trace) {
    const std::string ph = e.value("ph", "");
    if (ph == "M") continue;
    const std::string name = e.value("name", "");
    ++count[ph + " " + name];
    if (e.contains("args") && e["args"].contains("incomplete")) ADD_FAILURE() << e.dump();
    if (name == "plugin_args") arg_rounds.insert(e["args"]["plugin_key"].get<std::int64_t>());
    if (name == "plugin_instant")
      instant_rounds.insert(e["args"]["plugin_instant_key"].get<std::int64_t>());
    if (name == "plugin_counter") counter_rounds.insert(e["args"]["value"].get<std::int64_t>());
  }
  for (const char* key :
       {"X plugin_span", "X plugin_args", "I plugin_instant", "C plugin_counter", "X plugin_c_span",
        "I plugin_c_instant", "X plugin_open", "I plugin_static_dtor"}) {
    EXPECT_EQ(count[key], kCycles) << key;
  }
  EXPECT_EQ(arg_rounds.size(), static_cast<std::size_t>(kCycles));
  EXPECT_EQ(instant_rounds.size(), static_cast<std::size_t>(kCycles));
  EXPECT_EQ(counter_rounds.size(), static_cast<std::size_t>(kCycles));
}

// Without a session the hook is one load: loading and unloading a plugin
// that records nothing changes nothing, and needs no flusher.
TEST(PluginUnload, UnloadWithoutASessionIsQuiet) {
  ASSERT_FALSE(active());
  for (int i = 0; i < 3; ++i) {
    Plugin p = load_plugin();
    ASSERT_NE(p.work, nullptr);
    p.work(i);
    ASSERT_EQ(::dlclose(p.handle), 0);
  }
  EXPECT_FALSE(active());
}

}  // namespace
}  // namespace jitscope::testing
