#include "json_scan.hpp"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace jitscope::tools {
namespace {

// Byte classes outside strings.
enum : unsigned char { kPlain = 0, kQuote = 1, kOpen = 2, kClose = 3, kBackslash = 4 };

struct ClassTable {
  unsigned char c[256] = {};
  constexpr ClassTable() {
    c[static_cast<unsigned char>('"')] = kQuote;
    c[static_cast<unsigned char>('{')] = kOpen;
    c[static_cast<unsigned char>('[')] = kOpen;
    c[static_cast<unsigned char>('}')] = kClose;
    c[static_cast<unsigned char>(']')] = kClose;
    c[static_cast<unsigned char>('\\')] = kBackslash;
  }
};
constexpr ClassTable kClass;

// The first '"' or '\\' in [p, end), or end.
inline const char* skip_string_body(const char* p, const char* end) noexcept {
#if defined(__SSE2__)
  const __m128i quote = _mm_set1_epi8('"');
  const __m128i backslash = _mm_set1_epi8('\\');
  while (p < end) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    const unsigned mask = static_cast<unsigned>(
        _mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash))));
    if (mask != 0) {
      const char* hit = p + __builtin_ctz(mask);
      return hit < end ? hit : end;
    }
    p += 16;
  }
  return end;
#else
  while (p < end && *p != '"' && *p != '\\') ++p;
  return p;
#endif
}

// The first '"', '\\', '{', '}', '[' or ']' in [p, end), or end.
inline const char* skip_plain(const char* p, const char* end) noexcept {
#if defined(__SSE2__)
  const __m128i quote = _mm_set1_epi8('"');
  const __m128i lbrace = _mm_set1_epi8('{');
  const __m128i rbrace = _mm_set1_epi8('}');
  const __m128i lbracket = _mm_set1_epi8('[');
  const __m128i rbracket = _mm_set1_epi8(']');
  const __m128i backslash = _mm_set1_epi8('\\');
  while (p < end) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    const __m128i hits = _mm_or_si128(
        _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash)),
                     _mm_cmpeq_epi8(v, lbrace)),
        _mm_or_si128(_mm_cmpeq_epi8(v, rbrace),
                     _mm_or_si128(_mm_cmpeq_epi8(v, lbracket), _mm_cmpeq_epi8(v, rbracket))));
    const unsigned mask = static_cast<unsigned>(_mm_movemask_epi8(hits));
    if (mask != 0) {
      const char* hit = p + __builtin_ctz(mask);
      return hit < end ? hit : end;
    }
    p += 16;
  }
  return end;
#else
  while (p < end && kClass.c[static_cast<unsigned char>(*p)] == kPlain) ++p;
  return p;
#endif
}

}  // namespace

namespace {

#if defined(__SSE2__)
// Bit i of each mask is byte p[i] of a 64-byte block.
struct BlockMasks {
  std::uint64_t quote, backslash, bracket;
};

inline BlockMasks block_masks(const char* p) noexcept {
  const __m128i quote = _mm_set1_epi8('"');
  const __m128i backslash = _mm_set1_epi8('\\');
  // '{' 0x7B and '[' 0x5B, '}' 0x7D and ']' 0x5D differ only in bit 5.
  const __m128i fold = _mm_set1_epi8(static_cast<char>(0xDF));
  const __m128i open = _mm_set1_epi8('[');
  const __m128i close = _mm_set1_epi8(']');
  BlockMasks m{0, 0, 0};
  for (int k = 0; k < 4; ++k) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * k));
    const __m128i f = _mm_and_si128(v, fold);
    const auto q = static_cast<std::uint64_t>(
        static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(v, quote))));
    const auto b = static_cast<std::uint64_t>(
        static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(v, backslash))));
    const auto s = static_cast<std::uint64_t>(static_cast<unsigned>(
        _mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(f, open), _mm_cmpeq_epi8(f, close)))));
    m.quote |= q << (16 * k);
    m.backslash |= b << (16 * k);
    m.bracket |= s << (16 * k);
  }
  return m;
}

// Characters escaped by a backslash (simdjson's branchless odd-run rule);
// prev_escaped carries "the next block's first byte is escaped".
inline std::uint64_t find_escaped(std::uint64_t backslash, std::uint64_t& prev_escaped) noexcept {
  constexpr std::uint64_t kEven = 0x5555555555555555ull;
  backslash &= ~prev_escaped;
  const std::uint64_t follows_escape = backslash << 1 | prev_escaped;
  const std::uint64_t odd_starts = backslash & ~kEven & ~follows_escape;
  std::uint64_t even_starts;
  prev_escaped = __builtin_add_overflow(odd_starts, backslash, &even_starts) ? 1 : 0;
  const std::uint64_t invert = even_starts << 1;
  return (kEven ^ invert) & follows_escape;
}

// Bit i set when an odd number of bits at or below i are set.
inline std::uint64_t prefix_xor(std::uint64_t x) noexcept {
  x ^= x << 1;
  x ^= x << 2;
  x ^= x << 4;
  x ^= x << 8;
  x ^= x << 16;
  x ^= x << 32;
  return x;
}
#endif

}  // namespace

JsonScanState::Result JsonScanState::advance(const char*& p, const char* end) noexcept {
  if (!started_ && p < end) {
    started_ = true;
    if (*p == '"') {
      in_string_ = true;  // a string value: complete at its closing quote, depth 0
      ++p;
    }
  }
#if defined(__SSE2__)
  // Whole 64-byte blocks, as bit masks; a string value (depth 0) stays on
  // the byte loop below.
  if (depth_ > 0 || !in_string_) {
    std::uint64_t prev_escaped = escape_ ? 1 : 0;
    std::uint64_t prev_in_string = in_string_ ? ~std::uint64_t{0} : 0;
    while (end - p >= 64) {
      const BlockMasks m = block_masks(p);
      const std::uint64_t escaped =
          m.backslash == 0 && prev_escaped == 0 ? 0 : find_escaped(m.backslash, prev_escaped);
      const std::uint64_t in_string = prefix_xor(m.quote & ~escaped) ^ prev_in_string;
      prev_in_string = static_cast<std::uint64_t>(static_cast<std::int64_t>(in_string) >> 63);
      for (std::uint64_t brackets = m.bracket & ~in_string & ~escaped; brackets != 0;
           brackets &= brackets - 1) {
        const int i = __builtin_ctzll(brackets);
        const char c = p[i];
        if (c == '{' || c == '[') {
          if (depth_ == kMaxDepth) {
            p += i;
            return Result::kTooDeep;
          }
          stack_[depth_++] = c;
        } else {
          if (depth_ == 0 || stack_[depth_ - 1] != (c == '}' ? '{' : '[')) {
            p += i;
            return Result::kMismatched;
          }
          if (--depth_ == 0) {
            p += i + 1;
            in_string_ = false;
            escape_ = false;
            return Result::kComplete;
          }
        }
      }
      p += 64;
    }
    in_string_ = prev_in_string != 0;
    escape_ = prev_escaped != 0;
  }
#endif
  while (p < end) {
    if (escape_) {
      escape_ = false;
      ++p;
      continue;
    }
    if (in_string_) {
      p = skip_string_body(p, end);
      if (p == end) break;
      ++p;
      if (p[-1] == '\\') {
        escape_ = true;
        continue;
      }
      in_string_ = false;
      if (depth_ == 0) return Result::kComplete;
      continue;
    }
    p = skip_plain(p, end);
    if (p == end) break;
    const char c = *p;
    switch (kClass.c[static_cast<unsigned char>(c)]) {
      case kQuote:
        in_string_ = true;
        ++p;
        break;
      case kOpen:
        if (depth_ == kMaxDepth) return Result::kTooDeep;
        stack_[depth_++] = c;
        ++p;
        break;
      case kClose: {
        const char open = c == '}' ? '{' : '[';
        if (depth_ == 0 || stack_[depth_ - 1] != open) return Result::kMismatched;
        --depth_;
        ++p;
        if (depth_ == 0) return Result::kComplete;
        break;
      }
      case kBackslash:  // not JSON outside a string; escapes the next byte, as in the block path
        escape_ = true;
        ++p;
        break;
      default: ++p; break;
    }
  }
  return Result::kNeedMore;
}

std::size_t JsonScanState::match(const char* begin, const char* end) noexcept {
  JsonScanState s;
  const char* p = begin;
  if (s.advance(p, end) != Result::kComplete) return 0;
  return static_cast<std::size_t>(p - begin);
}

}  // namespace jitscope::tools
