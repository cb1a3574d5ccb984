// jitscope.start's keyword arguments -> jitscope::Config.
#pragma once

#include <Python.h>

#include <jitscope/jitscope.hpp>

namespace jitscope::python {

// Applies `kwargs` (a dict, or nullptr) to `config`. False with TypeError
// (an unknown name, with the closest known one; a value of the wrong type)
// or ValueError (a value out of its set, naming the field) set.
bool apply_config(PyObject* kwargs, jitscope::Config& config) noexcept;

// The names apply_config knows, as a tuple of str (for the docs and tests).
PyObject* config_names() noexcept;

}  // namespace jitscope::python
