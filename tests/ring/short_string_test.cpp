// String args of up to 8 bytes travel inside their arg record
// (kFlagInlineString) rather than in a payload slot after it: they take one
// slot, and read back byte for byte in both trace forms, through every
// producer path that writes library args (an arg on a span, an arg list,
// an instant's args).
#include "flush/perfetto_wire.hpp"
#include "ring/producer.hpp"
#include "ring/thread_registry.hpp"
#include "trace_support.hpp"

#include <map>
#include <string>
#include <vector>

namespace jitscope::testing {
namespace {

using nlohmann::json;

// Lengths around the inline limit, with bytes JSON escapes and UTF-8 whose
// characters end at the limit and cross it.
const std::vector<std::string>& values() {
  static const std::vector<std::string> v = {"",
                                             "f",
                                             "sm_90",
                                             "a\"b\\c\n",
                                             "12345678",
                                             "123456789",
                                             "\xc3\xa9",
                                             "1234567\xc3\xa9",
                                             "\xe6\x97\xa5\xe6\x9c\xac",
                                             "tab\there",
                                             std::string(40, 'x')};
  return v;
}

// Arg keys are literals (kept by pointer): one per value.
constexpr char kKeys[11][4] = {"k0", "k1", "k2", "k3", "k4", "k5", "k6", "k7", "k8", "k9", "k10"};
std::string key_of(std::size_t i) { return kKeys[i]; }

// Slots the calling thread's ring holds now (its producer's tail).
std::uint64_t ring_tail() {
  detail::ThreadState* t = detail::current_thread_state_if_registered();
  return t == nullptr ? 0 : t->ring.producer().tail.load(std::memory_order_relaxed);
}

void record_everything() {
  static_assert(std::size(kKeys) == 11);
  const std::uint32_t s = detail::session_word();
  const detail::SpanToken one =
      detail::begin_marked(s, detail::read_clock(s), "one_by_one", {}, 0, 0);
  for (std::size_t i = 0; i < values().size(); ++i) {
    detail::add_arg(one, Arg(kKeys[i], std::string_view(values()[i])));
  }
  detail::end_span(one, detail::read_clock(s));
  const detail::SpanToken listed =
      detail::begin_marked(s, detail::read_clock(s), "listed", {}, 0, 0);
  std::vector<Arg> list;
  for (std::size_t i = 0; i < 8; ++i) list.emplace_back(kKeys[i], std::string_view(values()[i]));
  detail::add_args(listed, list.data(), list.size());
  detail::end_span(listed, detail::read_clock(s));
  std::vector<Arg> instant_args;
  for (std::size_t i = 0; i < values().size(); ++i) {
    instant_args.emplace_back(kKeys[i], std::string_view(values()[i]));
  }
  detail::instant(s, detail::read_clock(s), "marked", {}, instant_args.data(), instant_args.size());
}

// A finished session's events, from its JSON or protobuf file (whole:
// a cut or a decode error fails the test).
std::vector<json> events_of(const std::string& path, bool perfetto) {
  if (!perfetto) {
    const json trace = load_trace(path);
    return {trace.begin(), trace.end()};
  }
  pfwire::Reader reader;
  bool cut = true;
  reader.read(read_file(path), &cut);
  EXPECT_FALSE(cut);
  for (const std::string& e : reader.errors) ADD_FAILURE() << e;
  const json form = reader.json_form();
  return {form.begin(), form.end()};
}

void expect_values(const json& args, std::size_t count, const std::string& where) {
  for (std::size_t i = 0; i < count; ++i) {
    ASSERT_TRUE(args.contains(key_of(i))) << where << " lacks " << key_of(i) << ": " << args;
    EXPECT_EQ(args[key_of(i)].get<std::string>(), values()[i]) << where << " " << key_of(i);
  }
}

TEST(ShortStrings, ReadBackByteForByteInBothForms) {
  for (const bool perfetto : {false, true}) {
    SCOPED_TRACE(perfetto ? "perfetto" : "json");
    Config cfg = test_config(perfetto ? "short_strings_pf" : "short_strings");
    if (perfetto) cfg.output_path += ".pftrace";
    {
      ScopedSession session(cfg);
      ASSERT_TRUE(session.status().ok());
      record_everything();
      session.finish();
      const std::vector<json> events = events_of(session.path(), perfetto);
      int seen = 0;
      for (const json& e : events) {
        const std::string name = e.value("name", "");
        if (name == "one_by_one") expect_values(e["args"], values().size(), name), ++seen;
        if (name == "listed") expect_values(e["args"], 8, name), ++seen;
        if (name == "marked") expect_values(e["args"], values().size(), name), ++seen;
      }
      EXPECT_EQ(seen, 3);
    }
  }
}

TEST(ShortStrings, UpToEightBytesTakeOneSlotAndLongerOnesTheirPayloadToo) {
  Config cfg = test_config("short_string_slots");
  ScopedSession session(cfg);
  ASSERT_TRUE(session.status().ok());
  const std::uint32_t s = detail::session_word();
  const detail::SpanToken span = detail::begin_marked(s, detail::read_clock(s), "slots", {}, 0, 0);
  const auto slots_of = [&](std::string_view value) {
    const std::uint64_t before = ring_tail();
    detail::add_arg(span, Arg("k", value));
    return (ring_tail() - before) / detail::kRecordBytes;
  };
  EXPECT_EQ(slots_of(""), 1u);
  EXPECT_EQ(slots_of("f"), 1u);
  EXPECT_EQ(slots_of("12345678"), 1u);
  EXPECT_EQ(slots_of("123456789"), 2u);
  EXPECT_EQ(slots_of(std::string(32, 'x')), 2u);
  EXPECT_EQ(slots_of(std::string(33, 'x')), 3u);
  const Arg list[3] = {Arg("a", std::string_view("unit")), Arg("b", true),
                       Arg("c", std::string_view("a_longer_key"))};
  const std::uint64_t before = ring_tail();
  detail::add_args(span, list, 3);
  EXPECT_EQ((ring_tail() - before) / detail::kRecordBytes, 4u) << "1 + 1 + (1 + 1 payload)";
  detail::end_span(span, detail::read_clock(s));
}

// A Span's arg list with strings of up to 8 bytes goes inline with its
// Begin, each string inside its record (the 9-byte one takes the library's
// path with the whole list): read back byte for byte in both forms, from
// the macro and from the constructor, and a span with an int and a short
// string takes its Begin and two arg slots.
TEST(ShortStrings, ASpansArgListWithShortStringsReadsBackByteForByte) {
  for (const bool perfetto : {false, true}) {
    SCOPED_TRACE(perfetto ? "perfetto" : "json");
    Config cfg = test_config(perfetto ? "short_list_pf" : "short_list");
    if (perfetto) cfg.output_path += ".pftrace";
    ScopedSession session(cfg);
    ASSERT_TRUE(session.status().ok());
    const std::vector<std::string>& v = values();
    {
      JITSCOPE_SPAN_ARGS("macro", {"k0", std::string_view(v[0])}, {"k1", std::string_view(v[1])},
                         {"k2", std::string_view(v[2])}, {"k3", std::string_view(v[3])},
                         {"k4", std::string_view(v[4])}, {"k5", 5}, {"k6", "\xc3\xa9"},
                         {"k7", 7.5});
    }
    { Span ctor("ctor", {{"k0", std::string_view(v[4])}, {"k1", true}, {"k2", "sm_90"}}); }
    { Span longer("longer", {{"k0", std::string_view(v[5])}, {"k1", 1}, {"k2", "f"}}); }
    const std::uint64_t before = ring_tail();
    { Span slots("slots", {{"n", 3}, {"s", "fast"}}); }
    EXPECT_EQ((ring_tail() - before) / detail::kRecordBytes, 4u) << "Begin, two args, End";
    session.finish();
    const std::vector<json> events = events_of(session.path(), perfetto);
    std::map<std::string, json> args;
    for (const json& e : events) {
      if (e.value("ph", "") == "X") args[e.value("name", "")] = e.value("args", json::object());
    }
    EXPECT_EQ(args["macro"], json({{"k0", v[0]},
                                   {"k1", v[1]},
                                   {"k2", v[2]},
                                   {"k3", v[3]},
                                   {"k4", v[4]},
                                   {"k5", 5},
                                   {"k6", "\xc3\xa9"},
                                   {"k7", 7.5}}));
    EXPECT_EQ(args["ctor"], json({{"k0", v[4]}, {"k1", true}, {"k2", "sm_90"}}));
    EXPECT_EQ(args["longer"], json({{"k0", v[5]}, {"k1", 1}, {"k2", "f"}}));
    EXPECT_EQ(args["slots"], json({{"n", 3}, {"s", "fast"}}));
  }
}

}  // namespace
}  // namespace jitscope::testing
