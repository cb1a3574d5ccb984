// Python keyword arguments -> jitscope args on an open span.
#pragma once

#include <Python.h>

#include <jitscope/jitscope.hpp>

#include <string>

namespace jitscope::python {

// `key`=`value` as an Arg: bool, int (int64, else uint64, else its
// text), float and str as themselves, anything else as its str(). A string
// value points into `value` or `scratch`. False (said once) when the key is
// past the interning bound. Never raises.
bool to_arg(PyObject* key, PyObject* value, jitscope::Arg& out, std::string& scratch) noexcept;

// Adds `key`=`value` to `span`: bool, int (int64, else uint64, else its
// text), float and str as themselves, anything else as its str(). A key
// past the interning bound drops the arg (said once). Never raises.
void add_arg(jitscope::Span& span, PyObject* key, PyObject* value) noexcept;

// Each item of `kwargs` (a dict, or nullptr), as add_arg.
void add_args(jitscope::Span& span, PyObject* kwargs) noexcept;

// Each of `nkw` names of `kwnames` with its value in `values` (vectorcall).
void add_args(jitscope::Span& span, PyObject* const* values, PyObject* kwnames) noexcept;

}  // namespace jitscope::python
