#include "decorated.hpp"

#include "args.hpp"
#include "span.hpp"
#include "text.hpp"
#include "type_slots.hpp"

#include <jitscope/jitscope.hpp>

#include <cstddef>
#include <string>

namespace jitscope::python {
namespace {

struct DecoratedObject {
  PyObject_HEAD vectorcallfunc vectorcall;
  PyObject* func;
  PyObject* name;       // str
  PyObject* kwargs;     // dict, or nullptr
  PyObject* dict;       // __dict__: __name__, __doc__, __wrapped__ (functools.update_wrapper)
  const char* literal;  // the name's interned copy, or nullptr: copied per call
};

DecoratedObject* as_decorated(PyObject* o) { return reinterpret_cast<DecoratedObject*>(o); }

// The exception being raised, as the failed args of `span`; it stays raised.
void mark_failed(jitscope::Span& span) noexcept {
  PyObject *type = nullptr, *value = nullptr, *traceback = nullptr;
  PyErr_Fetch(&type, &value, &traceback);
  PyErr_NormalizeException(&type, &value, &traceback);
  std::string type_name, message;
  describe_exception(type, value, &type_name, &message);
  add_failed_args(span, type_name, message);
  PyErr_Restore(type, value, traceback);
}

PyObject* decorated_call(PyObject* callable, PyObject* const* args, std::size_t nargsf,
                         PyObject* kwnames) {
  DecoratedObject* self = as_decorated(callable);
  if (self->func == nullptr) {  // cleared by the garbage collector (a finalizer calling it)
    PyErr_SetString(PyExc_ReferenceError, "the function of this jitscope span is gone");
    return nullptr;
  }
  if (!jitscope::active()) return PyObject_Vectorcall(self->func, args, nargsf, kwnames);
  name_thread_once();
  std::string scratch;
  jitscope::Span span = self->literal != nullptr
                            ? jitscope::Span(*reinterpret_cast<const char(*)[1]>(self->literal))
                            : jitscope::Span(utf8_of(self->name, scratch));
  add_args(span, self->kwargs);
  PyObject* result = PyObject_Vectorcall(self->func, args, nargsf, kwnames);
  if (result == nullptr && span.recording()) mark_failed(span);
  return result;  // the span ends here, on this thread
}

// As a function: looked up on an instance, a bound method.
PyObject* decorated_get(PyObject* self, PyObject* obj, PyObject*) {
  if (obj == nullptr || obj == Py_None) {
    Py_INCREF(self);
    return self;
  }
  return PyMethod_New(self, obj);
}

int decorated_traverse(PyObject* o, visitproc visit, void* arg) {
  DecoratedObject* self = as_decorated(o);
  Py_VISIT(self->func);
  Py_VISIT(self->name);
  Py_VISIT(self->kwargs);
  Py_VISIT(self->dict);
  return 0;
}

int decorated_clear(PyObject* o) {
  DecoratedObject* self = as_decorated(o);
  Py_CLEAR(self->func);
  Py_CLEAR(self->kwargs);
  Py_CLEAR(self->dict);
  return 0;  // name stays: the interned literal came from it
}

void decorated_dealloc(PyObject* o) {
  PyObject_GC_UnTrack(o);
  decorated_clear(o);
  Py_CLEAR(as_decorated(o)->name);
  Py_TYPE(o)->tp_free(o);
}

PyObject* decorated_repr(PyObject* o) {
  DecoratedObject* self = as_decorated(o);
  return PyUnicode_FromFormat("<jitscope span %R around %R>", self->name, self->func);
}

PyGetSetDef g_decorated_getset[] = {
    {"__dict__", PyObject_GenericGetDict, PyObject_GenericSetDict, nullptr, nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr}};

}  // namespace

PyTypeObject g_decorated_type = {PyVarObject_HEAD_INIT(nullptr, 0)};

bool init_decorated_type() noexcept {
  PyTypeObject& t = g_decorated_type;
  set_slots(t,
            {.name = "jitscope.span_function",
             .size = sizeof(DecoratedObject),
             .doc = PyDoc_STR("A function decorated with @jitscope.span(): each call is a span."),
             .dealloc = decorated_dealloc,
             .getset = g_decorated_getset,
             .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL |
                      Py_TPFLAGS_METHOD_DESCRIPTOR});
  t.tp_vectorcall_offset = offsetof(DecoratedObject, vectorcall);
  t.tp_call = PyVectorcall_Call;
  t.tp_descr_get = decorated_get;
  t.tp_dictoffset = offsetof(DecoratedObject, dict);
  t.tp_getattro = PyObject_GenericGetAttr;
  t.tp_setattro = PyObject_GenericSetAttr;
  t.tp_traverse = decorated_traverse;
  t.tp_clear = decorated_clear;
  t.tp_repr = decorated_repr;
  return PyType_Ready(&t) == 0;
}

PyObject* make_decorated(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 3 || !PyCallable_Check(args[0]) || !PyUnicode_Check(args[1]) ||
      !(args[2] == Py_None || PyDict_Check(args[2]))) {
    PyErr_SetString(PyExc_TypeError, "_decorated(func, name: str, args: dict | None)");
    return nullptr;
  }
  auto* self = PyObject_GC_New(DecoratedObject, &g_decorated_type);
  if (self == nullptr) return nullptr;
  self->vectorcall = decorated_call;
  self->func = Py_NewRef(args[0]);
  self->name = Py_NewRef(args[1]);
  self->kwargs = args[2] == Py_None || PyDict_GET_SIZE(args[2]) == 0 ? nullptr : Py_NewRef(args[2]);
  self->dict = nullptr;
  self->literal = interned(self->name);
  PyObject_GC_Track(self);
  return reinterpret_cast<PyObject*>(self);
}

}  // namespace jitscope::python
