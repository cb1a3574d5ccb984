#include "trace_reader.hpp"

#include "input_file.hpp"
#include "json_scan.hpp"
#include "perfetto_reader.hpp"
#include "utf8_repair.hpp"

#include <simdjson.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>

namespace jitscope::tools {
namespace {

constexpr std::size_t kNoMark = std::numeric_limits<std::size_t>::max();
constexpr std::uint64_t kUnknownSize = InputFile::kUnknownSize;
// Room past a chunk for the tail of an event the chunk's end cut (see fill()).
constexpr std::size_t kTailRoom = std::size_t{1} << 20;

// "'x'" for a printable character, "byte 0xNN" otherwise.
std::string describe(int c) {
  char buf[32];
  if (c >= 0x20 && c < 0x7f) {
    std::snprintf(buf, sizeof buf, "'%c'", c);
  } else {
    std::snprintf(buf, sizeof buf, "byte 0x%02X", static_cast<unsigned>(c) & 0xffu);
  }
  return buf;
}

}  // namespace

// One read() call: the buffer, the position, the top-level grammar.
class TraceReader::Run {
 public:
  Run(TraceReader& r, InputFile& in, std::string label, std::string_view head,
      const std::function<bool(const RawEvent&)>& on_event,
      const std::function<void(const TopLevelField&)>& on_field, std::string* error)
      : r_(r),
        buf_(r.buffer_),
        in_(in),
        head_(head),
        size_hint_(in.size_hint()),
        label_(std::move(label)),
        on_event_(on_event),
        on_field_(on_field),
        error_(error) {}

  bool run();

 private:
  enum class Scan { kDone, kEof, kError };

  std::uint64_t offset() const noexcept { return base_ + pos_; }
  std::uint64_t end_offset() const noexcept { return base_ + end_; }

  bool fail(std::uint64_t at, const std::string& what) {
    if (!failed_) {
      failed_ = true;
      if (error_ != nullptr) *error_ = label_ + ": byte " + std::to_string(at) + ": " + what;
    }
    return false;
  }
  // At the end of input where more was needed: the I/O error if there was one.
  bool fail_eof(const std::string& what) { return failed_ ? false : fail(end_offset(), what); }

  bool fill();
  void skip_bom();
  int next_nonws();
  Scan scan_value(const char* what);
  bool too_big(const char* what);
  bool array_body(bool in_object);
  bool hand_over(std::uint64_t offset);
  bool object_form();
  bool expect_end();

  TraceReader& r_;
  std::vector<char>& buf_;
  InputFile& in_;            // the file or stdin, plain or gzip
  std::string_view head_;    // its first bytes, read to tell JSON from protobuf: read first
  std::uint64_t size_hint_;  // a plain regular file's size, or kUnknownSize
  std::size_t unknown_size_read_ = std::size_t{64} << 10;  // the next read without a size hint
  std::string label_;
  const std::function<bool(const RawEvent&)>& on_event_;
  const std::function<void(const TopLevelField&)>& on_field_;
  std::string* error_;

  std::size_t pos_ = 0;         // next byte to look at
  std::size_t end_ = 0;         // bytes [0, end_) hold input
  std::size_t mark_ = kNoMark;  // start of the value being scanned: kept across refills
  std::uint64_t base_ = 0;      // input offset of buf_[0]
  bool eof_ = false;
  bool failed_ = false;  // *error_ is set (or a callback stopped the read)
  JsonScanState scan_;
};

bool TraceReader::Run::fill() {
  if (eof_ || failed_) return false;
  const std::size_t keep_from = mark_ != kNoMark ? mark_ : pos_;
  if (keep_from > 0) {
    std::memmove(buf_.data(), buf_.data() + keep_from, end_ - keep_from);
    base_ += keep_from;
    end_ -= keep_from;
    pos_ -= keep_from;
    if (mark_ != kNoMark) mark_ -= keep_from;
  }
  // A regular file's size bounds the first reads: a small trace does not
  // get a whole chunk of buffer. (One byte more than expected, so the end
  // shows as a short read; a file that grows meanwhile is read on.)
  std::size_t to_read = r_.chunk_size_;
  if (size_hint_ != kUnknownSize) {
    const std::uint64_t left = size_hint_ > r_.bytes_read_ ? size_hint_ - r_.bytes_read_ : 0;
    to_read = static_cast<std::size_t>(
        std::min<std::uint64_t>(to_read, std::max<std::uint64_t>(left + 1, 4096)));
  } else {
    // No size known (stdin, a pipe, gzip): reads start at 64 KiB and double
    // up to the chunk, so a small input does not get a whole chunk either.
    to_read = std::min(to_read, unknown_size_read_);
    unknown_size_read_ = std::min(unknown_size_read_ * 2, r_.chunk_size_);
  }
  if (head_.size() > to_read) to_read = head_.size();
  const std::size_t want = end_ + to_read + kJsonPadding;
  // The buffer holds a chunk and the tail of an event the chunk's end cut
  // (kTailRoom): it grows with the reads up to that and no further, so a
  // read holds about one chunk. Only an event longer than the tail room
  // grows it past, by half again (amortized).
  if (buf_.size() < want) {
    const std::size_t usual = r_.chunk_size_ + kTailRoom + kJsonPadding;
    std::size_t size = std::max(want, std::min(buf_.size() * 2, want + (want >> 1)));
    if (want <= usual) size = std::min(std::max(size, want + std::min(kTailRoom, to_read)), usual);
    buf_.resize(size);
  }
  std::string why;
  long n;
  if (!head_.empty()) {
    std::memcpy(buf_.data() + end_, head_.data(), head_.size());
    n = static_cast<long>(head_.size());
    head_ = {};
  } else {
    n = in_.read(buf_.data() + end_, to_read, &why);
  }
  if (n < 0) {  // a read error, or corrupt or cut-off gzip: at the end of the text so far
    fail(end_offset(), why);
    return false;
  }
  if (n == 0) {
    eof_ = true;
    return false;
  }
  end_ += static_cast<std::size_t>(n);
  r_.bytes_read_ += static_cast<std::uint64_t>(n);
  // The padding simdjson may read past an event: defined bytes (whitespace).
  std::memset(buf_.data() + end_, ' ', kJsonPadding);
  return true;
}

// A UTF-8 byte order mark (some editors and Windows tools write one) is not
// JSON; Perfetto and Chrome skip it, and so does the reader, once, at the start.
void TraceReader::Run::skip_bom() {
  while (end_ - pos_ < 3 && fill()) {
  }
  if (end_ - pos_ >= 3 && std::memcmp(buf_.data() + pos_, "\xEF\xBB\xBF", 3) == 0) {
    pos_ += 3;
    r_.repairs_.bom = true;
  }
}

// The next byte that is not whitespace, left at pos_; -1 at the end of input.
int TraceReader::Run::next_nonws() {
  for (;;) {
    while (pos_ < end_) {
      const auto c = static_cast<unsigned char>(buf_[pos_]);
      if (!is_json_ws(static_cast<char>(c))) return c;
      ++pos_;
    }
    if (!fill()) return -1;
  }
}

// The value being scanned ([mark_, pos_)) is over the limit: an error.
bool TraceReader::Run::too_big(const char* what) {
  if (pos_ - mark_ <= r_.max_event_bytes_) return false;
  const std::size_t max = r_.max_event_bytes_;
  const std::string limit = max % (std::size_t{1} << 20) == 0 ? std::to_string(max >> 20) + " MiB"
                                                              : std::to_string(max) + " bytes";
  fail(base_ + mark_, std::string(what) + " larger than " + limit);
  return true;
}

// Scans the JSON value starting at pos_ (its first byte, not whitespace) to
// its end; [mark_, pos_) is the value afterwards. Containers and strings are
// matched by JsonScanState; a scalar runs to the next delimiter or the end.
// A value over max_event_bytes is an error ("<what> larger than ..."),
// noticed before more than a chunk beyond the limit is buffered.
TraceReader::Run::Scan TraceReader::Run::scan_value(const char* what) {
  mark_ = pos_;
  const char first = buf_[pos_];
  if (first != '{' && first != '[' && first != '"') {
    for (;;) {
      while (pos_ < end_) {
        const char c = buf_[pos_];
        if (is_json_ws(c) || c == ',' || c == '}' || c == ']') {
          return too_big(what) ? Scan::kError : Scan::kDone;
        }
        ++pos_;
      }
      if (too_big(what)) return Scan::kError;
      if (!fill()) return failed_ ? Scan::kError : Scan::kDone;
    }
  }
  scan_.reset();
  for (;;) {
    const char* b = buf_.data();
    const char* p = b + pos_;
    const JsonScanState::Result res = scan_.advance(p, b + end_);
    pos_ = static_cast<std::size_t>(p - b);
    if (too_big(what)) return Scan::kError;
    switch (res) {
      case JsonScanState::Result::kComplete: return Scan::kDone;
      case JsonScanState::Result::kTooDeep:
        fail(offset(), "nesting deeper than " + std::to_string(kMaxDepth) + " levels");
        return Scan::kError;
      case JsonScanState::Result::kMismatched:
        fail(offset(), "mismatched " + describe(static_cast<unsigned char>(buf_[pos_])));
        return Scan::kError;
      case JsonScanState::Result::kNeedMore: break;
    }
    if (!fill()) return failed_ ? Scan::kError : Scan::kEof;
  }
}

bool TraceReader::Run::run() {
  skip_bom();
  const int c = next_nonws();
  if (c < 0) return fail_eof("empty input: not a trace");
  ++pos_;
  if (c == '[') return array_body(false) && expect_end();
  if (c == '{') return object_form() && expect_end();
  return fail(offset() - 1, "not a trace: expected '[' or '{', found " + describe(c));
}

// The events array after its '['. In the array form (in_object false) the
// end of input between events is the unterminated form.
bool TraceReader::Run::array_body(bool in_object) {
  auto end_of_input = [&]() -> bool {
    if (failed_) return false;
    if (in_object) return fail_eof("input ends inside the traceEvents array");
    r_.unterminated_ = true;
    return true;
  };
  int c = next_nonws();
  if (c < 0) return end_of_input();
  if (c == ']') {
    ++pos_;
    return true;
  }
  for (;;) {
    if (c != '{')
      return fail(offset(), "an event is not a JSON object (found " + describe(c) + ")");
    const std::uint64_t start = offset();
    switch (scan_value("an event")) {
      case Scan::kDone: break;
      case Scan::kEof:
        if (in_object) {
          return fail_eof("input ends inside an event that starts at byte " +
                          std::to_string(start));
        }
        // The array form cut inside its last event (a full disk, a kill
        // mid-write): what was written before it is the trace.
        r_.repairs_.cut_event = true;
        r_.repairs_.cut_event_offset = start;
        r_.repairs_.cut_event_bytes = end_offset() - start;
        mark_ = kNoMark;
        return end_of_input();
      case Scan::kError: return false;
    }
    if (!hand_over(start)) return false;
    c = next_nonws();
    if (c < 0) return end_of_input();
    if (c == ']') {
      ++pos_;
      return true;
    }
    if (c != ',') return fail(offset(), "expected ',' or ']' after an event, found " + describe(c));
    ++pos_;
    c = next_nonws();
    if (c < 0) return end_of_input();  // a dangling ',' at the end of the array form
    if (c == ']') {                    // "{...},]": not JSON, but viewers load it
      ++r_.repairs_.trailing_commas;
      ++pos_;
      return true;
    }
  }
}

// Hands the event [mark_, pos_) that starts at `offset` to on_event, its
// invalid UTF-8 replaced first (simdjson refuses the event otherwise).
bool TraceReader::Run::hand_over(std::uint64_t offset) {
  std::string_view json(buf_.data() + mark_, pos_ - mark_);
  mark_ = kNoMark;
  ++r_.events_;
  if (json.size() > r_.largest_event_) r_.largest_event_ = json.size();
  if (!is_ascii(json) && !simdjson::validate_utf8(json.data(), json.size())) {
    std::string& fixed = r_.repaired_;
    fixed.clear();
    r_.repairs_.invalid_utf8 += append_repaired_utf8(json, &fixed);
    ++r_.repairs_.invalid_utf8_events;
    const std::size_t size = fixed.size();
    fixed.append(kJsonPadding, ' ');  // what simdjson may read past the event
    json = std::string_view(fixed.data(), size);
  }
  if (!on_event_(RawEvent{json, offset})) {
    failed_ = true;  // the callback owns *error
    return false;
  }
  return true;
}

bool TraceReader::Run::object_form() {
  const std::uint64_t open_at = offset() - 1;
  bool seen_events = false;
  auto truncated = [&] { return fail_eof("input ends inside the top-level object"); };
  int c = next_nonws();
  if (c == '}') return fail(open_at, "no \"traceEvents\" array in the top-level object");
  for (;;) {
    if (c < 0) return truncated();
    if (c != '"') {
      return fail(offset(), "expected a member name in the top-level object, found " + describe(c));
    }
    switch (scan_value("a top-level member name")) {
      case Scan::kDone: break;
      case Scan::kEof: return truncated();
      case Scan::kError: return false;
    }
    std::string key(buf_.data() + mark_ + 1, pos_ - mark_ - 2);
    mark_ = kNoMark;
    c = next_nonws();
    if (c < 0) return truncated();
    if (c != ':') return fail(offset(), "expected ':' after a member name, found " + describe(c));
    ++pos_;
    c = next_nonws();
    if (c < 0) return truncated();
    if (key == "traceEvents") {
      if (c != '[')
        return fail(offset(), "\"traceEvents\" is not an array (found " + describe(c) + ")");
      ++pos_;
      if (!array_body(true)) return false;
      seen_events = true;
    } else {
      if (std::strchr("{[\"-0123456789tfn", c) == nullptr || c == 0) {
        return fail(offset(), "not JSON: a member value starts with " + describe(c));
      }
      switch (scan_value("a top-level member")) {
        case Scan::kDone: break;
        case Scan::kEof: return truncated();
        case Scan::kError: return false;
      }
      TopLevelField field{std::move(key), std::string(buf_.data() + mark_, pos_ - mark_)};
      mark_ = kNoMark;
      if (on_field_) on_field_(field);
    }
    c = next_nonws();
    if (c < 0) return truncated();
    if (c == '}') {
      ++pos_;
      break;
    }
    if (c != ',')
      return fail(offset(), "expected ',' or '}' in the top-level object, found " + describe(c));
    ++pos_;
    c = next_nonws();
  }
  if (!seen_events) {
    return fail(open_at, "no \"traceEvents\" array in the top-level object");
  }
  return true;
}

bool TraceReader::Run::expect_end() {
  if (r_.unterminated_) return true;
  const int c = next_nonws();
  if (c < 0) return !failed_;
  return fail(offset(), "garbage after the end of the trace (found " + describe(c) + ")");
}

bool TraceReader::read(const std::string& path,
                       const std::function<bool(const RawEvent&)>& on_event,
                       const std::function<void(const TopLevelField&)>& on_field,
                       std::string* error) {
  unterminated_ = false;
  repairs_ = InputRepairs{};
  events_ = 0;
  bytes_read_ = 0;
  largest_event_ = 0;
  if (error != nullptr) error->clear();
  gzip_ = false;
  InputFile in;
  std::string why;
  if (!in.open(path, &why)) {
    if (error != nullptr) *error = why;
    return false;
  }
  gzip_ = in.compression() == InputFile::Compression::kGzip;
  protobuf_ = false;
  // The first bytes tell JSON from protobuf (perfetto_reader.hpp); usually
  // one read decides. In chunk_size_ pieces, as the rest is read.
  std::string head;
  TraceForm form = TraceForm::kUndecided;
  while (form == TraceForm::kUndecided && head.size() < 4096) {
    const std::size_t old = head.size();
    head.resize(old + std::min<std::size_t>(chunk_size_, 4096 - old));
    const long n = in.read(head.data() + old, head.size() - old, &why);
    if (n < 0) {
      if (error != nullptr) *error = in.label() + ": byte " + std::to_string(old) + ": " + why;
      return false;
    }
    head.resize(old + static_cast<std::size_t>(n));
    if (n == 0) break;
    form = detect_trace_form(head);
  }
  bool ok;
  if (form == TraceForm::kProtobuf) {
    ok = read_protobuf(in, head, on_event, error);
  } else {
    Run run(*this, in, in.label(), head, on_event, on_field, error);
    ok = run.run();
  }
  // Give back a huge buffer (one giant event) rather than keep it for the next read.
  if (buffer_.size() > 4 * (chunk_size_ + kJsonPadding)) std::vector<char>().swap(buffer_);
  if (repaired_.capacity() > (std::size_t{1} << 20)) std::string().swap(repaired_);
  return ok;
}

std::vector<std::string> repair_warnings(const InputRepairs& r) {
  std::vector<std::string> out;
  if (r.bom) out.push_back("1 UTF-8 byte order mark at the start of the input (skipped)");
  if (r.trailing_commas > 0) {
    out.push_back(std::to_string(r.trailing_commas) +
                  " trailing ',' before the closing ']' of the events (ignored)");
  }
  if (r.cut_event) {
    out.push_back(std::string(r.cut_packet ? "1 packet" : "1 event") +
                  " cut off by the end of the input (its " + std::to_string(r.cut_event_bytes) +
                  " bytes from byte " + std::to_string(r.cut_event_offset) + " dropped)");
  }
  if (r.invalid_utf8 > 0) {
    out.push_back(std::to_string(r.invalid_utf8) + " invalid UTF-8 sequences in " +
                  std::to_string(r.invalid_utf8_events) + " events (replaced by U+FFFD)");
  }
  const PerfettoSkips& p = r.perfetto;
  auto count = [&](std::uint64_t n, const char* one, const char* many, const char* rest) {
    if (n > 0) out.push_back(std::to_string(n) + " " + (n == 1 ? one : many) + rest);
  };
  count(p.needs_state, "packet that needs", "packets that need",
        " incremental state their sequence lost or never had (skipped)");
  count(p.unknown_clock, "event", "events", " on a sequence clock no snapshot defined (skipped)");
  count(p.unended, "slice", "slices", " begun and never ended (dropped)");
  count(p.unmatched_ends, "slice end", "slice ends", " with no slice open on its track (ignored)");
  count(p.unknown_iids, "interned id", "interned ids", " never defined (its name left empty)");
  return out;
}

// ---- parse_us_to_ns ----

namespace {

bool is_digit(char c) noexcept { return c >= '0' && c <= '9'; }

// JSON number grammar: -?digits(.digits)?([eE][+-]?digits)?
bool json_number_shape(std::string_view t, bool* has_exponent) {
  std::size_t i = 0;
  if (i < t.size() && t[i] == '-') ++i;
  const std::size_t int_start = i;
  while (i < t.size() && is_digit(t[i])) ++i;
  if (i == int_start) return false;
  if (i < t.size() && t[i] == '.') {
    ++i;
    const std::size_t frac_start = i;
    while (i < t.size() && is_digit(t[i])) ++i;
    if (i == frac_start) return false;
  }
  *has_exponent = false;
  if (i < t.size() && (t[i] == 'e' || t[i] == 'E')) {
    *has_exponent = true;
    ++i;
    if (i < t.size() && (t[i] == '+' || t[i] == '-')) ++i;
    const std::size_t exp_start = i;
    while (i < t.size() && is_digit(t[i])) ++i;
    if (i == exp_start) return false;
  }
  return i == t.size();
}

}  // namespace

bool parse_us_to_ns(std::string_view t, std::int64_t* ns) {
  t = trim_json_ws(t);
  if (t.size() >= 2 && t.front() == '"' && t.back() == '"') t = t.substr(1, t.size() - 2);
  // One pass for the plain decimal form: -?digits(.digits)?
  const char* p = t.data();
  const char* const end = p + t.size();
  const bool neg = p < end && *p == '-';
  if (neg) ++p;
  constexpr std::uint64_t kMax =
      static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
  const char* const int_start = p;
  std::uint64_t whole = 0;
  for (; p < end && is_digit(*p); ++p) whole = whole * 10 + static_cast<std::uint64_t>(*p - '0');
  if (p == int_start) return false;
  // Up to 18 digits cannot pass int64 (or wrap); only a longer integer part
  // (leading zeros included) is read again with the overflow check per digit.
  bool overflow = false;
  if (p - int_start > 18) {
    whole = 0;
    for (const char* q = int_start; q < p; ++q) {
      const auto d = static_cast<std::uint64_t>(*q - '0');
      if (whole > (kMax - d) / 10) overflow = true;
      whole = whole * 10 + d;
    }
  }
  std::uint64_t frac = 0;
  bool round_up = false;
  if (p < end && *p == '.') {
    ++p;
    const char* const frac_start = p;
    for (; p < end && is_digit(*p); ++p) {
      const auto digits = p - frac_start;
      if (digits < 3) {
        frac = frac * 10 + static_cast<std::uint64_t>(*p - '0');
      } else if (digits == 3) {
        round_up = *p >= '5';
      }
    }
    if (p == frac_start) return false;
    for (auto digits = p - frac_start; digits < 3; ++digits) frac *= 10;
  }
  if (p != end) {
    // Not a plain decimal: an exponent form goes through double.
    bool has_exponent = false;
    if (!json_number_shape(t, &has_exponent) || !has_exponent) return false;
    const std::string copy(t);
    const double v = std::strtod(copy.c_str(), nullptr) * 1000.0;
    // 2^63 as a double: anything at or beyond does not fit.
    if (!(v < 9223372036854775808.0 && v > -9223372036854775808.0)) return false;
    *ns = static_cast<std::int64_t>(v < 0 ? v - 0.5 : v + 0.5);
    return true;
  }
  if (overflow || whole > (kMax - frac - (round_up ? 1 : 0)) / 1000) return false;
  const std::uint64_t total = whole * 1000 + frac + (round_up ? 1 : 0);
  *ns = neg ? -static_cast<std::int64_t>(total) : static_cast<std::int64_t>(total);
  return true;
}

}  // namespace jitscope::tools
