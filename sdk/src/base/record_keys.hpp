// The fields jitscope itself writes into a compile record (the metrics
// file's lines, docs/compile-units.md "The metrics record"). Shared by the
// SDK, which refuses user fields of these names (compile/event_data.cpp),
// and jitscope-report, which shows every other field as the user's context
// (tools/report/metrics.cpp): one list, so the two cannot drift apart.
#pragma once

#include <array>
#include <string_view>

namespace jitscope::detail {

inline constexpr std::array<std::string_view, 18> kRecordKeys = {"compile_id",
                                                                 "frame_id",
                                                                 "attempt",
                                                                 "name",
                                                                 "is_runtime",
                                                                 "is_forward",
                                                                 "start_time_us",
                                                                 "end_time_us",
                                                                 "duration_us",
                                                                 "recompile_reason",
                                                                 "recompile_user_contexts",
                                                                 "fail_type",
                                                                 "fail_reason",
                                                                 "caches",
                                                                 "waits",
                                                                 "compile_events",
                                                                 "compile_events_dropped",
                                                                 "artifacts"};

inline constexpr bool is_record_key(std::string_view key) noexcept {
  for (std::string_view k : kRecordKeys) {
    if (key == k) return true;
  }
  return false;
}

}  // namespace jitscope::detail
