// Tests for sdk/src/json_writer: escaping, UTF-8 repair, number formatting and separators,
// with nlohmann::json as the independent parser and a definition-based UTF-8 reference below.
//
// Not covered here: throughput (measured by a benchmark, not asserted); std::bad_alloc
// propagation when the string cannot grow; structural misuse (unbalanced begin/end, key()
// inside an array), which the writer documents it does not detect; big-endian hosts (their
// byte-at-a-time tail path never runs here); the C++23 resize_and_overwrite branch (only
// built with -std=c++2b); that writes stay inside the room reserved in the string (std::string
// does not poison its spare capacity, so ASan cannot see it; reads past the input are caught,
// see NoReadPastTheView); that the sign of -0.0 survives a parse (nlohmann reads "-0" as 0).
#include "base/json_writer.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace jitscope::detail {
namespace {

using nlohmann::json;

const std::string kFffd = "\xEF\xBF\xBD";

// Reference UTF-8 repair written from the definitions rather than from byte-range tables:
// a prefix is acceptable if some scalar value's encoding starts with it. At each position
// take the longest acceptable prefix; if it is a whole sequence copy it, otherwise emit one
// U+FFFD and skip it (at least one byte). That is the "maximal subpart" rule.
int seq_len(unsigned char lead) {
  if (lead < 0x80) return 1;
  if ((lead & 0xE0) == 0xC0) return 2;
  if ((lead & 0xF0) == 0xE0) return 3;
  if ((lead & 0xF8) == 0xF0) return 4;
  return 0;
}

bool prefix_acceptable(const unsigned char* p, int k, int len) {
  static constexpr unsigned kLeadBits[] = {0, 7, 5, 4, 3};
  std::uint32_t lo = p[0] & ((1u << kLeadBits[len]) - 1);
  for (int j = 1; j < k; ++j) {
    if ((p[j] & 0xC0) != 0x80) return false;
    lo = (lo << 6) | (p[j] & 0x3F);
  }
  std::uint32_t hi = lo;
  for (int j = k; j < len; ++j) {
    lo <<= 6;
    hi = (hi << 6) | 0x3F;
  }
  // Code points this many bytes may encode, minus surrogates.
  static constexpr std::uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
  static constexpr std::uint32_t kMax[] = {0, 0x7F, 0x7FF, 0xFFFF, 0x10FFFF};
  auto overlaps = [&](std::uint32_t a, std::uint32_t b) { return lo <= b && hi >= a; };
  if (len == 3) return overlaps(0x800, 0xD7FF) || overlaps(0xE000, 0xFFFF);
  return overlaps(kMin[len], kMax[len]);
}

std::string reference_repair(std::string_view s) {
  std::string r;
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  std::size_t i = 0;
  while (i < s.size()) {
    const int len = seq_len(p[i]);
    int good = 0;
    if (len > 0) {
      const int avail = static_cast<int>(std::min<std::size_t>(len, s.size() - i));
      for (int k = 1; k <= avail && prefix_acceptable(p + i, k, len); ++k) good = k;
    }
    if (good == len && len > 0) {
      r.append(s.substr(i, len));
      i += len;
    } else {
      r += kFffd;
      i += good > 0 ? good : 1;
    }
  }
  return r;
}

bool is_valid_utf8(std::string_view s) { return reference_repair(s) == s; }

// Writes s as a JSON string and decodes it with nlohmann; fails the test on a parse error.
std::string round_trip(std::string_view s) {
  std::string out;
  append_json_string(out, s);
  json j = json::parse(out, nullptr, /*allow_exceptions=*/false);
  EXPECT_TRUE(j.is_string()) << "unparsable output for input of size " << s.size();
  return j.is_string() ? j.get<std::string>() : std::string("<parse error>");
}

std::string bytes(std::initializer_list<int> b) {
  std::string s;
  for (int c : b) s.push_back(static_cast<char>(c));
  return s;
}

std::string repeat(const std::string& s, int n) {
  std::string r;
  for (int i = 0; i < n; ++i) r += s;
  return r;
}

struct Case {
  std::string input;
  std::string expected;
};

TEST(JsonString, HostileTable) {
  const std::string f = kFffd;
  const std::vector<Case> cases = {
      {"", ""},
      {"plain", "plain"},
      {"\"", "\""},
      {"\\", "\\"},
      {"\n", "\n"},
      {"\"\\\"\\", "\"\\\"\\"},
      {std::string("a\0b", 3), std::string("a\0b", 3)},
      {"\x7F", "\x7F"},
      // Lone bad leads.
      {"\x80", f},
      {"\xBF", f},
      {"\xC0", f},
      {"\xC1", f},
      {"\xF5", f},
      {"\xFE", f},
      {"\xFF", f},
      {"\x80\x80\x80", f + f + f},
      // Truncated sequences: one U+FFFD per truncated prefix.
      {"\xC3", f},
      {"\xE2\x82", f},
      {"\xE2", f},
      {"\xF0\x9F\x98", f},
      {"\xF0\x9F", f},
      {"\xE2\x82"
       "A",
       f + "A"},
      {"\xF0\x9F\x98"
       "\"",
       f + "\""},
      {"\xC3\xC3\xA9", f + "\xC3\xA9"},
      {"\xE2\x82\xE2\x82\xAC", f + "\xE2\x82\xAC"},
      // Overlong forms.
      {"\xC0\x80", f + f},
      {"\xC1\xBF", f + f},
      {"\xE0\x80\xAF", f + f + f},
      {"\xE0\x9F\xBF", f + f + f},
      {"\xF0\x80\x80\xAF", f + f + f + f},
      {"\xF0\x8F\xBF\xBF", f + f + f + f},
      // UTF-16 surrogates in 3 bytes.
      {"\xED\xA0\x80", f + f + f},
      {"\xED\xBF\xBF", f + f + f},
      {"\xED\xA0\x80\xED\xB0\x80", repeat(f, 6)},
      // Above U+10FFFF.
      {"\xF4\x90\x80\x80", f + f + f + f},
      {"\xF7\xBF\xBF\xBF", f + f + f + f},
      {"\xF8\x88\x80\x80\x80", repeat(f, 5)},
      // Valid 2/3/4-byte sequences and the range edges.
      {"\xC2\x80", "\xC2\x80"},
      {"\xC3\xA9", "\xC3\xA9"},
      {"\xDF\xBF", "\xDF\xBF"},
      {"\xE0\xA0\x80", "\xE0\xA0\x80"},
      {"\xE2\x82\xAC", "\xE2\x82\xAC"},
      {"\xED\x9F\xBF", "\xED\x9F\xBF"},
      {"\xEE\x80\x80", "\xEE\x80\x80"},
      {"\xEF\xBF\xBF", "\xEF\xBF\xBF"},
      {"\xEF\xBF\xBD", "\xEF\xBF\xBD"},
      {"\xF0\x90\x80\x80", "\xF0\x90\x80\x80"},
      {"\xF0\x9F\x98\x80", "\xF0\x9F\x98\x80"},
      {"\xF4\x8F\xBF\xBF", "\xF4\x8F\xBF\xBF"},
      // Mixed.
      {"a\xE2\x82\xAC"
       "b\xFF"
       "c\"\n\x01"
       "d\xF0\x9F\x98\x80",
       "a\xE2\x82\xAC"
       "b" +
           f +
           "c\"\n\x01"
           "d\xF0\x9F\x98\x80"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(testing::PrintToString(c.input));
    EXPECT_EQ(round_trip(c.input), c.expected);
    // The hand-written expectations also pin down the reference used by later tests.
    EXPECT_EQ(reference_repair(c.input), c.expected);
  }
}

TEST(JsonString, EveryControlByte) {
  for (int c = 0; c < 0x20; ++c) {
    const std::string s = "x" + std::string(1, static_cast<char>(c)) + "y";
    SCOPED_TRACE(c);
    EXPECT_EQ(round_trip(s), s);
    std::string out;
    append_json_string_body(out, s);
    for (char ch : out) EXPECT_GE(static_cast<unsigned char>(ch), 0x20);
  }
}

TEST(JsonString, ExactEscapedText) {
  std::string out = "prefix:";
  append_json_string(out, std::string("a\"b\\c\n\r\t\b\f\x01\x1F\x7F\0", 14));
  EXPECT_EQ(out, R"(prefix:"a\"b\\c\n\r\t\b\f\u0001\u001f)"
                 "\x7F"
                 R"(\u0000")");
  out.clear();
  append_json_string_body(out, "\xC0\x80z");
  EXPECT_EQ(out, kFffd + kFffd + "z");
}

// Each special byte at every offset inside a long plain run, so the 8-byte fast scan sees it
// at every lane and across word boundaries.
TEST(JsonString, SpecialsAtEveryOffset) {
  const std::vector<Case> specials = {
      {"\"", "\""},        {"\\", "\\"},    {"\n", "\n"},
      {"\x1F", "\x1F"},    {"\x80", kFffd}, {"\xE2\x82\xAC", "\xE2\x82\xAC"},
      {"\xE2\x82", kFffd}, {"\xFF", kFffd},
  };
  const std::string plain = "abcdefghijklmnopqrstuvwxyz012345";
  for (const Case& sp : specials) {
    for (std::size_t pos = 0; pos <= plain.size(); ++pos) {
      const std::string in = plain.substr(0, pos) + sp.input + plain.substr(pos);
      const std::string want = plain.substr(0, pos) + sp.expected + plain.substr(pos);
      ASSERT_EQ(round_trip(in), want) << "pos " << pos << " special " << sp.input;
    }
  }
}

// Views that end exactly at the end of a heap block, with no terminating NUL behind them, so
// the sanitizer build catches any read past the view (the word scan, a truncated sequence).
TEST(JsonString, NoReadPastTheView) {
  const std::vector<Case> tails = {
      {"", ""}, {"\xC3", kFffd}, {"\xE2\x82", kFffd}, {"\xF0\x9F\x98", kFffd}, {"\"", "\""}};
  for (const Case& tail : tails) {
    for (std::size_t len = 0; len <= 24; ++len) {
      const std::string in = std::string(len, 'a') + tail.input;
      auto block = std::make_unique<char[]>(in.size());
      std::copy(in.begin(), in.end(), block.get());
      std::string out;
      append_json_string_body(out, std::string_view(block.get(), in.size()));
      std::string want;
      append_json_string_body(want, std::string(len, 'a') + tail.expected);
      EXPECT_EQ(out, want) << len;
    }
  }
}

// Valid output is not enough: printable ASCII and valid UTF-8 must come out byte for byte,
// not as needless \u escapes. Checked alone (1-byte path), in short tails and in whole words.
TEST(JsonString, PlainBytesAreCopiedVerbatim) {
  std::string printable;
  for (int c = 0x20; c < 0x80; ++c) {
    if (c != '"' && c != '\\') printable.push_back(static_cast<char>(c));
  }
  for (std::size_t len : {1, 2, 3, 5, 7, 8, 9, 15, 16}) {
    for (std::size_t start = 0; start + len <= printable.size(); ++start) {
      const std::string s = printable.substr(start, len);
      std::string out;
      append_json_string_body(out, s);
      ASSERT_EQ(out, s);
    }
  }
  const std::string utf8 = "\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80\xF4\x8F\xBF\xBF";
  std::string out;
  append_json_string_body(out, utf8);
  EXPECT_EQ(out, utf8);
}

TEST(JsonString, AllSingleBytes) {
  for (int b = 0; b < 256; ++b) {
    const std::string s(1, static_cast<char>(b));
    const std::string got = round_trip(s);
    EXPECT_TRUE(is_valid_utf8(got)) << b;
    EXPECT_EQ(got, b < 0x80 ? s : kFffd) << b;
  }
}

TEST(JsonString, AllTwoByteStrings) {
  int failures = 0;
  for (int a = 0; a < 256 && failures < 10; ++a) {
    for (int b = 0; b < 256 && failures < 10; ++b) {
      const std::string s = bytes({a, b});
      std::string out;
      append_json_string(out, s);
      json j = json::parse(out, nullptr, false);
      if (!j.is_string()) {
        ADD_FAILURE() << "parse failed for " << a << "," << b;
        ++failures;
        continue;
      }
      const std::string got = j.get<std::string>();
      if (!is_valid_utf8(got) || got != reference_repair(s)) {
        ADD_FAILURE() << "bad decode for " << a << "," << b;
        ++failures;
      }
    }
  }
}

TEST(JsonString, RandomBytesMatchReference) {
  std::mt19937 rng(12345);  // fixed seed: failures reproduce
  // Bytes that sit on a decision boundary of the decoder, mixed with uniform noise.
  const unsigned char edges[] = {0x00, 0x1F, 0x20, '"',  '\\', 0x7F, 0x80, 0x8F,
                                 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xC1, 0xC2, 0xDF,
                                 0xE0, 0xED, 0xEF, 0xF0, 0xF4, 0xF5, 0xFF, 'a'};
  for (int iter = 0; iter < 20000; ++iter) {
    const std::size_t len = rng() % 48;
    std::string s;
    for (std::size_t i = 0; i < len; ++i) {
      const std::uint32_t r = rng();
      s.push_back(static_cast<char>((r & 1) ? edges[(r >> 1) % sizeof edges] : (r >> 8) & 0xFF));
    }
    const std::string got = round_trip(s);
    ASSERT_EQ(got, reference_repair(s))
        << "iteration " << iter << " input " << testing::PrintToString(s);
  }
}

TEST(JsonString, MillionBytesMixed) {
  // Pieces with known repairs; invalid ones end in ASCII so neighbours cannot complete them.
  const std::vector<Case> pieces = {
      {"The quick brown fox jumps over the lazy dog. ",
       "The quick brown fox jumps over the lazy dog. "},
      {"\"quoted\\path\"", "\"quoted\\path\""},
      {"\n\t\r\x01\x1F", "\n\t\r\x01\x1F"},
      {std::string("\0", 1), std::string("\0", 1)},
      {"\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80", "\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80"},
      {"\xE2\x82x", kFffd + "x"},
      {"\xC0\x80x", kFffd + kFffd + "x"},
      {"\xED\xA0\x80x", kFffd + kFffd + kFffd + "x"},
      {"\xF4\x90\x80\x80x", repeat(kFffd, 4) + "x"},
      {"\xFFx", kFffd + "x"},
      {"kernel<float, 128>::launch", "kernel<float, 128>::launch"},
  };
  std::mt19937 rng(777);
  constexpr std::size_t kSize = 1000000;
  std::string in;
  std::string want;
  while (true) {
    const Case& c = pieces[rng() % pieces.size()];
    if (in.size() + c.input.size() > kSize) break;
    in += c.input;
    want += c.expected;
  }
  // Pad with ASCII to exactly kSize so the expectation stays known.
  want.append(kSize - in.size(), 'a');
  in.append(kSize - in.size(), 'a');
  ASSERT_EQ(in.size(), kSize);
  const std::string got = round_trip(in);
  EXPECT_TRUE(got == want) << "decoded size " << got.size() << " want " << want.size();
  EXPECT_TRUE(reference_repair(in) == want);
}

TEST(Numbers, AppendUs) {
  auto us = [](std::uint64_t ns) {
    std::string s;
    append_us(s, ns);
    return s;
  };
  EXPECT_EQ(us(0), "0.000");
  EXPECT_EQ(us(5), "0.005");
  EXPECT_EQ(us(999), "0.999");
  EXPECT_EQ(us(1000), "1.000");
  EXPECT_EQ(us(1234567), "1234.567");
  EXPECT_EQ(us(std::numeric_limits<std::uint64_t>::max()), "18446744073709551.615");
  EXPECT_TRUE(json::parse(us(1234567)).is_number());
  // Against the plain spelling, at every digit count's edges (the low 8
  // integer digits are written by pairs) and at random.
  auto plain = [](std::uint64_t ns) {
    const std::string frac = std::to_string(1000 + ns % 1000).substr(1);
    return std::to_string(ns / 1000) + "." + frac;
  };
  std::vector<std::uint64_t> cases;
  for (std::uint64_t p = 1; p <= std::numeric_limits<std::uint64_t>::max() / 10; p *= 10) {
    for (std::uint64_t v : {p - 1, p, p + 1, 99 * p + 1, 100'000'000 * p + 7}) cases.push_back(v);
  }
  std::mt19937_64 rng(7);
  for (int i = 0; i < 20000; ++i) cases.push_back(rng() >> (rng() % 64));
  cases.push_back(std::numeric_limits<std::uint64_t>::max());
  for (std::uint64_t ns : cases) ASSERT_EQ(us(ns), plain(ns)) << ns;
}

TEST(Numbers, AppendInts) {
  std::string s;
  append_int(s, std::numeric_limits<std::int64_t>::min());
  s += ' ';
  append_int(s, -1);
  s += ' ';
  append_uint(s, std::numeric_limits<std::uint64_t>::max());
  EXPECT_EQ(s, "-9223372036854775808 -1 18446744073709551615");
}

TEST(Numbers, AppendDouble) {
  auto dbl = [](double v) {
    std::string s;
    append_double(s, v);
    return s;
  };
  EXPECT_EQ(dbl(0.1), "0.1");
  EXPECT_EQ(dbl(-0.0), "-0");
  EXPECT_EQ(dbl(1e300), "1e+300");
  EXPECT_EQ(dbl(std::numeric_limits<double>::quiet_NaN()), "null");
  EXPECT_EQ(dbl(std::numeric_limits<double>::infinity()), "null");
  EXPECT_EQ(dbl(-std::numeric_limits<double>::infinity()), "null");
  EXPECT_TRUE(json::parse(dbl(std::numeric_limits<double>::quiet_NaN())).is_null());
  for (double v : {0.1, -0.0, 1e300, -1e-300, 5e-324, 1.0 / 3.0, 123456789.125, -2.5,
                   std::numeric_limits<double>::max(), std::numeric_limits<double>::min()}) {
    const std::string s = dbl(v);
    SCOPED_TRACE(s);
    json j = json::parse(s, nullptr, false);
    ASSERT_TRUE(j.is_number());
    EXPECT_EQ(j.get<double>(), v);
  }
}

TEST(JsonWriter, NestedExactText) {
  std::string out;
  JsonWriter w(out);
  w.begin_object();
  w.member("name", "run \"1\"");
  w.key("args");
  w.begin_object();
  w.member("n", 5);
  w.member("big", std::numeric_limits<std::uint64_t>::max());
  w.member("neg", std::int64_t{-7});
  w.end_object();
  w.key("list");
  w.begin_array();
  w.value(1);
  w.value(2.5);
  w.value(true);
  w.value(false);
  w.null();
  w.value(static_cast<const char*>(nullptr));
  w.begin_array();
  w.end_array();
  w.begin_object();
  w.end_object();
  w.begin_array();
  w.begin_object();
  w.member("k", "v");
  w.end_object();
  w.end_array();
  w.value(std::string("x"));
  w.end_array();
  w.key("ts");
  w.value_us(1234567);
  w.key("raw");
  w.raw(R"({"a":[1,2]})");
  w.member("k\n", std::string_view("\xFF"));
  w.end_object();
  EXPECT_EQ(out, R"({"name":"run \"1\"","args":{"n":5,"big":18446744073709551615,"neg":-7},)"
                 R"("list":[1,2.5,true,false,null,null,[],{},[{"k":"v"}],"x"],)"
                 R"("ts":1234.567,"raw":{"a":[1,2]},"k\n":")"
                 "\xEF\xBF\xBD"
                 R"("})");
  json j = json::parse(out, nullptr, false);
  ASSERT_TRUE(j.is_object());
  EXPECT_EQ(j["args"]["big"].get<std::uint64_t>(), std::numeric_limits<std::uint64_t>::max());
  EXPECT_EQ(j["list"][8][0]["k"], "v");
  EXPECT_EQ(&w.buffer(), &out);
}

TEST(JsonWriter, OverloadsPickTheRightKind) {
  std::string out;
  JsonWriter w(out);
  w.begin_array();
  w.value("lit");  // string, not bool
  w.value(std::string("str"));
  w.value(std::string_view("sv"));
  char mutable_chars[] = "chars";
  w.value(static_cast<char*>(mutable_chars));
  w.value(nullptr);
  w.value(std::int64_t{-1});
  w.value(std::uint64_t{2});
  w.value(-3);
  w.value(4u);
  w.value(-5LL);
  w.value(6ULL);
  w.value(-7L);
  w.value(static_cast<short>(-8));
  w.value(static_cast<std::uint8_t>(9));
  w.value(1.5f);
  w.value(0.25);
  w.value(true);
  w.end_array();
  EXPECT_EQ(out, R"(["lit","str","sv","chars",null,-1,2,-3,4,-5,6,-7,-8,9,1.5,0.25,true])");

  out.clear();
  JsonWriter m(out);
  m.begin_object();
  m.member("a", 5);
  m.member("b", "lit");
  m.member("c", std::string("s"));
  m.member("d", 5ULL);
  m.member("e", false);
  m.member("f", 0.5);
  m.end_object();
  EXPECT_EQ(out, R"({"a":5,"b":"lit","c":"s","d":5,"e":false,"f":0.5})");
}

// Items over 4096 bytes of text take the chunked path; a multi-byte sequence and an escape
// straddle the 4096-byte chunk boundary.
TEST(JsonWriter, LongItemsTakeTheChunkedPath) {
  const std::string long_key = std::string(4095, 'k') + "\xE2\x82\xAC\"" + std::string(5000, 'q');
  const std::string long_value = std::string(4094, 'v') + "\n\xF0\x9F\x98\x80" + "\xFF" + "end";
  std::string long_raw = "[";
  for (int i = 0; i < 2500; ++i) long_raw += "1,";
  long_raw += "1]";
  std::string out;
  JsonWriter w(out);
  w.begin_object();
  w.member("short", 1);
  w.member(long_key, long_value);
  w.key(long_key + "2");
  w.value(7);
  w.key("raw");
  w.raw(long_raw);
  w.member("after", "x");
  w.end_object();
  json j = json::parse(out, nullptr, false);
  ASSERT_TRUE(j.is_object());
  EXPECT_EQ(j[long_key], reference_repair(long_value));
  EXPECT_EQ(j[long_key + "2"], 7);
  EXPECT_EQ(j["raw"].dump(), long_raw);
  EXPECT_EQ(j["after"], "x");
  EXPECT_EQ(j.size(), 5u);
  EXPECT_NE(out.find(",\"raw\":[1,1,"), std::string::npos);  // separators in the right places
}

TEST(JsonWriter, DeepNestingHasNoLimit) {
  constexpr int kDepth = 200;  // well past the 64 the interface promises
  std::string out;
  JsonWriter w(out);
  for (int i = 0; i < kDepth; ++i) {
    w.begin_array();
    w.value(i);
  }
  for (int i = 0; i < kDepth; ++i) w.end_array();
  json j = json::parse(out, nullptr, false);
  ASSERT_FALSE(j.is_discarded());
  EXPECT_EQ(out.substr(0, 10), "[0,[1,[2,[");
  EXPECT_EQ(out.substr(out.size() - 3), "]]]");
}

TEST(JsonWriter, TopLevelSequenceIsCommaSeparated) {
  // A flusher may write only the events of "traceEvents":[ ... ] through the writer.
  std::string out = "[";
  JsonWriter w(out);
  for (int i = 0; i < 3; ++i) {
    w.begin_object();
    w.member("i", i);
    w.end_object();
  }
  out += "]";
  EXPECT_EQ(out, R"([{"i":0},{"i":1},{"i":2}])");
}

}  // namespace
}  // namespace jitscope::detail
