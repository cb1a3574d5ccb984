// fuzz_json_writer: the SDK's one JSON writer (sdk/src/base/json_writer.hpp) on
// arbitrary bytes as keys, names and string values.
//
// The input drives a well-formed use of JsonWriter (balanced begin/end, keys
// only inside objects, as the header requires): members and array values of
// every kind (strings of any bytes, some repeated past the writer's 4 KiB
// chunk, const char* and nullptr, int64/uint64 extremes, doubles from raw bit
// patterns (NaN, infinities, subnormals, -0), bools, null, value_us, raw()
// of a value the writer rendered), nested up to 48 deep. Checked:
// - the output always parses (simdjson DOM: strict RFC 8259, UTF-8
//   validated) as exactly the document that was written: same structure,
//   same key order, every string equal to the input with each maximal
//   invalid UTF-8 subpart replaced by U+FFFD (so a valid UTF-8 string reads
//   back byte for byte), integers exact, finite doubles bit for bit (modulo
//   the sign of zero), NaN/inf as null, value_us as the µs number;
// - append_json_string writes exactly the escapes the header lists;
// - append_us / append_int / append_uint / append_double write the exact
//   text promised (three decimals; shortest round-trip double; null).
// Not covered: TraceWriter (it needs the flusher's ring records; the
// hostile_strings test drives it), misuse of the writer (unbalanced calls).
#include "fuzz_support.hpp"

#include "base/json_writer.hpp"

#include <fuzzer/FuzzedDataProvider.h>
#include <simdjson.h>

#include <bit>
#include <cinttypes>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

namespace {

using jitscope::detail::JsonWriter;
using jitscope::fuzz::expected_json_string;
using jitscope::fuzz::replace_invalid_utf8;

// What a parser must read back, as a pre-order list.
struct Expect {
  enum Kind { kObject, kArray, kEnd, kKey, kString, kInt, kUint, kDouble, kNull, kBool, kUs };
  Kind kind;
  std::string text;  // kKey, kString: the decoded text
  std::int64_t i = 0;
  std::uint64_t u = 0;
  double d = 0;
};

constexpr std::size_t kMaxDepth = 48;
constexpr std::size_t kMaxOps = 2048;

std::string us_text(std::uint64_t ns) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%" PRIu64 ".%03u", ns / 1000, static_cast<unsigned>(ns % 1000));
  return buf;
}

// Bytes of repeated pieces left for this input: one long string crosses the
// chunk boundary twice; more would only slow every input down (the
// comparison tracing costs per byte).
std::size_t g_repeat_budget = 0;
constexpr std::size_t kRepeatBudget = 9200;

// A piece of the input: up to 64 bytes, sometimes repeated past 4 KiB so the
// chunked path (and a multi-byte sequence across its boundary) is taken.
std::string piece(FuzzedDataProvider& fdp) {
  const std::size_t len = fdp.ConsumeIntegralInRange<std::size_t>(0, 64);
  std::string s = fdp.ConsumeBytesAsString(len);
  if (!s.empty() && fdp.ConsumeIntegralInRange<int>(0, 63) == 0 && g_repeat_budget >= 9200) {
    const std::size_t times = fdp.ConsumeIntegralInRange<std::size_t>(2, 9000 / s.size() + 2);
    g_repeat_budget -= s.size() * times;
    std::string r;
    r.reserve(s.size() * times);
    for (std::size_t k = 0; k < times; ++k) r += s;
    s = std::move(r);
  }
  return s;
}

// The standalone number and string appenders, against their exact text.
void check_scalars(FuzzedDataProvider& fdp) {
  using namespace jitscope::detail;
  const std::uint64_t ns = fdp.ConsumeIntegral<std::uint64_t>();
  std::string s;
  append_us(s, ns);
  FUZZ_CHECK(s == us_text(ns), s);
  const std::int64_t i = fdp.ConsumeIntegral<std::int64_t>();
  s.clear();
  append_int(s, i);
  FUZZ_CHECK(s == std::to_string(i), s);
  s.clear();
  append_uint(s, ns);
  FUZZ_CHECK(s == std::to_string(ns), s);
  const double d = std::bit_cast<double>(fdp.ConsumeIntegral<std::uint64_t>());
  s.clear();
  append_double(s, d);
  if (!std::isfinite(d)) {
    FUZZ_CHECK(s == "null", s);
  } else {
    char* end = nullptr;
    const double back = std::strtod(s.c_str(), &end);
    FUZZ_CHECK(end == s.c_str() + s.size(), s);
    FUZZ_CHECK(std::bit_cast<std::uint64_t>(back) == std::bit_cast<std::uint64_t>(d), s);
  }
  const std::string str = piece(fdp);
  s = "x";  // appends keep what is there
  append_json_string(s, str);
  FUZZ_CHECK(s == "x" + expected_json_string(str), s);
  std::string body;
  append_json_string_body(body, str);
  FUZZ_CHECK("\"" + body + "\"" == s.substr(1), body);
}

class Builder {
 public:
  explicit Builder(FuzzedDataProvider& fdp) : fdp_(fdp), w_(out_) {}

  void run() {
    open(fdp_.ConsumeBool());
    for (std::size_t ops = 0; ops < kMaxOps && fdp_.remaining_bytes() > 0; ++ops) step();
    while (!stack_.empty()) close();
  }
  const std::string& out() const { return out_; }
  const std::vector<Expect>& expect() const { return expect_; }

 private:
  void open(bool object) {
    if (object) {
      w_.begin_object();
    } else {
      w_.begin_array();
    }
    stack_.push_back(object);
    expect_.push_back({object ? Expect::kObject : Expect::kArray, {}});
  }
  void close() {
    if (stack_.back()) {
      w_.end_object();
    } else {
      w_.end_array();
    }
    stack_.pop_back();
    expect_.push_back({Expect::kEnd, {}});
  }

  // One value, after a key inside an object (`key` set) or in an array.
  // `member` picks member(k, v) over key(k) + value(v) when there is a key.
  template <class T>
  void put(const std::string* key, bool member, const T& v) {
    if (key != nullptr && member) {
      w_.member(*key, v);
      return;
    }
    if (key != nullptr) w_.key(*key);
    w_.value(v);
  }

  void step() {
    const auto op = fdp_.ConsumeIntegral<std::uint8_t>();
    const bool in_object = stack_.back();
    if (op % 16 == 15) {  // close (never the outermost: the document stays one value)
      if (stack_.size() > 1) close();
      return;
    }
    std::string key;
    if (in_object) {
      key = piece(fdp_);
      expect_.push_back({Expect::kKey, replace_invalid_utf8(key)});
    }
    const std::string* k = in_object ? &key : nullptr;
    const bool member = (op & 0x80) != 0;
    switch (op % 16) {
      case 0:
      case 1:
      case 2: {
        const std::string s = piece(fdp_);
        put(k, member, std::string_view(s));
        expect_.push_back({Expect::kString, replace_invalid_utf8(s)});
        break;
      }
      case 3: {  // const char*: up to the first NUL; nullptr is null
        const std::string s = piece(fdp_);
        if (fdp_.ConsumeBool()) {
          const char* p = s.c_str();
          put(k, member, p);
          expect_.push_back({Expect::kString, replace_invalid_utf8(std::string_view(p))});
        } else {
          const char* p = nullptr;
          put(k, member, p);
          expect_.push_back({Expect::kNull, {}});
        }
        break;
      }
      case 4: {
        const auto v = fdp_.ConsumeIntegral<std::int64_t>();
        put(k, member, v);
        Expect e{Expect::kInt, {}};
        e.i = v;
        expect_.push_back(e);
        break;
      }
      case 5: {
        const auto v = fdp_.ConsumeIntegral<std::uint64_t>();
        put(k, member, v);
        Expect e{Expect::kUint, {}};
        e.u = v;
        expect_.push_back(e);
        break;
      }
      case 6: {  // the narrow integer overloads
        const auto v = fdp_.ConsumeIntegral<short>();
        const auto u = static_cast<unsigned char>(v);
        Expect e{Expect::kInt, {}};
        if (fdp_.ConsumeBool()) {
          put(k, member, v);
          e.i = v;
        } else {
          put(k, member, u);
          e.i = u;
        }
        expect_.push_back(e);
        break;
      }
      case 7: {  // any bit pattern: NaN, infinities, subnormals, -0
        const double v = std::bit_cast<double>(fdp_.ConsumeIntegral<std::uint64_t>());
        put(k, member, v);
        Expect e{std::isfinite(v) ? Expect::kDouble : Expect::kNull, {}};
        e.d = v;
        expect_.push_back(e);
        break;
      }
      case 8: {
        const bool v = fdp_.ConsumeBool();
        put(k, member, v);
        Expect e{Expect::kBool, {}};
        e.i = v;
        expect_.push_back(e);
        break;
      }
      case 9:
        if (k != nullptr) w_.key(key);
        w_.null();
        expect_.push_back({Expect::kNull, {}});
        break;
      case 10: {
        const auto ns = fdp_.ConsumeIntegral<std::uint64_t>();
        if (k != nullptr) w_.key(key);
        w_.value_us(ns);
        Expect e{Expect::kUs, {}};
        e.u = ns;
        expect_.push_back(e);
        break;
      }
      case 11: {  // raw(): a value the writer rendered
        std::string raw;
        const std::string s = piece(fdp_);
        jitscope::detail::append_json_string(raw, s);
        if (k != nullptr) w_.key(key);
        w_.raw(raw);
        expect_.push_back({Expect::kString, replace_invalid_utf8(s)});
        break;
      }
      case 12:
      case 13:
      case 14:
        if (stack_.size() < kMaxDepth) {
          if (k != nullptr) w_.key(key);
          open(op % 16 != 14);
        } else {  // too deep: a plain value keeps the key used
          if (k != nullptr) w_.key(key);
          w_.value(false);
          Expect e{Expect::kBool, {}};
          expect_.push_back(e);
        }
        break;
      default: break;
    }
  }

  FuzzedDataProvider& fdp_;
  std::string out_;
  JsonWriter w_;
  std::vector<bool> stack_;  // true: object
  std::vector<Expect> expect_;
};

// Walks `e` against expect[i...], in document order.
void match(simdjson::dom::element e, const std::vector<Expect>& expect, std::size_t& i,
           const std::string& doc) {
  FUZZ_CHECK(i < expect.size(), doc);
  const Expect& x = expect[i++];
  switch (x.kind) {
    case Expect::kObject: {
      simdjson::dom::object o;
      FUZZ_CHECK(e.get_object().get(o) == simdjson::SUCCESS, doc);
      for (simdjson::dom::key_value_pair kv : o) {
        FUZZ_CHECK(i < expect.size() && expect[i].kind == Expect::kKey, doc);
        FUZZ_CHECK(kv.key == expect[i].text, expect[i].text);
        ++i;
        match(kv.value, expect, i, doc);
      }
      FUZZ_CHECK(i < expect.size() && expect[i].kind == Expect::kEnd, doc);
      ++i;
      return;
    }
    case Expect::kArray: {
      simdjson::dom::array a;
      FUZZ_CHECK(e.get_array().get(a) == simdjson::SUCCESS, doc);
      for (simdjson::dom::element v : a) match(v, expect, i, doc);
      FUZZ_CHECK(i < expect.size() && expect[i].kind == Expect::kEnd, doc);
      ++i;
      return;
    }
    case Expect::kString: {
      std::string_view s;
      FUZZ_CHECK(e.get_string().get(s) == simdjson::SUCCESS, doc);
      FUZZ_CHECK(s == x.text, x.text);
      return;
    }
    case Expect::kInt: {
      std::int64_t v = 0;
      FUZZ_CHECK(e.get_int64().get(v) == simdjson::SUCCESS && v == x.i, doc);
      return;
    }
    case Expect::kUint: {
      std::uint64_t v = 0;
      FUZZ_CHECK(e.get_uint64().get(v) == simdjson::SUCCESS && v == x.u, doc);
      return;
    }
    case Expect::kDouble: {
      double v = 0;
      FUZZ_CHECK(e.get_double().get(v) == simdjson::SUCCESS && v == x.d, doc);
      return;
    }
    case Expect::kUs: {
      double v = 0;
      FUZZ_CHECK(e.get_double().get(v) == simdjson::SUCCESS &&
                     v == std::strtod(us_text(x.u).c_str(), nullptr),
                 us_text(x.u));
      return;
    }
    case Expect::kBool: {
      bool v = false;
      FUZZ_CHECK(e.get_bool().get(v) == simdjson::SUCCESS && v == (x.i != 0), doc);
      return;
    }
    case Expect::kNull: FUZZ_CHECK(e.is_null(), doc); return;
    case Expect::kKey:
    case Expect::kEnd: break;
  }
  FUZZ_CHECK(false && "unexpected expectation", doc);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  FuzzedDataProvider fdp(data, size);
  g_repeat_budget = kRepeatBudget;
  check_scalars(fdp);
  Builder b(fdp);
  b.run();
  static simdjson::dom::parser parser;
  simdjson::dom::element root;
  const auto err = parser.parse(b.out()).get(root);
  FUZZ_CHECK(err == simdjson::SUCCESS, std::string(simdjson::error_message(err)) + ": " + b.out());
  std::size_t i = 0;
  match(root, b.expect(), i, b.out());
  FUZZ_CHECK(i == b.expect().size(), b.out());
  return 0;
}
