// jitscope.compile_unit and jitscope.phase: context managers and handles
// over the C API's checked unit handles and the C++ PhaseHandle, both safe
// to end twice, from the wrong thread, or after stop().
#pragma once

#include <Python.h>

#include <jitscope/compile.hpp>

namespace jitscope::python {

extern PyTypeObject g_unit_type;
extern PyTypeObject g_phase_type;

// The C++ unit a jitscope.compile_unit opened last, open or closed; nullptr
// if it never opened.
const jitscope::CompileUnit* last_compile_unit(PyObject* unit) noexcept;

// Ready both types (module init). False with an exception set.
bool init_compile_types() noexcept;

}  // namespace jitscope::python
