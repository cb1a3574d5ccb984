// A C++ extension module of the kind a Python-driven compiler has (its MLIR
// and LLVM passes), linked to libjitscope.so as the jitscope package is: the
// Python tests call it between their own spans to check that both sides
// share one session, one thread's nesting and the current compile unit.
#include <Python.h>

#include <jitscope/compile.hpp>
#include <jitscope/jitscope.hpp>

namespace {

// run_pass(name, callback) -> compile id seen here ("f/a" or None): a C++
// span and phase around a call back into Python.
PyObject* run_pass(PyObject*, PyObject* args) {
  const char* name = nullptr;
  PyObject* callback = nullptr;
  if (!PyArg_ParseTuple(args, "sO:run_pass", &name, &callback)) return nullptr;
  jitscope::CompileId id;
  const bool has_unit = jitscope::current_compile_id(&id);
  PyObject* result = nullptr;
  {
    jitscope::Span span{std::string_view(name)};
    jitscope::Phase phase("cpp_phase", jitscope::PhaseOptions{.column = "cpp_us"});
    result = PyObject_CallNoArgs(callback);
  }
  if (result == nullptr) return nullptr;
  Py_DECREF(result);
  if (!has_unit) Py_RETURN_NONE;
  return PyUnicode_FromFormat("%u/%u", id.frame, id.attempt);
}

PyMethodDef g_methods[] = {{"run_pass", run_pass, METH_VARARGS, nullptr},
                           {nullptr, nullptr, 0, nullptr}};
PyModuleDef g_module = {PyModuleDef_HEAD_INIT, "nest_ext", nullptr, -1, g_methods};

}  // namespace

PyMODINIT_FUNC PyInit_nest_ext() { return PyModule_Create(&g_module); }
