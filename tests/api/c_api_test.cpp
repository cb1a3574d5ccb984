// The C API from C code: spans, dynamic names, instants, counters, thread
// names, null pointers, unbalanced ends and error reporting.
// Not covered: behaviour shared with the C++ API (span_test).
#include "base/proto_wire.hpp"
#include "trace_support.hpp"

extern "C" int jitscope_c_scenario(const char* path);
extern "C" int jitscope_c_bad_config(void);
extern "C" int jitscope_c_compressed(const char* path);

namespace jitscope::testing {
namespace {

TEST(CApi, ScenarioWritesTheExpectedTrace) {
  const std::string path = temp_path("c_api");
  ::testing::internal::CaptureStderr();
  ASSERT_EQ(jitscope_c_scenario(path.c_str()), 0);
  const std::string err = ::testing::internal::GetCapturedStderr();
  // The scenario's second start() asks for the same path as its first.
  EXPECT_EQ(err, "jitscope: a session is already active (trace " + path +
                     ", started by start()); not starting the one asked for (trace " + path +
                     "): stop() the active one first\n");
  const nlohmann::json trace = load_trace(path);
  std::map<std::string, nlohmann::json> spans;
  for (const auto& e : events_with_ph(trace, "X")) spans[e["name"]] = e;
  ASSERT_EQ(spans.size(), 2u);
  ASSERT_TRUE(spans.count("c_outer"));
  ASSERT_TRUE(spans.count("c_dynamic"));
  EXPECT_LE(to_ns(spans["c_outer"]["ts"]), to_ns(spans["c_dynamic"]["ts"]));
  const auto instants = events_with_ph(trace, "I");
  ASSERT_EQ(instants.size(), 1u);
  EXPECT_EQ(instants[0]["name"], "c_instant");
  const auto counters = events_with_ph(trace, "C");
  ASSERT_EQ(counters.size(), 1u);
  EXPECT_EQ(counters[0]["args"]["value"], 42.5);
  const auto names = thread_names(trace);
  bool named = false;
  for (const auto& [tid, name] : names) named = named || name == "c-main";
  EXPECT_TRUE(named);
  const nlohmann::json* st = metadata(trace, "jitscope_stats");
  ASSERT_NE(st, nullptr);
  EXPECT_EQ((*st)["args"]["unbalanced_ends"], 1);
  EXPECT_EQ((*st)["args"]["events_dropped"], 0);
}

TEST(CApi, BadConfigsFailWithAReason) {
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(jitscope_c_bad_config(), 0);
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("jitscope: no output path"), std::string::npos) << err;
  EXPECT_NE(err.find("jitscope: cannot open /nonexistent-dir/x.json: No such file"),
            std::string::npos)
      << err;
}

// The C config's compression reaches the session: the file's packets are
// compressed ones (the tools' and the checker's tests read them back).
TEST(CApi, CompressionReachesTheSession) {
  const std::string path = temp_path("c_api_zstd") + ".pftrace";
  ASSERT_EQ(jitscope_c_compressed(path.c_str()), 0);
  const std::string text = read_file(path);
  std::size_t at = 0, packets = 0, compressed = 0;
  while (const std::size_t end = detail::wire::field_end(text, at)) {
    ++packets;
    // After the packet's tag and length, its first field:
    // zstd_compressed_packets (133, length-delimited) is 0xaa 0x08.
    const char* p = text.data() + at + 1;
    std::uint64_t length = 0;
    bool cut = false;
    ASSERT_TRUE(detail::wire::read_varint(&p, text.data() + end, &length, &cut));
    if (text.data() + end - p >= 2 && std::string_view(p, 2) == "\xaa\x08") ++compressed;
    at = end;
  }
  EXPECT_EQ(at, text.size());
  EXPECT_GE(compressed, 1u) << packets << " packets";
  ::unlink(path.c_str());
}

}  // namespace
}  // namespace jitscope::testing
