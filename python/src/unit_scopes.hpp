// unit.loading() and unit.attach(): the C++ LoadScope and ThreadAttachment
// as context managers over a jitscope.compile_unit.
#pragma once

#include <Python.h>

namespace jitscope::python {

extern PyTypeObject g_unit_scope_type;

// Ready the type (module init). False with an exception set.
bool init_unit_scope_type() noexcept;

enum class UnitScopeKind { kLoading, kAttach };

// A new scope over `unit`, a jitscope.compile_unit (kept alive by it); the
// unit is looked at when the scope is entered. nullptr with an exception set.
PyObject* make_unit_scope(PyObject* unit, UnitScopeKind kind) noexcept;

}  // namespace jitscope::python
