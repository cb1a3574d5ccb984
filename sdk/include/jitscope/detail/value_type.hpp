// The type tag of a span argument's value (jitscope::Arg), shared by the
// public Arg and the ring records that carry it. Internal: include
// <jitscope/jitscope.hpp> instead.
#pragma once

#include <cstdint>

namespace jitscope::detail {

enum class ValueType : std::uint8_t {
  kNone = 0,
  kInt = 1,
  kUint = 2,
  kDouble = 3,
  kBool = 4,
  kString = 5,  // bytes follow (after the dynamic name bytes, if any)
  // Bytes follow: `"k":v,...` members rendered by the library's own JSON
  // writer (event data), spliced into the target's args as they are.
  kJsonMembers = 6,
};

}  // namespace jitscope::detail
