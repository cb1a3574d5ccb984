// jitscope.Autotune (with its trial and step types): <jitscope/autotune.hpp>
// from Python.
#pragma once

#include <Python.h>

namespace jitscope::python {

extern PyTypeObject g_autotune_type;

// Ready the three types (module init). False with an exception set.
bool init_autotune_types() noexcept;

}  // namespace jitscope::python
