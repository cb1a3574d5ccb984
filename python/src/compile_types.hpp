// jitscope.compile_unit and jitscope.phase: context managers and handles
// over the C API's checked unit handles and the C++ PhaseHandle, both safe
// to end twice, from the wrong thread, or after stop().
#pragma once

#include <Python.h>

namespace jitscope::python {

extern PyTypeObject g_unit_type;
extern PyTypeObject g_phase_type;

// Ready both types (module init). False with an exception set.
bool init_compile_types() noexcept;

}  // namespace jitscope::python
