// Protobuf wire encoding: varints, tags, fixed64 and length-delimited fields,
// written by hand (no protobuf library), for the SDK's Perfetto writer and
// anything else that needs to write protobuf (tools may include base/ too);
// and the varint reader that the tools' reader and the file sink's framing
// (a whole packet's end) share.
//
// Two ways to write a length-delimited field whose size is not known first:
// - Precomputed size: add up varint_size() of the parts and write the length
//   before the body (the writer's hot packets do this: every part is known).
// - Reserved length: begin_nested() leaves one byte for the length and
//   end_nested() fills it in, moving the body up in the rare case that it is
//   128 bytes or more. Nested messages are mostly short, so the move is rare
//   and the output stays minimal (no padded varints).
#pragma once

#include "base/put_bytes.hpp"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace jitscope::detail::wire {

// Bytes a varint of `v` takes: 1..10.
constexpr std::size_t varint_size(std::uint64_t v) noexcept {
  std::size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++n;
  }
  return n;
}

// Writes `v` at `p`; returns the end.
inline char* put_varint(char* p, std::uint64_t v) noexcept {
  while (v >= 0x80) {
    *p++ = static_cast<char>(v | 0x80);
    v >>= 7;
  }
  *p++ = static_cast<char>(v);
  return p;
}

inline char* put_fixed64(char* p, std::uint64_t v) noexcept {
  for (int i = 0; i < 8; ++i) *p++ = static_cast<char>(v >> (8 * i));  // little-endian
  return p;
}

using detail::put_bytes;

// Bytes of a whole length-delimited field: tag, length, body.
constexpr std::size_t field_size(std::uint32_t tag, std::size_t body) noexcept {
  return varint_size(tag) + varint_size(body) + body;
}

inline void append_varint(std::string& out, std::uint64_t v) {
  char tmp[10];
  out.append(tmp, static_cast<std::size_t>(put_varint(tmp, v) - tmp));
}

// tag (already shifted: perfetto_fields.hpp's pf::tag) and a varint value.
inline void append_varint_field(std::string& out, std::uint32_t tag, std::uint64_t v) {
  char tmp[20];
  char* p = put_varint(tmp, tag);
  p = put_varint(p, v);
  out.append(tmp, static_cast<std::size_t>(p - tmp));
}

inline void append_fixed64_field(std::string& out, std::uint32_t tag, std::uint64_t v) {
  char tmp[15];
  char* p = put_varint(tmp, tag);
  p = put_fixed64(p, v);
  out.append(tmp, static_cast<std::size_t>(p - tmp));
}

inline void append_bytes_field(std::string& out, std::uint32_t tag, std::string_view body) {
  char tmp[15];
  char* p = put_varint(tmp, tag);
  p = put_varint(p, body.size());
  out.append(tmp, static_cast<std::size_t>(p - tmp));
  out.append(body);
}

// Opens a nested message: its tag and one byte for its length. Returns
// where the length goes, for end_nested.
inline std::size_t begin_nested(std::string& out, std::uint32_t tag) {
  append_varint(out, tag);
  out.push_back('\0');
  return out.size() - 1;
}

// Closes the message begin_nested opened at `at`: writes its length there,
// moving the body up when the length needs more than the one byte.
inline void end_nested(std::string& out, std::size_t at) {
  const std::size_t len = out.size() - at - 1;
  const std::size_t n = varint_size(len);
  if (n > 1) out.insert(at + 1, n - 1, '\0');
  put_varint(out.data() + at, len);
}

// Decodes a varint at [*p, end). false if it runs past `end` (*p unchanged,
// *truncated true) or is longer than 10 bytes / over 64 bits (*truncated false).
inline bool read_varint(const char** p, const char* end, std::uint64_t* out,
                        bool* truncated) noexcept {
  const auto* q = reinterpret_cast<const unsigned char*>(*p);
  const auto* e = reinterpret_cast<const unsigned char*>(end);
  if (q != e && *q < 0x80) {  // one byte: most tags, lengths and small values
    *out = *q;
    *p = reinterpret_cast<const char*>(q + 1);
    return true;
  }
  std::uint64_t v = 0;
  for (int shift = 0; shift < 70; shift += 7) {
    if (q == e) {
      *truncated = true;
      return false;
    }
    const unsigned b = *q++;
    if (shift == 63 && b > 1) break;  // the 10th byte holds one bit
    v |= static_cast<std::uint64_t>(b & 0x7f) << shift;
    if ((b & 0x80) == 0) {
      *out = v;
      *p = reinterpret_cast<const char*>(q);
      return true;
    }
  }
  *truncated = false;
  return false;
}

// The end of the length-delimited field (a Trace's packet) whose tag is at
// `at` in `bytes`, if the whole field is there; 0 if not (cut short, or
// not a length-delimited field).
inline std::size_t field_end(std::string_view bytes, std::size_t at) noexcept {
  const char* const end = bytes.data() + bytes.size();
  const char* p = bytes.data() + at;
  std::uint64_t tag = 0;
  std::uint64_t length = 0;
  bool truncated = false;
  if (at >= bytes.size() || !read_varint(&p, end, &tag, &truncated) || (tag & 7) != 2 ||
      !read_varint(&p, end, &length, &truncated) || length > static_cast<std::uint64_t>(end - p)) {
    return 0;
  }
  return static_cast<std::size_t>(p - bytes.data()) + static_cast<std::size_t>(length);
}

// The end of the last whole length-delimited field in `bytes` that ends at
// or before `limit`, for bytes that begin at a field's tag: 0 if none does.
inline std::size_t whole_fields_end(std::string_view bytes, std::size_t limit) noexcept {
  const std::string_view head = bytes.substr(0, limit);
  std::size_t whole = 0;
  while (const std::size_t end = field_end(head, whole)) whole = end;
  return whole;
}

}  // namespace jitscope::detail::wire
