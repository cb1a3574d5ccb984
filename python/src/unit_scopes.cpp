#include "unit_scopes.hpp"

#include "compile_types.hpp"
#include "text.hpp"
#include "type_slots.hpp"

#include <jitscope/compile.hpp>

#include <pythread.h>

#include <new>

namespace jitscope::python {
namespace {

struct UnitScopeObject {
  PyObject_HEAD PyObject* unit;  // the jitscope.compile_unit (a strong ref)
  UnitScopeKind kind;
  // While entered: the entering thread, its nesting depth, and the C++
  // scope (nullptr when there was nothing to scope), on the heap.
  unsigned long owner;
  int depth;
  jitscope::LoadScope* loading;
  jitscope::ThreadAttachment* attachment;
};

UnitScopeObject* as_scope(PyObject* o) { return reinterpret_cast<UnitScopeObject*>(o); }

std::string call_name(const UnitScopeObject* self) {
  return self->kind == UnitScopeKind::kLoading ? "unit.loading()" : "unit.attach()";
}

// Both end on any thread without harm: a LoadScope elsewhere ends at its
// own thread's next load, a ThreadAttachment elsewhere is kept attached
// (each says so once).
void end_scopes(UnitScopeObject* self) {
  delete self->loading;
  self->loading = nullptr;
  delete self->attachment;
  self->attachment = nullptr;
}

void begin_scopes(UnitScopeObject* self) {
  const jitscope::CompileUnit* unit = last_compile_unit(self->unit);
  if (self->kind == UnitScopeKind::kLoading) {
    if (unit == nullptr) return;  // never opened: nothing to credit
    self->loading = new (std::nothrow) jitscope::LoadScope(unit->ref());
    if (self->loading == nullptr) say_once("unit.loading(): out of memory (not credited)");
    return;
  }
  if (unit == nullptr || !unit->is_open()) {
    say_once("unit.attach(): the unit is not open: nothing is attached (attach while it is open)");
    return;
  }
  self->attachment = new (std::nothrow) jitscope::ThreadAttachment(attach_thread(unit->ref()));
  if (self->attachment == nullptr) say_once("unit.attach(): out of memory (not attached)");
}

PyObject* scope_enter(PyObject* obj, PyObject*) {
  UnitScopeObject* self = as_scope(obj);
  const unsigned long me = PyThread_get_thread_ident();
  if (self->depth == 0) {
    self->owner = me;
    self->depth = 1;
    begin_scopes(self);
  } else if (self->owner == me) {
    ++self->depth;  // nested on its thread: the outermost one scopes
  } else {
    say_once(call_name(self) + " entered on another thread while entered: ignored there");
  }
  Py_INCREF(obj);
  return obj;
}

PyObject* scope_exit(PyObject* obj, PyObject* const*, Py_ssize_t) {
  UnitScopeObject* self = as_scope(obj);
  // Another thread's exit matches an enter that was ignored.
  if (self->depth > 0 && self->owner == PyThread_get_thread_ident() && --self->depth == 0) {
    end_scopes(self);
  }
  Py_RETURN_FALSE;
}

void scope_dealloc(PyObject* obj) {
  UnitScopeObject* self = as_scope(obj);
  end_scopes(self);
  Py_XDECREF(self->unit);
  Py_TYPE(obj)->tp_free(obj);
}

PyMethodDef g_scope_methods[] = {
    {"__enter__", scope_enter, METH_NOARGS, "Begins the scope on this thread."},
    {"__exit__", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(scope_exit)),
     METH_FASTCALL, "Ends the scope (on the thread that began it)."},
    {nullptr, nullptr, 0, nullptr}};

}  // namespace

PyTypeObject g_unit_scope_type = {PyVarObject_HEAD_INIT(nullptr, 0)};

PyObject* make_unit_scope(PyObject* unit, UnitScopeKind kind) noexcept {
  auto* self = as_scope(g_unit_scope_type.tp_alloc(&g_unit_scope_type, 0));
  if (self == nullptr) return nullptr;
  Py_INCREF(unit);
  self->unit = unit;
  self->kind = kind;
  return reinterpret_cast<PyObject*>(self);
}

bool init_unit_scope_type() noexcept {
  set_slots(
      g_unit_scope_type,
      {.name = "jitscope.unit_scope",
       .size = sizeof(UnitScopeObject),
       .doc = PyDoc_STR("What unit.loading() and unit.attach() return: a context manager for one "
                        "thread.\n\n"
                        "loading(): the CUDA modules and libraries this thread loads inside are "
                        "credited to the unit,\nopen or closed (their kernels' compiled_by). "
                        "attach(): the unit, open on another thread,\nis current on this one."),
       .dealloc = scope_dealloc,
       .methods = g_scope_methods});
  return PyType_Ready(&g_unit_scope_type) == 0;
}

}  // namespace jitscope::python
