// The byte copy of the writers that render into room sized up front (a
// JSON event on the stack, a protobuf packet): `s` at `p`, and its end.
#pragma once

#include <cstring>
#include <string_view>

namespace jitscope::detail {

inline char* put_bytes(char* p, std::string_view s) noexcept {
  if (!s.empty()) std::memcpy(p, s.data(), s.size());  // data() may be null when empty
  return p + s.size();
}

}  // namespace jitscope::detail
