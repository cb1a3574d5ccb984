// jitscope.Autotune, its trials and steps: <jitscope/autotune.hpp> from
// Python (docs/autotuning.md).
//
//   with jitscope.Autotune("matmul") as tune:
//       t = tune.trial(block=128, warps=4)
//       with t.compile(): build()
//       with t.benchmark(): us = bench()
//       t.result(us)
//       tune.winner(t)
#include "autotune.hpp"

#include "args.hpp"
#include "compile_types.hpp"
#include "type_slots.hpp"

#include <jitscope/autotune.hpp>

#include <cstdio>
#include <new>
#include <string>
#include <vector>

namespace jitscope::python {
namespace {

struct TuneObject {
  PyObject_HEAD jitscope::Autotune* tune;  // nullptr once ended
};
struct TrialObject {
  PyObject_HEAD jitscope::AutotuneTrial trial;
};
struct StepObject {
  PyObject_HEAD jitscope::AutotuneStep* step;  // nullptr once ended
};

TuneObject* as_tune(PyObject* o) { return reinterpret_cast<TuneObject*>(o); }
TrialObject* as_trial(PyObject* o) { return reinterpret_cast<TrialObject*>(o); }
StepObject* as_step(PyObject* o) { return reinterpret_cast<StepObject*>(o); }

PyTypeObject g_trial_type = {PyVarObject_HEAD_INIT(nullptr, 0)};
PyTypeObject g_step_type = {PyVarObject_HEAD_INIT(nullptr, 0)};

// ---- Autotune ----------------------------------------------------------------

PyObject* tune_new(PyTypeObject* type, PyObject* args, PyObject* kwargs) {
  static const char* names[] = {"kernel", nullptr};
  const char* kernel = nullptr;
  Py_ssize_t len = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "s#:Autotune", const_cast<char**>(names), &kernel,
                                   &len)) {
    return nullptr;
  }
  auto* self = as_tune(type->tp_alloc(type, 0));
  if (self == nullptr) return nullptr;
  self->tune = new (std::nothrow)
      jitscope::Autotune(std::string_view(kernel, static_cast<std::size_t>(len)));
  if (self->tune == nullptr) {
    Py_DECREF(self);
    return PyErr_NoMemory();
  }
  return reinterpret_cast<PyObject*>(self);
}

void tune_end(TuneObject* self) {
  delete self->tune;  // writes the session's end
  self->tune = nullptr;
}

void tune_dealloc(PyObject* obj) {
  tune_end(as_tune(obj));
  Py_TYPE(obj)->tp_free(obj);
}

PyObject* new_trial(const jitscope::AutotuneTrial& t) {
  auto* self = as_trial(g_trial_type.tp_alloc(&g_trial_type, 0));
  if (self == nullptr) return nullptr;
  self->trial = t;
  return reinterpret_cast<PyObject*>(self);
}

// tune.trial(**config): the config's parameters as typed args, in order.
PyObject* tune_trial(PyObject* obj, PyObject* args, PyObject* kwargs) {
  TuneObject* self = as_tune(obj);
  if (PyTuple_GET_SIZE(args) != 0) {
    PyErr_SetString(PyExc_TypeError, "Autotune.trial takes the config as keyword arguments");
    return nullptr;
  }
  if (self->tune == nullptr) {
    PyErr_SetString(PyExc_ValueError, "Autotune.trial: the tuning session has ended");
    return nullptr;
  }
  try {
    std::vector<jitscope::Arg> config;
    std::vector<std::string> scratch;
    if (kwargs != nullptr) {
      const Py_ssize_t n = PyDict_Size(kwargs);
      config.reserve(static_cast<std::size_t>(n));
      scratch.resize(static_cast<std::size_t>(n));  // never reallocated: args point into it
      Py_ssize_t pos = 0;
      PyObject *key = nullptr, *value = nullptr;
      std::size_t i = 0;
      while (PyDict_Next(kwargs, &pos, &key, &value)) {
        jitscope::Arg a("k", false);
        if (to_arg(key, value, a, scratch[i++])) config.push_back(a);
      }
    }
    // A value's __str__ (run by to_arg) may have ended the session.
    if (self->tune == nullptr) {
      PyErr_SetString(PyExc_ValueError, "Autotune.trial: the tuning session has ended");
      return nullptr;
    }
    return new_trial(self->tune->trial(std::span<const jitscope::Arg>(config)));
  } catch (...) {
    return PyErr_NoMemory();  // the vectors: nothing else here throws
  }
}

PyObject* tune_winner(PyObject* obj, PyObject* trial) {
  TuneObject* self = as_tune(obj);
  if (!PyObject_TypeCheck(trial, &g_trial_type)) {
    PyErr_Format(PyExc_TypeError, "Autotune.winner takes a trial, not %.100s",
                 Py_TYPE(trial)->tp_name);
    return nullptr;
  }
  if (self->tune != nullptr) self->tune->winner(as_trial(trial)->trial);
  Py_RETURN_NONE;
}

// __enter__ of the session and of a step: the object itself.
PyObject* enter_self(PyObject* obj, PyObject*) {
  Py_INCREF(obj);
  return obj;
}

PyObject* tune_exit(PyObject* obj, PyObject*) {
  tune_end(as_tune(obj));
  Py_RETURN_FALSE;
}

PyObject* tune_end_method(PyObject* obj, PyObject*) {
  tune_end(as_tune(obj));
  Py_RETURN_NONE;
}

PyObject* tune_get_id(PyObject* obj, void*) {
  const TuneObject* self = as_tune(obj);
  return PyLong_FromUnsignedLongLong(self->tune != nullptr ? self->tune->id() : 0);
}

PyObject* tune_get_trials(PyObject* obj, void*) {
  const TuneObject* self = as_tune(obj);
  return PyLong_FromUnsignedLong(self->tune != nullptr ? self->tune->trials() : 0);
}

PyMethodDef g_tune_methods[] = {
    {"trial", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(tune_trial)),
     METH_VARARGS | METH_KEYWORDS,
     "trial(**config): the next trial, of this config (its parameters as typed args)."},
    {"winner", tune_winner, METH_O, "winner(trial): that trial won."},
    {"end", tune_end_method, METH_NOARGS, "Ends the tuning session (idempotent)."},
    {"__enter__", enter_self, METH_NOARGS, "The session itself."},
    {"__exit__", tune_exit, METH_VARARGS, "Ends the session."},
    {nullptr, nullptr, 0, nullptr}};

PyGetSetDef g_tune_getset[] = {
    {"id", tune_get_id, nullptr, "Its process-unique id; 0 when it records nothing.", nullptr},
    {"trials", tune_get_trials, nullptr, "Trials made so far.", nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr}};

// ---- AutotuneTrial -----------------------------------------------------------

PyObject* new_step(jitscope::AutotuneStep&& s) {
  auto* self = as_step(g_step_type.tp_alloc(&g_step_type, 0));
  if (self == nullptr) return nullptr;
  self->step = new (std::nothrow) jitscope::AutotuneStep(std::move(s));
  if (self->step == nullptr) {
    Py_DECREF(self);
    return PyErr_NoMemory();
  }
  return reinterpret_cast<PyObject*>(self);
}

PyObject* trial_compile(PyObject* obj, PyObject*) {
  return new_step(as_trial(obj)->trial.compile());
}
PyObject* trial_benchmark(PyObject* obj, PyObject*) {
  return new_step(as_trial(obj)->trial.benchmark());
}

// compiled_by(unit): a jitscope.compile_unit, or its compile id "3/0".
PyObject* trial_compiled_by(PyObject* obj, PyObject* unit) {
  jitscope::CompileId id;
  if (!compile_id_of(unit, "compiled_by", &id)) return nullptr;
  as_trial(obj)->trial.compiled_by(id);
  Py_RETURN_NONE;
}

PyObject* trial_result(PyObject* obj, PyObject* value) {
  const double v = PyFloat_AsDouble(value);
  if (v == -1.0 && PyErr_Occurred()) return nullptr;
  as_trial(obj)->trial.result(v);
  Py_RETURN_NONE;
}

PyObject* trial_failed(PyObject* obj, PyObject* reason) {
  Py_ssize_t len = 0;
  const char* text = PyUnicode_Check(reason) ? PyUnicode_AsUTF8AndSize(reason, &len) : nullptr;
  if (text == nullptr) {
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "failed(reason): reason must be a str");
    return nullptr;
  }
  as_trial(obj)->trial.failed(std::string_view(text, static_cast<std::size_t>(len)));
  Py_RETURN_NONE;
}

PyObject* trial_get_index(PyObject* obj, void*) {
  return PyLong_FromUnsignedLong(as_trial(obj)->trial.index());
}

void trial_dealloc(PyObject* obj) { Py_TYPE(obj)->tp_free(obj); }

PyMethodDef g_trial_methods[] = {
    {"compile", trial_compile, METH_NOARGS,
     "compile(): a step timing its compile (`with t.compile():`, or .end())."},
    {"benchmark", trial_benchmark, METH_NOARGS, "benchmark(): a step timing its benchmark."},
    {"compiled_by", trial_compiled_by, METH_O,
     "compiled_by(unit): its compile was this compile_unit (or compile id \"3/0\")."},
    {"result", trial_result, METH_O, "result(value): its measured value."},
    {"failed", trial_failed, METH_O, "failed(reason): the config did not build or run."},
    {nullptr, nullptr, 0, nullptr}};

PyGetSetDef g_trial_getset[] = {
    {"index", trial_get_index, nullptr, "Its index in the session, from 0.", nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr}};

// ---- AutotuneStep ------------------------------------------------------------

void step_end(StepObject* self) {
  delete self->step;  // ends it
  self->step = nullptr;
}

void step_dealloc(PyObject* obj) {
  step_end(as_step(obj));
  Py_TYPE(obj)->tp_free(obj);
}

PyObject* step_exit(PyObject* obj, PyObject*) {
  step_end(as_step(obj));
  Py_RETURN_FALSE;
}

PyObject* step_end_method(PyObject* obj, PyObject*) {
  step_end(as_step(obj));
  Py_RETURN_NONE;
}

PyMethodDef g_step_methods[] = {
    {"end", step_end_method, METH_NOARGS, "Ends the step (idempotent)."},
    {"__enter__", enter_self, METH_NOARGS, "The step itself (timing since it was made)."},
    {"__exit__", step_exit, METH_VARARGS, "Ends the step."},
    {nullptr, nullptr, 0, nullptr}};

}  // namespace

PyTypeObject g_autotune_type = {PyVarObject_HEAD_INIT(nullptr, 0)};

bool init_autotune_types() noexcept {
  set_slots(
      g_autotune_type,
      {.name = "jitscope.Autotune",
       .size = sizeof(TuneObject),
       .doc = PyDoc_STR("Autotune(kernel)\n\n"
                        "One tuning session (docs/autotuning.md): `with "
                        "jitscope.Autotune(\"matmul\") as tune:`,\n`t = tune.trial(block=128)`, "
                        "`with t.compile(): ...`, `with t.benchmark(): ...`,\n"
                        "`t.result(us)`, `tune.winner(t)`."),
       .dealloc = tune_dealloc,
       .methods = g_tune_methods,
       .getset = g_tune_getset,
       .make = tune_new});
  set_slots(g_trial_type, {.name = "jitscope.AutotuneTrial",
                           .size = sizeof(TrialObject),
                           .doc = PyDoc_STR("One config of a tuning session (Autotune.trial)."),
                           .dealloc = trial_dealloc,
                           .methods = g_trial_methods,
                           .getset = g_trial_getset});
  set_slots(g_step_type, {.name = "jitscope.AutotuneStep",
                          .size = sizeof(StepObject),
                          .doc = PyDoc_STR("A trial's compile or benchmark, timed until it ends."),
                          .dealloc = step_dealloc,
                          .methods = g_step_methods});
  return PyType_Ready(&g_autotune_type) == 0 && PyType_Ready(&g_trial_type) == 0 &&
         PyType_Ready(&g_step_type) == 0;
}

}  // namespace jitscope::python
