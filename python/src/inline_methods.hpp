// __enter__ and __exit__ without a method object per `with`.
//
// `with x:` looks up type(x).__enter__ and __exit__ and binds each to x. For
// a C method each binding is a new method object (allocated, GC-tracked,
// untracked, freed): four per `with unit: with phase:`, 7 % of its
// instructions (callgrind), and four allocations that count towards the
// garbage collector's next pass. A type that embeds one InlineBound per such
// method gets that one back from the lookup instead: it lives inside the
// object, holds the object while it is referenced, and is reused by the
// next lookup. Under a free-threaded build (no GIL to order its refcount),
// the type keeps ordinary methods.
#pragma once

#include <Python.h>

#include <cstddef>

namespace jitscope::python {

#if !defined(Py_GIL_DISABLED)
#define JITSCOPE_INLINE_METHODS 1
#endif

using NoArgsMethod = PyObject* (*)(PyObject* self, PyObject* unused);
using FastMethod = PyObject* (*)(PyObject* self, PyObject* const* args, Py_ssize_t nargs);

struct InlineMethodDef;

// One per method in each object (zeroed by tp_alloc: not referenced).
struct InlineBound {
  PyObject_HEAD vectorcallfunc call;
  PyObject* owner;  // a strong reference while this one is referenced, else nullptr
  const InlineMethodDef* def;
};

// A method of a type, bound through an InlineBound at `offset` in its
// objects. Exactly one of noargs and fastcall is set.
struct InlineMethodDef {
  const char* name;
  const char* doc;
  Py_ssize_t offset;
  NoArgsMethod noargs = nullptr;
  FastMethod fastcall = nullptr;
};

// Puts each of `defs` (ended by a null name) in the ready `type`'s dict:
// inline ones, or ordinary method descriptors without JITSCOPE_INLINE_METHODS.
bool add_inline_methods(PyTypeObject& type, const InlineMethodDef* defs) noexcept;

}  // namespace jitscope::python
