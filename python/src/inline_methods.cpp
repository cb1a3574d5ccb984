#include "inline_methods.hpp"

#include "type_slots.hpp"

#include <cstddef>
#include <new>

namespace jitscope::python {
namespace {

#if JITSCOPE_INLINE_METHODS

// Calls `def` on `self` with the arguments after it.
PyObject* call_method(const InlineMethodDef& def, PyObject* self, PyObject* const* args,
                      Py_ssize_t nargs, PyObject* kwnames) {
  if (kwnames != nullptr && PyTuple_GET_SIZE(kwnames) > 0) {
    PyErr_Format(PyExc_TypeError, "%s() takes no keyword arguments", def.name);
    return nullptr;
  }
  if (def.noargs == nullptr) return def.fastcall(self, args, nargs);
  if (nargs != 0) {
    PyErr_Format(PyExc_TypeError, "%s() takes no arguments (%zd given)", def.name, nargs);
    return nullptr;
  }
  return def.noargs(self, nullptr);
}

// The descriptor in the type's dict.
struct MethodObject {
  PyObject_HEAD vectorcallfunc call;
  const InlineMethodDef* def;
  PyTypeObject* owner_type;
};

PyTypeObject g_method_type = {PyVarObject_HEAD_INIT(nullptr, 0)};
PyTypeObject g_bound_type = {PyVarObject_HEAD_INIT(nullptr, 0)};

MethodObject* as_method(PyObject* o) { return reinterpret_cast<MethodObject*>(o); }
InlineBound* as_bound(PyObject* o) { return reinterpret_cast<InlineBound*>(o); }

// CPython's own wording, as its method descriptors say it.
bool is_owner(const MethodObject& m, PyObject* obj) {
  if (obj == nullptr) {
    PyErr_Format(PyExc_TypeError, "descriptor '%s' of '%s' object needs an argument", m.def->name,
                 m.owner_type->tp_name);
    return false;
  }
  if (PyObject_TypeCheck(obj, m.owner_type)) return true;
  PyErr_Format(PyExc_TypeError,
               "descriptor '%s' for '%s' objects doesn't apply to a '%.100s' object", m.def->name,
               m.owner_type->tp_name, Py_TYPE(obj)->tp_name);
  return false;
}

PyObject* bound_call(PyObject* callable, PyObject* const* args, std::size_t nargsf,
                     PyObject* kwnames) {
  InlineBound* self = as_bound(callable);
  return call_method(*self->def, self->owner, args, PyVectorcall_NARGS(nargsf), kwnames);
}

// Its last reference gone: it lets go of its object, and stays in it for
// the next lookup. The object may go with that reference, so it is last.
void bound_dealloc(PyObject* o) {
  PyObject* owner = as_bound(o)->owner;
  as_bound(o)->owner = nullptr;
  Py_DECREF(owner);
}

PyObject* bound_repr(PyObject* o) {
  InlineBound* self = as_bound(o);
  return PyUnicode_FromFormat("<built-in method %s of %s object at %p>", self->def->name,
                              Py_TYPE(self->owner)->tp_name, self->owner);
}

PyObject* bound_get_self(PyObject* o, void*) { return Py_NewRef(as_bound(o)->owner); }
PyObject* bound_get_name(PyObject* o, void*) {
  return PyUnicode_FromString(as_bound(o)->def->name);
}
PyObject* bound_get_doc(PyObject* o, void*) { return PyUnicode_FromString(as_bound(o)->def->doc); }

PyGetSetDef g_bound_getset[] = {{"__self__", bound_get_self, nullptr, nullptr, nullptr},
                                {"__name__", bound_get_name, nullptr, nullptr, nullptr},
                                {"__doc__", bound_get_doc, nullptr, nullptr, nullptr},
                                {nullptr, nullptr, nullptr, nullptr, nullptr}};

// obj.method: the InlineBound in obj, taken anew when nobody holds it.
PyObject* method_get(PyObject* desc, PyObject* obj, PyObject*) {
  MethodObject* m = as_method(desc);
  if (obj == nullptr || obj == Py_None) return Py_NewRef(desc);
  if (!is_owner(*m, obj)) return nullptr;
  auto* bound = reinterpret_cast<InlineBound*>(reinterpret_cast<char*>(obj) + m->def->offset);
  PyObject* b = reinterpret_cast<PyObject*>(bound);
  if (bound->owner != nullptr) return Py_NewRef(b);
  PyObject_Init(b, &g_bound_type);  // a reference count of 1, ours to return
  bound->call = bound_call;
  bound->owner = Py_NewRef(obj);
  bound->def = m->def;
  return b;
}

// type.method(obj, ...), as contextlib.ExitStack calls __enter__ and __exit__.
PyObject* method_call(PyObject* callable, PyObject* const* args, std::size_t nargsf,
                      PyObject* kwnames) {
  MethodObject* m = as_method(callable);
  const Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
  if (!is_owner(*m, nargs > 0 ? args[0] : nullptr)) return nullptr;
  return call_method(*m->def, args[0], args + 1, nargs - 1, kwnames);
}

PyObject* method_repr(PyObject* o) {
  MethodObject* m = as_method(o);
  return PyUnicode_FromFormat("<method '%s' of '%s' objects>", m->def->name,
                              m->owner_type->tp_name);
}

PyObject* method_get_name(PyObject* o, void*) {
  return PyUnicode_FromString(as_method(o)->def->name);
}
PyObject* method_get_doc(PyObject* o, void*) {
  return PyUnicode_FromString(as_method(o)->def->doc);
}

PyGetSetDef g_method_getset[] = {{"__name__", method_get_name, nullptr, nullptr, nullptr},
                                 {"__doc__", method_get_doc, nullptr, nullptr, nullptr},
                                 {nullptr, nullptr, nullptr, nullptr, nullptr}};

void method_dealloc(PyObject* o) { Py_TYPE(o)->tp_free(o); }

// A static type called through vectorcall at `call_offset`.
void set_callable_slots(PyTypeObject& t, const char* name, Py_ssize_t size, destructor dealloc,
                        PyGetSetDef* getset, Py_ssize_t call_offset, reprfunc repr) {
  set_slots(t, {.name = name,
                .size = size,
                .doc = nullptr,
                .dealloc = dealloc,
                .getset = getset,
                .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL});
  t.tp_vectorcall_offset = call_offset;
  t.tp_call = PyVectorcall_Call;
  t.tp_repr = repr;
}

bool ready_types() {
  if (g_bound_type.tp_flags & Py_TPFLAGS_READY) return true;
  // Never freed by Python: it lives inside its owner (bound_dealloc).
  set_callable_slots(g_bound_type, "jitscope.inline_method", sizeof(InlineBound), bound_dealloc,
                     g_bound_getset, offsetof(InlineBound, call), bound_repr);
  set_callable_slots(g_method_type, "jitscope.inline_method_descriptor", sizeof(MethodObject),
                     method_dealloc, g_method_getset, offsetof(MethodObject, call), method_repr);
  g_method_type.tp_descr_get = method_get;
  return PyType_Ready(&g_bound_type) == 0 && PyType_Ready(&g_method_type) == 0;
}

PyObject* new_method(PyTypeObject& type, const InlineMethodDef& def) {
  MethodObject* m = PyObject_New(MethodObject, &g_method_type);
  if (m == nullptr) return nullptr;
  m->call = method_call;
  m->def = &def;
  m->owner_type = &type;
  return reinterpret_cast<PyObject*>(m);
}

#else  // free-threaded: ordinary methods, bound per lookup

PyObject* new_method(PyTypeObject& type, const InlineMethodDef& def) {
  // Kept for the process, as a static PyMethodDef would be.
  auto* md = new (std::nothrow)
      PyMethodDef{def.name,
                  def.noargs != nullptr
                      ? def.noargs
                      : reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(def.fastcall)),
                  def.noargs != nullptr ? METH_NOARGS : METH_FASTCALL, def.doc};
  if (md == nullptr) return PyErr_NoMemory();
  return PyDescr_NewMethod(&type, md);
}

bool ready_types() { return true; }

#endif

}  // namespace

bool add_inline_methods(PyTypeObject& type, const InlineMethodDef* defs) noexcept {
  if (!ready_types()) return false;
  for (const InlineMethodDef* def = defs; def->name != nullptr; ++def) {
    PyObject* method = new_method(type, *def);
    if (method == nullptr) return false;
    const int rc = PyDict_SetItemString(type.tp_dict, def->name, method);
    Py_DECREF(method);
    if (rc < 0) return false;
  }
  PyType_Modified(&type);
  return true;
}

}  // namespace jitscope::python
