// Protobuf wire format, read side: the fields of one message in a byte
// range, without a schema and without allocating. The Perfetto reader
// (perfetto_decoder.hpp) walks TracePackets with it.
//
// Quickstart
//   jitscope::tools::proto::FieldReader r(bytes.data(), bytes.size());
//   jitscope::tools::proto::Field f;
//   while (r.next(&f)) {
//     if (f.number == 8 && f.wire == jitscope::detail::pf::kVarint) ts = f.value;
//   }
//   if (r.failed()) report(r.error_at() - bytes.data(), r.error());
//
// Errors (never a read past the range): a varint longer than 10 bytes or
// over 64 bits, a length or fixed-size value past the end of the range,
// field number 0, and wire types 3, 4 (groups: Perfetto's schema has none),
// 6 and 7. A truncated varint at the end of the range is "past the end".
#pragma once

#include <base/perfetto_fields.hpp>
#include <base/proto_wire.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace jitscope::tools::proto {

using detail::wire::read_varint;

struct Field {
  std::uint32_t number = 0;
  std::uint32_t wire = 0;       // detail::pf::WireType
  std::uint64_t value = 0;      // varint, fixed64 and fixed32 (zero-extended)
  std::string_view bytes;       // length-delimited
  const char* start = nullptr;  // the field's tag
};

class FieldReader {
 public:
  FieldReader(const char* data, std::size_t size) noexcept : p_(data), end_(data + size) {}
  explicit FieldReader(std::string_view s) noexcept : FieldReader(s.data(), s.size()) {}

  // The next field; false at the end of the range or on an error (failed()).
  bool next(Field* f) noexcept {
    if (p_ == end_ || error_ != nullptr) return false;
    f->start = p_;
    std::uint64_t tag = 0;
    bool truncated = false;
    if (!read_varint(&p_, end_, &tag, &truncated)) {
      return fail(f->start, truncated ? "a field tag past the end of its message"
                                      : "a malformed varint (field tag)");
    }
    f->number = static_cast<std::uint32_t>(tag >> 3);
    f->wire = static_cast<std::uint32_t>(tag & 7);
    if ((tag >> 3) == 0 || (tag >> 3) > 0x1fffffff)
      return fail(f->start, "field number 0 or over 2^29");
    const char* value_at = p_;
    switch (f->wire) {
      case detail::pf::kVarint:
        if (!read_varint(&p_, end_, &f->value, &truncated)) {
          return fail(value_at, truncated ? "a varint past the end of its message"
                                          : "a malformed varint (longer than 10 bytes)");
        }
        return true;
      case detail::pf::kFixed64:
        if (end_ - p_ < 8) return fail(value_at, "a fixed64 past the end of its message");
        std::memcpy(&f->value, p_, 8);  // little-endian hosts only (x86-64, AArch64)
        p_ += 8;
        return true;
      case detail::pf::kFixed32: {
        if (end_ - p_ < 4) return fail(value_at, "a fixed32 past the end of its message");
        std::uint32_t v = 0;
        std::memcpy(&v, p_, 4);
        f->value = v;
        p_ += 4;
        return true;
      }
      case detail::pf::kLengthDelimited: {
        std::uint64_t n = 0;
        if (!read_varint(&p_, end_, &n, &truncated)) {
          return fail(value_at, truncated ? "a length past the end of its message"
                                          : "a malformed varint (length)");
        }
        if (n > static_cast<std::uint64_t>(end_ - p_)) {
          return fail(value_at, "a length past the end of its message");
        }
        f->bytes = std::string_view(p_, static_cast<std::size_t>(n));
        p_ += n;
        return true;
      }
      default: return fail(f->start, "wire type 3, 4, 6 or 7 (not in Perfetto's schema)");
    }
  }

  bool failed() const noexcept { return error_ != nullptr; }
  const char* error() const noexcept { return error_; }
  const char* error_at() const noexcept { return error_at_; }

 private:
  bool fail(const char* at, const char* what) noexcept {
    error_ = what;
    error_at_ = at;
    return false;
  }
  const char* p_;
  const char* end_;
  const char* error_ = nullptr;
  const char* error_at_ = nullptr;
};

// Repeated scalar fields may come one per field or packed into one
// length-delimited field; calls fn(value) for each. `fixed64`: the packed
// form holds 8-byte values, else varints. false on a malformed packed body.
template <class Fn>
bool for_each_repeated(const Field& f, bool fixed64, Fn&& fn) {
  if (f.wire != detail::pf::kLengthDelimited) {
    fn(f.value);
    return true;
  }
  const char* p = f.bytes.data();
  const char* const end = p + f.bytes.size();
  while (p < end) {
    std::uint64_t v = 0;
    if (fixed64) {
      if (end - p < 8) return false;
      std::memcpy(&v, p, 8);
      p += 8;
    } else {
      bool truncated = false;
      if (!read_varint(&p, end, &v, &truncated)) return false;
    }
    fn(v);
  }
  return true;
}

}  // namespace jitscope::tools::proto
