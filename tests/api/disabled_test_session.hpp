// The enabled half of disabled_test (disabled_test_session.cpp, built
// without JITSCOPE_DISABLE): a real session through the library. Only
// standard types cross between the two translation units: a disabled TU's
// jitscope types are not the library's (jitscope::disabled).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace jitscope::testing::enabled {

std::string temp_file(const std::string& stem);
// Starts a session writing to a new temp file; its path, "" on failure.
std::string start_session(const std::string& stem);
bool session_active();  // the library's answer
// Stops it; the X, I and C events written.
std::uint64_t stop_session();
// Events with this "ph" in the trace at `path`.
std::size_t count_events(const std::string& path, const std::string& ph);
// What the library's compile layer holds: unit records, phase keys run.
std::size_t compile_records();
std::size_t phase_keys();

}  // namespace jitscope::testing::enabled
