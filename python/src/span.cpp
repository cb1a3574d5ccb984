#include "span.hpp"

#include "args.hpp"
#include "inline_methods.hpp"
#include "text.hpp"
#include "type_slots.hpp"

#include <jitscope/jitscope.hpp>

#include <structmember.h>

#include <cstdint>
#include <new>
#include <string>
#include <vector>

namespace jitscope::python {

PyObject* g_decorate = nullptr;
PyObject* g_async_ready = nullptr;
PyObject* g_async_track = nullptr;

namespace {

PyObject* g_category = nullptr;  // "category", what the keyword cat= becomes (init_span_type)

struct SpanObject {
  PyObject_HEAD PyObject* name;  // str, or nullptr: named by the decorated function
  PyObject* kwargs;              // dict of the args given at construction, or nullptr
  unsigned long thread;
  bool begun;
  PyObject* async_args;       // dict of arg() calls while async-open, or nullptr
  bool async_begun;           // entered by `async with`: a slice on its task's track
  std::uint64_t async_track;  // the task's track (g_async_track())
  jitscope::AsyncBegin async_at;
  // A jitscope::Span, constructed at begin. Not destroyed when the object
  // dies on another thread than its span's: a span ends on its own thread.
  alignas(jitscope::Span) unsigned char storage[sizeof(jitscope::Span)];
  InlineBound enter_method, exit_method;  // __enter__, __exit__ (inline_methods.hpp)

  jitscope::Span& span() { return *std::launder(reinterpret_cast<jitscope::Span*>(storage)); }
};

// The interned copy of a span name is stored by pointer, as a literal's:
// jitscope::Span takes literals as const char arrays.
using Literal = const char[1];

void begin(SpanObject* self) noexcept {
  if (self->begun) {
    say_once("a jitscope.span object was entered again while open: the second begin is ignored");
    return;
  }
  if (!jitscope::active()) return;  // nothing begun; end() has nothing to end
  name_thread_once();
  self->thread = PyThread_get_thread_ident();
  const char* literal = self->name != nullptr ? interned(self->name) : nullptr;
  if (literal != nullptr) {
    new (self->storage) jitscope::Span(*reinterpret_cast<const Literal*>(literal));
  } else {
    std::string scratch;
    const std::string_view text =
        self->name != nullptr ? utf8_of(self->name, scratch) : std::string_view("span");
    new (self->storage) jitscope::Span(text);
  }
  self->begun = true;
  add_args(self->span(), self->kwargs);
}

void end(SpanObject* self) noexcept {
  if (!self->begun) return;
  if (PyThread_get_thread_ident() != self->thread) {
    say_once(
        "a jitscope span was ended on another thread than the one that began it: "
        "the end is ignored (end a span on its own thread)");
    return;
  }
  self->span().~Span();  // ends it
  self->begun = false;
}

PyObject* make(PyTypeObject* type, PyObject* name, PyObject* kwargs) {
  if (name != nullptr && name != Py_None && !PyUnicode_Check(name)) {
    PyErr_Format(PyExc_TypeError, "jitscope.span: the name must be a str, not %.100s",
                 Py_TYPE(name)->tp_name);
    return nullptr;
  }
  auto* self = reinterpret_cast<SpanObject*>(type->tp_alloc(type, 0));
  if (self == nullptr) return nullptr;
  self->name = name == Py_None ? nullptr : name;
  Py_XINCREF(self->name);
  self->kwargs = kwargs;
  Py_XINCREF(kwargs);
  self->begun = false;
  self->async_begun = false;
  self->async_args = nullptr;
  self->thread = 0;
  return reinterpret_cast<PyObject*>(self);
}

// span(name=None, /, **args); "cat" is the arg "category".
PyObject* span_vectorcall(PyObject* type, PyObject* const* args, std::size_t nargsf,
                          PyObject* kwnames) {
  const Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
  if (nargs > 1) {
    PyErr_Format(PyExc_TypeError,
                 "jitscope.span takes at most 1 positional argument (the name), %zd given", nargs);
    return nullptr;
  }
  PyObject* kwargs = nullptr;
  if (kwnames != nullptr && PyTuple_GET_SIZE(kwnames) > 0) {
    kwargs = PyDict_New();
    if (kwargs == nullptr) return nullptr;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(kwnames); ++i) {
      PyObject* key = PyTuple_GET_ITEM(kwnames, i);
      if (PyUnicode_CompareWithASCIIString(key, "cat") == 0) key = g_category;
      if (PyDict_SetItem(kwargs, key, args[nargs + i]) < 0) {
        Py_DECREF(kwargs);
        return nullptr;
      }
    }
  }
  PyObject* self =
      make(reinterpret_cast<PyTypeObject*>(type), nargs == 1 ? args[0] : nullptr, kwargs);
  Py_XDECREF(kwargs);
  return self;
}

PyObject* span_new(PyTypeObject* type, PyObject* args, PyObject* kwargs) {
  PyObject* name = nullptr;
  if (!PyArg_UnpackTuple(args, "span", 0, 1, &name)) return nullptr;
  return make(type, name, kwargs);
}

void span_dealloc(PyObject* obj) {
  auto* self = reinterpret_cast<SpanObject*>(obj);
  // Dropped while open: on its own thread it ends now (as a C++ Span going
  // out of scope); on another it stays open (ended at stop, or with an
  // outer span on its thread).
  if (self->begun && PyThread_get_thread_ident() == self->thread) self->span().~Span();
  Py_XDECREF(self->name);
  Py_XDECREF(self->kwargs);
  Py_XDECREF(self->async_args);
  Py_TYPE(obj)->tp_free(obj);
}

PyObject* span_enter(PyObject* obj, PyObject*) {
  begin(reinterpret_cast<SpanObject*>(obj));
  Py_INCREF(obj);
  return obj;
}

PyObject* span_exit(PyObject* obj, PyObject* const* args, Py_ssize_t nargs) {
  auto* self = reinterpret_cast<SpanObject*>(obj);
  if (nargs >= 2 && args[0] != Py_None && self->begun) {
    std::string type, message;
    describe_exception(args[0], args[1], &type, &message);  // str(exc): may run any code
    if (!self->begun) Py_RETURN_FALSE;                      // ... that ended this span
    add_failed_args(self->span(), type, message);
  }
  end(self);
  Py_RETURN_FALSE;  // the exception, if any, goes on unchanged
}

// `async with`: the span is a slice on the running task's own track
// (jitscope::async_slice), so spans left open across an await neither end
// nor are ended by other tasks' spans on this thread. The awaitables are
// the package's `_ready(value)` coroutine.
PyObject* ready(PyObject* value) {
  if (g_async_ready == nullptr) {
    PyErr_SetString(PyExc_RuntimeError, "jitscope: the package's async hooks are not set");
    return nullptr;
  }
  return PyObject_CallOneArg(g_async_ready, value);
}

PyObject* span_aenter(PyObject* obj, PyObject*) {
  auto* self = reinterpret_cast<SpanObject*>(obj);
  if (self->begun || self->async_begun) {
    say_once("a jitscope.span object was entered again while open: the second begin is ignored");
  } else if (jitscope::active() && g_async_track != nullptr) {
    name_thread_once();
    PyObject* track = PyObject_CallNoArgs(g_async_track);
    if (track == nullptr) return nullptr;  // the package's own hook: not expected
    self->async_track = PyLong_AsUnsignedLongLongMask(track);
    Py_DECREF(track);
    self->async_at = jitscope::async_begin();
    self->async_begun = true;
  }
  return ready(obj);
}

// The task slice's args: the span's keyword args, those of arg() while it
// was open, and the failed marks of an exception leaving it.
void end_async(SpanObject* self, PyObject* exc_type, PyObject* exc) noexcept {
  self->async_begun = false;
  PyObject* dicts[] = {self->kwargs, self->async_args};
  try {
    std::size_t n = 3;
    for (PyObject* d : dicts) n += d != nullptr ? static_cast<std::size_t>(PyDict_GET_SIZE(d)) : 0;
    std::vector<jitscope::Arg> args;
    std::vector<std::string> scratch(n);  // never resized: the args point into it
    args.reserve(n);
    for (PyObject* d : dicts) {
      PyObject* key = nullptr;
      PyObject* value = nullptr;
      Py_ssize_t pos = 0;
      while (d != nullptr && PyDict_Next(d, &pos, &key, &value)) {
        jitscope::Arg a("", false);
        if (to_arg(key, value, a, scratch[args.size()])) args.push_back(a);
      }
    }
    std::string type, message;
    if (exc_type != nullptr && exc_type != Py_None) {
      describe_exception(exc_type, exc, &type, &message);  // str(exc): may run any code
      args.emplace_back("failed", true);
      args.emplace_back("fail_type", std::string_view(type));
      args.emplace_back("fail_reason", std::string_view(message));
    }
    std::string name_scratch;
    const std::string_view name =
        self->name != nullptr ? utf8_of(self->name, name_scratch) : std::string_view("span");
    (void)jitscope::async_slice(self->async_track, name, self->async_at, args);
  } catch (...) {
    say_once("out of memory: a task slice was not recorded");
  }
  Py_CLEAR(self->async_args);
}

PyObject* span_aexit(PyObject* obj, PyObject* const* args, Py_ssize_t nargs) {
  auto* self = reinterpret_cast<SpanObject*>(obj);
  if (self->async_begun) {
    end_async(self, nargs >= 1 ? args[0] : nullptr, nargs >= 2 ? args[1] : nullptr);
  }
  return ready(Py_False);  // the exception, if any, goes on unchanged
}

PyObject* span_end(PyObject* obj, PyObject*) {
  end(reinterpret_cast<SpanObject*>(obj));
  Py_RETURN_NONE;
}

PyObject* span_arg(PyObject* obj, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 2 || !PyUnicode_Check(args[0])) {
    PyErr_SetString(PyExc_TypeError, "span.arg(key: str, value)");
    return nullptr;
  }
  auto* self = reinterpret_cast<SpanObject*>(obj);
  if (self->begun && PyThread_get_thread_ident() == self->thread) {
    add_arg(self->span(), args[0], args[1]);
  } else if (self->async_begun) {  // kept for the slice's end
    if (self->async_args == nullptr && (self->async_args = PyDict_New()) == nullptr) return nullptr;
    if (PyDict_SetItem(self->async_args, args[0], args[1]) < 0) return nullptr;
  }
  Py_RETURN_NONE;
}

// span(...)(func): the package's wrapper around func.
PyObject* span_call(PyObject* obj, PyObject* args, PyObject* kwargs) {
  PyObject* func = nullptr;
  if ((kwargs != nullptr && PyDict_GET_SIZE(kwargs) > 0) ||
      !PyArg_UnpackTuple(args, "span", 1, 1, &func) || !PyCallable_Check(func)) {
    if (!PyErr_Occurred()) {
      PyErr_SetString(PyExc_TypeError,
                      "a jitscope.span decorates one callable: @jitscope.span() or "
                      "@jitscope.span(\"name\")");
    }
    return nullptr;
  }
  if (g_decorate == nullptr) {
    PyErr_SetString(PyExc_TypeError, "jitscope.span: import the jitscope package to decorate");
    return nullptr;
  }
  return PyObject_CallFunctionObjArgs(g_decorate, obj, func, nullptr);
}

PyObject* span_get_name(PyObject* obj, void*) {
  auto* self = reinterpret_cast<SpanObject*>(obj);
  PyObject* name = self->name != nullptr ? self->name : Py_None;
  Py_INCREF(name);
  return name;
}

PyObject* span_get_args(PyObject* obj, void*) {
  auto* self = reinterpret_cast<SpanObject*>(obj);
  return self->kwargs != nullptr ? PyDict_Copy(self->kwargs) : PyDict_New();
}

PyObject* span_get_recording(PyObject* obj, void*) {
  auto* self = reinterpret_cast<SpanObject*>(obj);
  return PyBool_FromLong(self->begun && self->span().recording());
}

const InlineMethodDef g_span_with_methods[] = {
    {.name = "__enter__",
     .doc = "Begins the span.",
     .offset = offsetof(SpanObject, enter_method),
     .noargs = span_enter},
    {.name = "__exit__",
     .doc = "Ends the span; an exception marks it failed and goes on.",
     .offset = offsetof(SpanObject, exit_method),
     .fastcall = span_exit},
    {.name = nullptr, .doc = nullptr, .offset = 0}};

PyMethodDef g_span_methods[] = {
    {"__aenter__", span_aenter, METH_NOARGS,
     "Begins the span as a slice on the running asyncio task's own track."},
    {"__aexit__", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(span_aexit)),
     METH_FASTCALL, "Ends the task's slice."},
    {"end", span_end, METH_NOARGS, "Ends the span (idempotent), on the thread that began it."},
    {"arg", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(span_arg)), METH_FASTCALL,
     "arg(key, value): an arg on the open span."},
    {nullptr, nullptr, 0, nullptr}};

PyGetSetDef g_span_getset[] = {
    {"name", span_get_name, nullptr, "The span's name (None: the decorated function's).", nullptr},
    {"args", span_get_args, nullptr, "The args given at construction.", nullptr},
    {"recording", span_get_recording, nullptr, "Begun with a session on and recorded.", nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr}};

}  // namespace

PyTypeObject g_span_type = {PyVarObject_HEAD_INIT(nullptr, 0)};

bool init_span_type() noexcept {
  if (g_category == nullptr && (g_category = PyUnicode_InternFromString("category")) == nullptr) {
    return false;
  }
  PyTypeObject& t = g_span_type;
  set_slots(
      t, {.name = "jitscope.span",
          .size = sizeof(SpanObject),
          .doc = PyDoc_STR(
              "span(name=None, /, cat=None, **args)\n\n"
              "A span: `with jitscope.span(\"lower\", n=3):`, `@jitscope.span()` (named after "
              "the\nfunction's __qualname__), or by handle: `s = jitscope.begin(\"stage\"); ...; "
              "s.end()`.\nArgs are int, float, bool or str (anything else as its str()). An "
              "exception\nleaving it marks it failed (args failed, fail_type, fail_reason) and "
              "goes on."),
          .dealloc = span_dealloc,
          .methods = g_span_methods,
          .getset = g_span_getset,
          .make = span_new});
  t.tp_vectorcall = span_vectorcall;
  t.tp_call = span_call;
  return PyType_Ready(&t) == 0 && add_inline_methods(t, g_span_with_methods);
}

PyObject* begin_span(PyObject*, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  if (nargs != 1) {
    PyErr_SetString(PyExc_TypeError, "jitscope.begin(name, /, **args) takes the span's name");
    return nullptr;
  }
  PyObject* obj = span_vectorcall(reinterpret_cast<PyObject*>(&g_span_type), args,
                                  static_cast<std::size_t>(nargs), kwnames);
  if (obj != nullptr) begin(reinterpret_cast<SpanObject*>(obj));
  return obj;
}

void name_thread_once() noexcept {
  static thread_local bool named = false;
  if (named) return;
  named = true;
  PyObject* threading = PyImport_ImportModule("threading");
  PyObject* current =
      threading != nullptr ? PyObject_CallMethod(threading, "current_thread", nullptr) : nullptr;
  PyObject* name = current != nullptr ? PyObject_GetAttrString(current, "name") : nullptr;
  if (name != nullptr && PyUnicode_Check(name)) {
    std::string scratch;
    jitscope::set_thread_name(utf8_of(name, scratch));
  }
  Py_XDECREF(name);
  Py_XDECREF(current);
  Py_XDECREF(threading);
  PyErr_Clear();
}

void add_failed_args(jitscope::Span& span, std::string_view type,
                     std::string_view message) noexcept {
  span.arg("failed", true);
  span.arg("fail_type", type);
  span.arg("fail_reason", message);
}

void describe_exception(PyObject* type, PyObject* value, std::string* type_name,
                        std::string* message) noexcept {
  try {
    std::string scratch;
    PyObject* qualname =
        PyType_Check(type) ? PyObject_GetAttrString(type, "__qualname__") : nullptr;
    *type_name =
        qualname != nullptr ? std::string(utf8_of(qualname, scratch)) : std::string("exception");
    Py_XDECREF(qualname);
    PyErr_Clear();
    if (value != nullptr && value != Py_None) {
      *message = std::string(utf8_of(value, scratch));  // str(exc)
      PyErr_Clear();
    }
  } catch (...) {
    // Out of memory: what was made so far.
  }
}

}  // namespace jitscope::python
