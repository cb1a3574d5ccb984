#include "compile_types.hpp"

#include "inline_methods.hpp"
#include "span.hpp"
#include "text.hpp"
#include "type_slots.hpp"
#include "unit_scopes.hpp"

#include <jitscope/compile.hpp>

#include <charconv>
#include <deque>
#include <new>
#include <string>
#include <tuple>
#include <vector>

namespace jitscope::python {
namespace {

// ---- compile_unit ---------------------------------------------------------

struct UnitObject {
  PyObject_HEAD PyObject* frame;  // str or nullptr (each is kept for the open: the unit copies)
  PyObject* graph;
  PyObject* key;
  PyObject* recompile_reason;
  int is_forward;
  // The last one opened (in `storage`), or nullptr; kept once closed for its
  // ref (loads credited to it later: unit.loading()). In the object, not on
  // the heap (an allocation and a free less a unit); a unit that another
  // thread's dealloc could not close keeps the whole object (unit_dealloc).
  jitscope::CompileUnit* unit;
  alignas(jitscope::CompileUnit) unsigned char storage[sizeof(jitscope::CompileUnit)];
  InlineBound enter_method, exit_method;  // __enter__, __exit__ (inline_methods.hpp)
};

UnitObject* as_unit(PyObject* o) { return reinterpret_cast<UnitObject*>(o); }

// The unit while open, else nullptr: what its methods record into.
jitscope::CompileUnit* open_unit(UnitObject* self) {
  return self->unit != nullptr && self->unit->is_open() ? self->unit : nullptr;
}

bool optional_str(PyObject* value, const char* what, PyObject** out) {
  if (value == nullptr || value == Py_None) {
    *out = nullptr;
    return true;
  }
  if (!PyUnicode_Check(value)) {
    PyErr_Format(PyExc_TypeError, "jitscope.compile_unit: %s must be a str, not %.100s", what,
                 Py_TYPE(value)->tp_name);
    return false;
  }
  Py_INCREF(value);
  *out = value;
  return true;
}

PyObject* unit_new(PyTypeObject* type, PyObject* args, PyObject* kwargs) {
  static const char* names[] = {"frame", "graph", "key", "is_forward", "recompile_reason", nullptr};
  PyObject *frame = nullptr, *graph = nullptr, *key = nullptr, *reason = nullptr;
  int is_forward = 1;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|O$OOpO:compile_unit", const_cast<char**>(names),
                                   &frame, &graph, &key, &is_forward, &reason)) {
    return nullptr;
  }
  auto* self = as_unit(type->tp_alloc(type, 0));
  if (self == nullptr) return nullptr;
  self->is_forward = is_forward;
  if (!optional_str(frame, "frame", &self->frame) || !optional_str(graph, "graph", &self->graph) ||
      !optional_str(key, "key", &self->key) ||
      !optional_str(reason, "recompile_reason", &self->recompile_reason)) {
    Py_DECREF(self);
    return nullptr;
  }
  return reinterpret_cast<PyObject*>(self);
}

// A vectorcall's arguments as tp_new takes them (a tuple and a dict), for
// the calls the fast paths below leave to the full parser and its errors.
PyObject* new_from_vector(PyTypeObject* type, newfunc make, PyObject* const* args, Py_ssize_t nargs,
                          PyObject* kwnames) {
  PyObject* tuple = PyTuple_New(nargs);
  if (tuple == nullptr) return nullptr;
  for (Py_ssize_t i = 0; i < nargs; ++i) {
    Py_INCREF(args[i]);
    PyTuple_SET_ITEM(tuple, i, args[i]);
  }
  PyObject* kwargs = nullptr;
  if (kwnames != nullptr && PyTuple_GET_SIZE(kwnames) > 0) {
    kwargs = PyDict_New();
    for (Py_ssize_t i = 0; kwargs != nullptr && i < PyTuple_GET_SIZE(kwnames); ++i) {
      if (PyDict_SetItem(kwargs, PyTuple_GET_ITEM(kwnames, i), args[nargs + i]) < 0) {
        Py_CLEAR(kwargs);
      }
    }
    if (kwargs == nullptr) {
      Py_DECREF(tuple);
      return nullptr;
    }
  }
  PyObject* self = make(type, tuple, kwargs);
  Py_DECREF(tuple);
  Py_XDECREF(kwargs);
  return self;
}

// compile_unit's keywords, interned: a call's keyword names are interned
// too, so the fast path below matches them by pointer.
PyObject* g_unit_keywords[5] = {};  // frame, graph, key, is_forward, recompile_reason

// compile_unit(frame=None, *, ...) without building a dict: str or None
// values and a bool is_forward; anything else takes unit_new's parser (and
// its errors).
PyObject* unit_vectorcall(PyObject* type, PyObject* const* args, std::size_t nargsf,
                          PyObject* kwnames) {
  const Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
  const Py_ssize_t nkw = kwnames != nullptr ? PyTuple_GET_SIZE(kwnames) : 0;
  PyObject* values[5] = {nargs == 1 ? args[0] : nullptr, nullptr, nullptr, nullptr, nullptr};
  bool fast = nargs <= 1 && g_unit_keywords[0] != nullptr;
  for (Py_ssize_t i = 0; fast && i < nkw; ++i) {
    PyObject* name = PyTuple_GET_ITEM(kwnames, i);
    int at = 0;
    while (at < 5 && name != g_unit_keywords[at]) ++at;
    fast = at < 5 && values[at] == nullptr;
    if (fast) values[at] = args[nargs + i];
  }
  if (fast && values[3] != nullptr && !PyBool_Check(values[3])) fast = false;
  for (int at : {0, 1, 2, 4}) {
    if (fast && values[at] != nullptr && values[at] != Py_None && !PyUnicode_Check(values[at])) {
      fast = false;
    }
  }
  auto* t = reinterpret_cast<PyTypeObject*>(type);
  if (!fast) return new_from_vector(t, t->tp_new, args, nargs, kwnames);
  auto* self = as_unit(t->tp_alloc(t, 0));
  if (self == nullptr) return nullptr;
  self->is_forward = values[3] == nullptr || values[3] == Py_True;
  PyObject** slots[5] = {&self->frame, &self->graph, &self->key, nullptr, &self->recompile_reason};
  for (int at : {0, 1, 2, 4}) {
    PyObject* v = values[at] == Py_None ? nullptr : values[at];
    Py_XINCREF(v);
    *slots[at] = v;
  }
  return reinterpret_cast<PyObject*>(self);
}

std::string_view optional_view(PyObject* s, std::string& scratch) {
  return s != nullptr ? utf8_of(s, scratch) : std::string_view();
}

void unit_open(UnitObject* self) {
  if (open_unit(self) != nullptr) {
    say_once("a jitscope.compile_unit object was opened again while open: ignored");
    return;
  }
  if (self->unit != nullptr) {  // closed: the object is opened anew
    self->unit->~CompileUnit();
    self->unit = nullptr;
  }
  if (jitscope::active()) name_thread_once();
  std::string s1, s2, s3, s4;
  jitscope::CompileUnitOptions options;
  options.frame = optional_view(self->frame, s1);
  if (self->graph != nullptr) options.graph = optional_view(self->graph, s2);
  options.key = optional_view(self->key, s3);
  options.recompile_reason = optional_view(self->recompile_reason, s4);
  options.is_forward = self->is_forward != 0;
  self->unit = new (self->storage) jitscope::CompileUnit(options);  // copies what it keeps
}

void unit_close(UnitObject* self) {
  // Refused on another thread (one line): it stays open there.
  if (self->unit != nullptr) self->unit->close();
}

void unit_dealloc(PyObject* obj) {
  UnitObject* self = as_unit(obj);
  // On its own thread it closes; elsewhere it is refused (one line) and the
  // unit stays open on its thread, the object's memory kept (never freed):
  // the unit's frame is linked there. Not freeing is sound because the type
  // is static, not GC-tracked and not subclassable (g_unit_type's flags):
  // adding Py_TPFLAGS_HAVE_GC or BASETYPE must revisit this.
  unit_close(self);
  Py_CLEAR(self->frame);
  Py_CLEAR(self->graph);
  Py_CLEAR(self->key);
  Py_CLEAR(self->recompile_reason);
  if (self->unit != nullptr) {
    if (self->unit->is_open()) return;
    self->unit->~CompileUnit();
  }
  Py_TYPE(obj)->tp_free(obj);
}

PyObject* unit_enter(PyObject* obj, PyObject*) {
  unit_open(as_unit(obj));
  Py_INCREF(obj);
  return obj;
}

PyObject* unit_exit(PyObject* obj, PyObject* const* args, Py_ssize_t nargs) {
  UnitObject* self = as_unit(obj);
  if (nargs >= 2 && args[0] != Py_None && open_unit(self) != nullptr) {
    std::string type, message;
    describe_exception(args[0], args[1], &type, &message);
    self->unit->fail(type, message);
  }
  unit_close(self);
  Py_RETURN_FALSE;
}

PyObject* unit_close_method(PyObject* obj, PyObject*) {
  unit_close(as_unit(obj));
  Py_RETURN_NONE;
}

// Says a call's error once, for a call that failed.
void said_if_failed(const jitscope::Status& status, const char* what) {
  if (status.ok()) return;
  say_once(std::string(what) + ": " + status.message());
}

bool two_strs(PyObject* const* args, Py_ssize_t nargs, const char* usage, std::string& a,
              std::string& b, std::string_view* pa, std::string_view* pb) {
  if (nargs != 2 || !PyUnicode_Check(args[0]) || !PyUnicode_Check(args[1])) {
    PyErr_SetString(PyExc_TypeError, usage);
    return false;
  }
  *pa = utf8_of(args[0], a);
  *pb = utf8_of(args[1], b);
  return true;
}

PyObject* unit_cache(PyObject* obj, PyObject* const* args, Py_ssize_t nargs, bool hit) {
  std::string a, b;
  std::string_view layer, key;
  if (!two_strs(
          args, nargs,
          hit ? "unit.cache_hit(layer: str, key: str)" : "unit.cache_miss(layer: str, key: str)", a,
          b, &layer, &key)) {
    return nullptr;
  }
  if (jitscope::CompileUnit* unit = open_unit(as_unit(obj))) {
    if (hit) {
      unit->cache_hit(key, layer);
    } else {
      unit->cache_miss(key, layer);
    }
  }
  Py_RETURN_NONE;
}

PyObject* unit_cache_hit(PyObject* obj, PyObject* const* args, Py_ssize_t nargs) {
  return unit_cache(obj, args, nargs, true);
}
PyObject* unit_cache_miss(PyObject* obj, PyObject* const* args, Py_ssize_t nargs) {
  return unit_cache(obj, args, nargs, false);
}

// unit.cache_lookup(layer, {"source": h, "options": o}, hit): the key's
// parts by name (values of any type as their str()), for the report's
// miss reasons (docs/caches.md).
PyObject* unit_cache_lookup(PyObject* obj, PyObject* const* args, Py_ssize_t nargs) {
  constexpr const char* kUsage = "unit.cache_lookup(layer: str, key: dict[str, object], hit: bool)";
  if (nargs != 3 || !PyUnicode_Check(args[0]) || !PyDict_Check(args[1])) {
    PyErr_SetString(PyExc_TypeError, kUsage);
    return nullptr;
  }
  const int hit = PyObject_IsTrue(args[2]);
  if (hit < 0) return nullptr;
  std::string layer_text;
  const std::string_view layer = utf8_of(args[0], layer_text);
  // The items as a list of its own: a value's str() runs Python code, which
  // may change the dict, and the list keeps every name and value alive.
  PyObject* items = PyDict_Items(args[1]);
  if (items == nullptr) return nullptr;
  struct Release {
    PyObject* o;
    ~Release() { Py_DECREF(o); }
  } release{items};
  const Py_ssize_t n = PyList_GET_SIZE(items);
  // The parts' text lives here: each a str's own UTF-8 or its scratch copy
  // (a deque: references stay valid as it grows).
  std::deque<std::string> scratch;
  std::vector<jitscope::CacheKeyPart> parts;
  parts.reserve(static_cast<std::size_t>(n));
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject* item = PyList_GET_ITEM(items, i);  // a (name, value) tuple
    PyObject* name = PyTuple_GET_ITEM(item, 0);
    PyObject* value = PyTuple_GET_ITEM(item, 1);
    if (!PyUnicode_Check(name)) {
      PyErr_SetString(PyExc_TypeError, "unit.cache_lookup: the key's part names must be str");
      return nullptr;
    }
    const std::string_view n_text = utf8_of(name, scratch.emplace_back());
    const std::string_view v_text = utf8_of(value, scratch.emplace_back());
    parts.push_back({n_text, v_text});
  }
  if (jitscope::CompileUnit* unit = open_unit(as_unit(obj))) {
    unit->cache_lookup(layer, parts.data(), parts.size(),
                       hit != 0 ? jitscope::CacheOutcome::kHit : jitscope::CacheOutcome::kMiss);
  }
  Py_RETURN_NONE;
}

// unit.waits_for(other, pid=0): this unit waited for `other` (a
// compile_unit or its compile id; of process `pid`, 0: this one); the
// report's critical path follows it.
PyObject* unit_waits_for(PyObject* obj, PyObject* args, PyObject* kwargs) {
  static const char* names[] = {"unit", "pid", nullptr};
  PyObject* other = nullptr;
  long long pid = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|L:waits_for", const_cast<char**>(names), &other,
                                   &pid)) {
    return nullptr;
  }
  jitscope::CompileId id;
  if (!compile_id_of(other, "unit.waits_for", &id)) return nullptr;
  if (pid < 0) {
    PyErr_SetString(PyExc_ValueError, "unit.waits_for: pid must be a pid, or 0 for this process");
    return nullptr;
  }
  jitscope::CompileUnit* unit = open_unit(as_unit(obj));
  if (unit == nullptr) Py_RETURN_FALSE;
  return PyBool_FromLong(unit->waits_for(id, pid).ok());
}

PyObject* unit_fail(PyObject* obj, PyObject* const* args, Py_ssize_t nargs) {
  std::string a, b;
  std::string_view type, reason;
  if (!two_strs(args, nargs, "unit.fail(type: str, reason: str)", a, b, &type, &reason)) {
    return nullptr;
  }
  if (jitscope::CompileUnit* unit = open_unit(as_unit(obj))) unit->fail(type, reason);
  Py_RETURN_NONE;
}

// unit.set(key, value): int, float, bool or str, as CompileUnit::set.
PyObject* unit_set(PyObject* obj, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 2 || !PyUnicode_Check(args[0])) {
    PyErr_SetString(PyExc_TypeError, "unit.set(key: str, value: int | float | bool | str)");
    return nullptr;
  }
  jitscope::CompileUnit* unit = open_unit(as_unit(obj));
  if (unit == nullptr) Py_RETURN_NONE;
  std::string k, v;
  PyObject* value = args[1];
  jitscope::Status status;
  // The key and a str value are copied here: out of memory must not throw
  // through the interpreter's C frames.
  try {
    const std::string_view key = utf8_of(args[0], k);
    if (PyBool_Check(value)) {
      status = unit->set(key, value == Py_True);
    } else if (PyLong_Check(value)) {
      const long long n = PyLong_AsLongLong(value);
      if (n == -1 && PyErr_Occurred()) {
        PyErr_Clear();
        status = unit->set(key, utf8_of(value, v));  // past 64 bits: its digits
      } else {
        status = unit->set(key, std::int64_t{n});
      }
    } else if (PyFloat_Check(value)) {
      status = unit->set(key, PyFloat_AS_DOUBLE(value));
    } else {
      status = unit->set(key, utf8_of(value, v));
    }
  } catch (const std::bad_alloc&) {
    return PyErr_NoMemory();
  }
  said_if_failed(status, "unit.set");
  Py_RETURN_NONE;
}

PyObject* unit_increment(PyObject* obj, PyObject* const* args, Py_ssize_t nargs) {
  long long by = 1;
  if (nargs < 1 || nargs > 2 || !PyUnicode_Check(args[0]) ||
      (nargs == 2 && !PyLong_Check(args[1]))) {
    PyErr_SetString(PyExc_TypeError, "unit.increment(key: str, by: int = 1)");
    return nullptr;
  }
  if (nargs == 2) {
    by = PyLong_AsLongLong(args[1]);
    if (by == -1 && PyErr_Occurred()) return nullptr;  // OverflowError: a wrong argument
  }
  if (jitscope::CompileUnit* unit = open_unit(as_unit(obj))) {
    std::string k;
    said_if_failed(unit->increment(utf8_of(args[0], k), by), "unit.increment");
  }
  Py_RETURN_NONE;
}

// unit.artifact(kind, content, extension="txt"): content str or bytes-like.
PyObject* unit_artifact(PyObject* obj, PyObject* args, PyObject* kwargs) {
  static const char* names[] = {"kind", "content", "extension", nullptr};
  const char* kind = nullptr;
  PyObject* content = nullptr;
  const char* extension = "txt";
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "sO|s:artifact", const_cast<char**>(names), &kind,
                                   &content, &extension)) {
    return nullptr;
  }
  jitscope::CompileUnit* unit = open_unit(as_unit(obj));
  if (unit == nullptr) Py_RETURN_FALSE;
  jitscope::Status status;
  if (PyUnicode_Check(content)) {
    std::string scratch;
    status = unit->artifact(kind, utf8_of(content, scratch), extension);
  } else {
    Py_buffer view;
    if (PyObject_GetBuffer(content, &view, PyBUF_SIMPLE) < 0) return nullptr;  // TypeError
    status = unit->artifact(
        kind,
        std::string_view(static_cast<const char*>(view.buf), static_cast<std::size_t>(view.len)),
        extension);
    PyBuffer_Release(&view);
  }
  said_if_failed(status, "unit.artifact");
  return PyBool_FromLong(status.ok());
}

PyObject* unit_get_compile_id(PyObject* obj, void*) {
  // Kept once closed: a kernel built in the unit can name it later.
  UnitObject* self = as_unit(obj);
  if (self->unit == nullptr || !self->unit->ref().valid()) Py_RETURN_NONE;
  const jitscope::CompileId id = self->unit->id();
  return PyUnicode_FromFormat("%u/%u", id.frame, id.attempt);
}

PyObject* unit_get_open(PyObject* obj, void*) {
  return PyBool_FromLong(open_unit(as_unit(obj)) != nullptr);
}

PyObject* unit_loading(PyObject* obj, PyObject*) {
  return make_unit_scope(obj, UnitScopeKind::kLoading);
}

PyObject* unit_attach(PyObject* obj, PyObject*) {
  return make_unit_scope(obj, UnitScopeKind::kAttach);
}

using Fast = PyObject* (*)(PyObject*, PyObject* const*, Py_ssize_t);
PyCFunction fast(Fast f) { return reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(f)); }

const InlineMethodDef g_unit_with_methods[] = {
    {.name = "__enter__",
     .doc = "Opens the unit (current on this thread).",
     .offset = offsetof(UnitObject, enter_method),
     .noargs = unit_enter},
    {.name = "__exit__",
     .doc = "Closes the unit; an exception marks it failed (fail_type, fail_reason) and goes on.",
     .offset = offsetof(UnitObject, exit_method),
     .fastcall = unit_exit},
    {.name = nullptr, .doc = nullptr, .offset = 0}};

PyMethodDef g_unit_methods[] = {
    {"open", unit_enter, METH_NOARGS, "Opens the unit; returns it (what __enter__ does)."},
    {"close", unit_close_method, METH_NOARGS, "Closes the unit (idempotent), on its thread."},
    {"cache_hit", fast(unit_cache_hit), METH_FASTCALL, "cache_hit(layer, key)"},
    {"cache_miss", fast(unit_cache_miss), METH_FASTCALL, "cache_miss(layer, key)"},
    {"cache_lookup", fast(unit_cache_lookup), METH_FASTCALL,
     "cache_lookup(layer, key: dict of the key's parts by name, hit): for the report's miss "
     "reasons"},
    {"fail", fast(unit_fail), METH_FASTCALL, "fail(type, reason): marks the compile failed."},
    {"waits_for", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(unit_waits_for)),
     METH_VARARGS | METH_KEYWORDS,
     "waits_for(unit, pid=0): this unit waited for that unit's result (a compile_unit, or its\n"
     "compile_id \"3/0\" of process pid; 0: this one), for the report's critical path. True\n"
     "when recorded (a session is on and this unit is open)."},
    {"set", fast(unit_set), METH_FASTCALL, "set(key, value): a field of the unit's record."},
    {"increment", fast(unit_increment), METH_FASTCALL, "increment(key, by=1)"},
    {"artifact", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(unit_artifact)),
     METH_VARARGS | METH_KEYWORDS,
     "artifact(kind, content, extension='txt'): a file in the session's artifacts folder."},
    {"loading", unit_loading, METH_NOARGS,
     "with unit.loading(): CUDA modules loaded inside, on this thread, are credited to the "
     "unit,\nopen or closed: their kernels' GPU slices carry compiled_by (a JIT that loads at "
     "first launch)."},
    {"attach", unit_attach, METH_NOARGS,
     "with unit.attach(): the open unit is current on this thread too (a worker thread's "
     "spans\ncarry its compile_id; its phases charge the unit's record)."},
    {nullptr, nullptr, 0, nullptr}};

PyGetSetDef g_unit_getset[] = {
    {"compile_id", unit_get_compile_id, nullptr,
     "\"frame/attempt\" once opened (kept after close), else None.", nullptr},
    {"is_open", unit_get_open, nullptr, "Opened and not yet closed.", nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr}};

// ---- phase ------------------------------------------------------------------

struct PhaseObject {
  PyObject_HEAD const jitscope::PhaseKey* key;
  // The phase begun last (in `storage`) until ended by this object, else
  // nullptr. In the object, not on the heap (an allocation and a free less
  // a phase); a phase that another thread's dealloc could not end keeps
  // the whole object (phase_dealloc).
  jitscope::Phase* phase;
  unsigned long thread;  // the thread that began it: only that one ends it
  alignas(jitscope::Phase) unsigned char storage[sizeof(jitscope::Phase)];
  InlineBound enter_method, exit_method;  // __enter__, __exit__ (inline_methods.hpp)
};

PhaseObject* as_phase(PyObject* o) { return reinterpret_cast<PhaseObject*>(o); }

// (key, column, flags) -> its PhaseKey, registered once and kept for the
// process (a PhaseKey must not go away).
PyObject* g_phase_keys = nullptr;

const jitscope::PhaseKey* phase_key(PyObject* key, PyObject* column, bool exclusive,
                                    bool compile_event) {
  if (g_phase_keys == nullptr && (g_phase_keys = PyDict_New()) == nullptr) return nullptr;
  PyObject* id = Py_BuildValue("(OOii)", key, column != nullptr ? column : Py_None,
                               exclusive ? 1 : 0, compile_event ? 1 : 0);
  if (id == nullptr) return nullptr;
  if (PyObject* hit = PyDict_GetItemWithError(g_phase_keys, id)) {
    Py_DECREF(id);
    return static_cast<const jitscope::PhaseKey*>(PyLong_AsVoidPtr(hit));
  }
  if (PyErr_Occurred()) {  // a str subclass whose __hash__ raised
    Py_DECREF(id);
    return nullptr;
  }
  std::string k, c;
  jitscope::PhaseOptions options;
  options.column = column != nullptr ? utf8_of(column, c) : std::string_view();
  options.exclusive = exclusive;
  options.compile_event = compile_event;
  const jitscope::PhaseKey* made = nullptr;
  try {
    made = new jitscope::PhaseKey(utf8_of(key, k), options);  // never freed (see above)
  } catch (...) {
    Py_DECREF(id);
    PyErr_NoMemory();
    return nullptr;
  }
  if (!made->status().ok()) say_once(made->status().message());
  PyObject* address = PyLong_FromVoidPtr(const_cast<jitscope::PhaseKey*>(made));
  if (address == nullptr || PyDict_SetItem(g_phase_keys, id, address) < 0) PyErr_Clear();
  Py_XDECREF(address);
  Py_DECREF(id);
  return made;
}

// A plain jitscope.phase("key") (no options): its PhaseKey by the str
// alone, found without parsing arguments or building the tuple key.
PyObject* g_plain_phase_keys = nullptr;

const jitscope::PhaseKey* plain_phase_key(PyObject* key) {
  if (g_plain_phase_keys == nullptr) return nullptr;
  PyObject* hit = PyDict_GetItemWithError(g_plain_phase_keys, key);  // exact str: cannot raise
  return hit != nullptr ? static_cast<const jitscope::PhaseKey*>(PyLong_AsVoidPtr(hit)) : nullptr;
}

void remember_plain_phase_key(PyObject* key, const jitscope::PhaseKey* made) {
  if (g_plain_phase_keys == nullptr && (g_plain_phase_keys = PyDict_New()) == nullptr) {
    PyErr_Clear();
    return;
  }
  PyObject* address = PyLong_FromVoidPtr(const_cast<jitscope::PhaseKey*>(made));
  if (address == nullptr || PyDict_SetItem(g_plain_phase_keys, key, address) < 0) PyErr_Clear();
  Py_XDECREF(address);
}

PyObject* phase_new(PyTypeObject* type, PyObject* args, PyObject* kwargs) {
  const jitscope::PhaseKey* k = nullptr;
  const bool plain = kwargs == nullptr && PyTuple_GET_SIZE(args) == 1 &&
                     PyUnicode_CheckExact(PyTuple_GET_ITEM(args, 0));
  if (plain) k = plain_phase_key(PyTuple_GET_ITEM(args, 0));
  if (k == nullptr) {
    static const char* names[] = {"key", "column", "exclusive", "compile_event", nullptr};
    PyObject *key = nullptr, *column = nullptr;
    int exclusive = 0, compile_event = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "U|$Opp:phase", const_cast<char**>(names), &key,
                                     &column, &exclusive, &compile_event)) {
      return nullptr;
    }
    if (column == Py_None) column = nullptr;
    if (column != nullptr && !PyUnicode_Check(column)) {
      PyErr_Format(PyExc_TypeError, "jitscope.phase: column must be a str, not %.100s",
                   Py_TYPE(column)->tp_name);
      return nullptr;
    }
    k = phase_key(key, column, exclusive != 0, compile_event != 0);
    if (k == nullptr) return nullptr;
    if (plain) remember_plain_phase_key(key, k);
  }
  auto* self = as_phase(type->tp_alloc(type, 0));
  if (self == nullptr) return nullptr;
  self->key = k;
  self->phase = nullptr;
  self->thread = 0;
  return reinterpret_cast<PyObject*>(self);
}

// phase("key"): the plain form's key found by the str alone; any other
// call takes phase_new's parser.
PyObject* phase_vectorcall(PyObject* type, PyObject* const* args, std::size_t nargsf,
                           PyObject* kwnames) {
  const Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
  auto* t = reinterpret_cast<PyTypeObject*>(type);
  const jitscope::PhaseKey* k = nullptr;
  if (nargs == 1 && (kwnames == nullptr || PyTuple_GET_SIZE(kwnames) == 0) &&
      PyUnicode_CheckExact(args[0])) {
    k = plain_phase_key(args[0]);
  }
  if (k == nullptr) return new_from_vector(t, t->tp_new, args, nargs, kwnames);
  auto* self = as_phase(t->tp_alloc(t, 0));
  if (self == nullptr) return nullptr;
  self->key = k;
  self->phase = nullptr;
  self->thread = 0;
  return reinterpret_cast<PyObject*>(self);
}

void phase_begin(PhaseObject* self) {
  if (self->phase != nullptr) {
    say_once("a jitscope.phase object was entered again while open: ignored");
    return;
  }
  if (jitscope::active()) name_thread_once();
  self->thread = PyThread_get_thread_ident();
  self->phase = new (self->storage) jitscope::Phase(*self->key);
}

// True once the phase is ended and destroyed (or was never begun); false
// on another thread than its own, where the end is refused (one line) and
// the phase stays open there: a phase's frame is linked on its thread, and
// only that thread may read or unlink it.
bool phase_end(PhaseObject* self) {
  if (self->phase == nullptr) return true;
  if (PyThread_get_thread_ident() != self->thread) {
    say_once(
        "a jitscope.phase was ended on another thread than the one that began it: refused "
        "(it stays open there until that thread ends it)");
    return false;
  }
  self->phase->~Phase();  // ends it, unless its unit's close already did
  self->phase = nullptr;
  return true;
}

void phase_dealloc(PyObject* obj) {
  // Its memory kept when another thread drops it open (see phase_end and
  // unit_dealloc: the type is static, not GC-tracked, not subclassable).
  if (!phase_end(as_phase(obj))) return;
  Py_TYPE(obj)->tp_free(obj);
}

PyObject* phase_enter(PyObject* obj, PyObject*) {
  phase_begin(as_phase(obj));
  Py_INCREF(obj);
  return obj;
}

PyObject* phase_exit(PyObject* obj, PyObject* const* args, Py_ssize_t nargs) {
  PhaseObject* self = as_phase(obj);
  if (nargs >= 2 && args[0] != Py_None && self->phase != nullptr &&
      PyThread_get_thread_ident() == self->thread && self->phase->is_open()) {
    std::string type, message;
    describe_exception(args[0], args[1], &type, &message);
    const jitscope::EventRef event = self->phase->event();
    event.try_set(jitscope::DataLevel::kTrace, "failed", true);
    event.try_set(jitscope::DataLevel::kTrace, "fail_type", type);
    event.try_set(jitscope::DataLevel::kTrace, "fail_reason", message);
  }
  phase_end(self);
  Py_RETURN_FALSE;
}

PyObject* phase_end_method(PyObject* obj, PyObject*) {
  phase_end(as_phase(obj));
  Py_RETURN_NONE;
}

// On another thread than its own: begun and not ended by this object (the
// frame itself is that thread's to read).
PyObject* phase_get_open(PyObject* obj, void*) {
  PhaseObject* self = as_phase(obj);
  if (self->phase == nullptr) Py_RETURN_FALSE;
  return PyBool_FromLong(PyThread_get_thread_ident() != self->thread || self->phase->is_open());
}

const InlineMethodDef g_phase_with_methods[] = {
    {.name = "__enter__",
     .doc = "Begins the phase.",
     .offset = offsetof(PhaseObject, enter_method),
     .noargs = phase_enter},
    {.name = "__exit__",
     .doc = "Ends the phase; an exception marks its slice failed and goes on.",
     .offset = offsetof(PhaseObject, exit_method),
     .fastcall = phase_exit},
    {.name = nullptr, .doc = nullptr, .offset = 0}};

PyMethodDef g_phase_methods[] = {
    {"end", phase_end_method, METH_NOARGS, "Ends the phase (idempotent), on its thread."},
    {nullptr, nullptr, 0, nullptr}};

PyGetSetDef g_phase_getset[] = {
    {"is_open", phase_get_open, nullptr, "Begun and not yet ended.", nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr}};

}  // namespace

PyTypeObject g_unit_type = {PyVarObject_HEAD_INIT(nullptr, 0)};

bool compile_id_of(PyObject* unit, const char* what, jitscope::CompileId* out) {
  if (PyObject_TypeCheck(unit, &g_unit_type)) {
    const jitscope::CompileUnit* u = last_compile_unit(unit);
    if (u == nullptr) {
      PyErr_Format(PyExc_ValueError, "%s: that compile_unit never opened", what);
      return false;
    }
    *out = u->id();
    return true;
  }
  if (!PyUnicode_Check(unit)) {
    PyErr_Format(PyExc_TypeError, "%s takes a compile_unit or a compile id, not %.100s", what,
                 Py_TYPE(unit)->tp_name);
    return false;
  }
  std::string scratch;
  std::string_view text = utf8_of(unit, scratch);
  if (text.size() >= 2 && text.front() == '[' && text.back() == ']') {
    text = text.substr(1, text.size() - 2);
  }
  const std::size_t slash = text.find('/');
  const auto number = [](std::string_view t, std::uint32_t* v) {
    const auto [ptr, ec] = std::from_chars(t.data(), t.data() + t.size(), *v);
    return !t.empty() && ec == std::errc() && ptr == t.data() + t.size();
  };
  if (slash == std::string_view::npos || !number(text.substr(0, slash), &out->frame) ||
      !number(text.substr(slash + 1), &out->attempt)) {
    PyErr_Format(PyExc_ValueError, "%s: %R is not a compile id like \"3/0\"", what, unit);
    return false;
  }
  return true;
}

const jitscope::CompileUnit* last_compile_unit(PyObject* unit) noexcept {
  return as_unit(unit)->unit;
}
PyTypeObject g_phase_type = {PyVarObject_HEAD_INIT(nullptr, 0)};

bool init_compile_types() noexcept {
  set_slots(g_unit_type,
            {.name = "jitscope.compile_unit",
             .size = sizeof(UnitObject),
             .doc = PyDoc_STR(
                 "compile_unit(frame=None, *, graph=None, key=None, is_forward=True, "
                 "recompile_reason=None)\n\n"
                 "One compilation (CompileUnit): `with jitscope.compile_unit(frame=\"kernel\") as "
                 "u:`, or\nby handle: `u = jitscope.compile_unit(...).open(); ...; u.close()`. "
                 "Compiling a frame\nagain is a recompile (the next attempt). An exception leaving "
                 "it marks it failed."),
             .dealloc = unit_dealloc,
             .methods = g_unit_methods,
             .getset = g_unit_getset,
             .make = unit_new});
  set_slots(
      g_phase_type,
      {.name = "jitscope.phase",
       .size = sizeof(PhaseObject),
       .doc = PyDoc_STR("phase(key, *, column=None, exclusive=False, compile_event=False)\n\n"
                        "A timed phase (dynamo_timed): `with jitscope.phase(\"lower\", "
                        "column=\"lower_us\"):`;\nits time goes to `column` of the current unit's "
                        "record. By handle:\n`p = jitscope.begin_phase(\"lower\"); ...; p.end()`."),
       .dealloc = phase_dealloc,
       .methods = g_phase_methods,
       .getset = g_phase_getset,
       .make = phase_new});
  PyTypeObject& u = g_unit_type;
  PyTypeObject& p = g_phase_type;
  u.tp_vectorcall = unit_vectorcall;
  p.tp_vectorcall = phase_vectorcall;
  const char* keywords[5] = {"frame", "graph", "key", "is_forward", "recompile_reason"};
  for (int i = 0; i < 5; ++i) {  // anew at every init: an embedding host may restart Python
    g_unit_keywords[i] = PyUnicode_InternFromString(keywords[i]);
    if (g_unit_keywords[i] == nullptr) return false;
  }
  return PyType_Ready(&u) == 0 && PyType_Ready(&p) == 0 &&
         add_inline_methods(u, g_unit_with_methods) && add_inline_methods(p, g_phase_with_methods);
}

}  // namespace jitscope::python
