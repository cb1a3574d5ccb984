// What @jitscope.span() returns for a plain function: a callable in C
// (vectorcall, a method descriptor as functions are) that runs the function
// inside a span, so that a decorated call costs a span, not a Python frame
// more. functools.update_wrapper gives it the function's name and doc.
#pragma once

#include <Python.h>

namespace jitscope::python {

extern PyTypeObject g_decorated_type;

bool init_decorated_type() noexcept;

// decorated(func, name, args): `name` a str, `args` a dict or None.
PyObject* make_decorated(PyObject* module, PyObject* const* args, Py_ssize_t nargs);

}  // namespace jitscope::python
