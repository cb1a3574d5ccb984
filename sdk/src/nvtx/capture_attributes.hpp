// What an NVTX call says, read into plain values: its message (a literal,
// a registered string, or text valid during the call only, wide text turned
// into UTF-8) and, from an event attributes struct, its payload and category.
// Inline: the push/pop and mark slots (capture_ranges.cpp) read them on
// every call.
#pragma once

#include "nvtx/capture_state.hpp"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <cwchar>
#include <string>
#include <string_view>

namespace jitscope::detail::nvtx_capture {

struct Message {
  const char* name = nullptr;  // interned or a literal
  std::string_view dynamic;    // valid during the call only
};

inline void wide_to_utf8(const wchar_t* w, std::string& out) {
  out.clear();
  if (w == nullptr) return;
  for (; *w != 0 && out.size() < kMaxNameBytes; ++w) {
    auto c = static_cast<std::uint32_t>(*w);
    if (c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff)) c = 0xfffd;
    if (c < 0x80) {
      out.push_back(static_cast<char>(c));
    } else if (c < 0x800) {
      out.push_back(static_cast<char>(0xc0 | (c >> 6)));
      out.push_back(static_cast<char>(0x80 | (c & 0x3f)));
    } else if (c < 0x10000) {
      out.push_back(static_cast<char>(0xe0 | (c >> 12)));
      out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3f)));
      out.push_back(static_cast<char>(0x80 | (c & 0x3f)));
    } else {
      out.push_back(static_cast<char>(0xf0 | (c >> 18)));
      out.push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3f)));
      out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3f)));
      out.push_back(static_cast<char>(0x80 | (c & 0x3f)));
    }
  }
}

inline std::string utf8(const wchar_t* w) {
  std::string out;
  wide_to_utf8(w, out);
  return out;
}

inline std::string_view bounded(const char* s) noexcept {
  if (s == nullptr) return {};
  return std::string_view(s, ::strnlen(s, kMaxNameBytes));
}

inline Message ascii_message(const char* s) noexcept {
  Message m;
  if (s == nullptr) {
    m.name = "(unnamed)";
  } else {
    m.dynamic = bounded(s);
  }
  return m;
}

inline Message wide_message(const wchar_t* w) {
  Message m;
  CaptureThread* t = CaptureThreadState::get();
  if (w == nullptr || t == nullptr) {
    m.name = "(unnamed)";
    return m;
  }
  wide_to_utf8(w, t->scratch);
  m.dynamic = t->scratch;
  return m;
}

struct Attributes {
  Message message;
  ValueType payload_type = ValueType::kNone;
  std::uint64_t payload = 0;
  std::uint32_t category = 0;
};

// Reads only what the struct's own `size` says it holds (older NVTX
// versions pass shorter ones).
inline Attributes read_attributes(const nvtxEventAttributes_t* a) {
  Attributes out;
  out.message.name = "(unnamed)";
  if (a == nullptr) return out;
  const std::size_t size = a->size;
  const auto holds = [size](std::size_t offset, std::size_t bytes) {
    return size >= offset + bytes;
  };
  if (holds(offsetof(nvtxEventAttributes_t, category), sizeof a->category)) {
    out.category = a->category;
  }
  if (holds(offsetof(nvtxEventAttributes_t, payload), sizeof a->payload)) {
    const auto& p = a->payload;
    switch (a->payloadType) {
      case NVTX_PAYLOAD_TYPE_UNSIGNED_INT64:
        out.payload_type = ValueType::kUint;
        out.payload = p.ullValue;
        break;
      case NVTX_PAYLOAD_TYPE_INT64:
        out.payload_type = ValueType::kInt;
        std::memcpy(&out.payload, &p.llValue, sizeof out.payload);
        break;
      case NVTX_PAYLOAD_TYPE_DOUBLE:
        out.payload_type = ValueType::kDouble;
        std::memcpy(&out.payload, &p.dValue, sizeof out.payload);
        break;
      case NVTX_PAYLOAD_TYPE_UNSIGNED_INT32:
        out.payload_type = ValueType::kUint;
        out.payload = p.uiValue;
        break;
      case NVTX_PAYLOAD_TYPE_INT32: {
        out.payload_type = ValueType::kInt;
        const std::int64_t v = p.iValue;
        std::memcpy(&out.payload, &v, sizeof out.payload);
        break;
      }
      case NVTX_PAYLOAD_TYPE_FLOAT: {
        out.payload_type = ValueType::kDouble;
        const double v = p.fValue;
        std::memcpy(&out.payload, &v, sizeof out.payload);
        break;
      }
      default: break;  // none, or an extended payload this tool does not read
    }
  }
  if (holds(offsetof(nvtxEventAttributes_t, message), sizeof a->message)) {
    switch (a->messageType) {
      case NVTX_MESSAGE_TYPE_ASCII: out.message = ascii_message(a->message.ascii); break;
      case NVTX_MESSAGE_TYPE_UNICODE: out.message = wide_message(a->message.unicode); break;
      case NVTX_MESSAGE_TYPE_REGISTERED:
        // Handles come from DomainRegisterString below: interned strings.
        if (a->message.registered != nullptr) {
          out.message.name = reinterpret_cast<const char*>(a->message.registered);
        }
        break;
      default: break;
    }
  }
  return out;
}

inline Attributes message_only(Message m) {
  Attributes a;
  a.message = m;
  return a;
}

}  // namespace jitscope::detail::nvtx_capture
