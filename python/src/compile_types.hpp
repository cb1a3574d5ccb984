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

// A unit named by a caller: a jitscope.compile_unit that opened (its
// compile id), or its compile id as text ("3/0", or "[3/0]" as shown).
// False with ValueError or TypeError set, the message led by `what`.
bool compile_id_of(PyObject* unit, const char* what, jitscope::CompileId* out);

// Ready both types (module init). False with an exception set.
bool init_compile_types() noexcept;

}  // namespace jitscope::python
