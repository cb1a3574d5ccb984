// The slots each of the module's types sets the same way.
#pragma once

#include <Python.h>

namespace jitscope::python {

struct TypeSlots {
  const char* name;
  Py_ssize_t size;
  const char* doc;
  destructor dealloc;
  PyMethodDef* methods = nullptr;
  PyGetSetDef* getset = nullptr;
  newfunc make = nullptr;
  unsigned long flags = Py_TPFLAGS_DEFAULT;
};

inline void set_slots(PyTypeObject& t, const TypeSlots& s) noexcept {
  t.tp_name = s.name;
  t.tp_basicsize = s.size;
  t.tp_doc = s.doc;
  t.tp_dealloc = s.dealloc;
  t.tp_methods = s.methods;
  t.tp_getset = s.getset;
  t.tp_new = s.make;
  t.tp_flags = s.flags;
}

}  // namespace jitscope::python
