// The C API's per-thread last error (jitscope_last_error), set by every C
// entry point that returns -1: shared by c_api.cpp and c_compile_api.cpp.
#pragma once

#include <jitscope/jitscope.hpp>

// Copies the failure's message ("" for ok), cut to the buffer's size.
void jitscope_set_c_last_error(const jitscope::Status& st) noexcept;
