// _tinydsl_backend: the C++ half of samples/python_driver, a Python
// extension module over mlir_gpu's compiler library (kernel_compiler.hpp),
// as Triton's libtriton is the C++ half of its Python driver.
//
//   compile(mlir: str, kernel: str) -> (ptx: str, cubin: bytes)
//   toolchain() -> str            what decides the output besides the source
//
// compile() runs MLIR parse, the MLIR pipeline, translation, LLVM O3, NVPTX
// codegen and nvJitLink, each a jitscope phase of the compile unit that the
// Python driver opened on this thread (one libjitscope.so in the process),
// with a span per MLIR and LLVM pass. It releases the GIL while it works. A
// failing stage raises CompileError(stage, error, log): the Python `with
// jitscope.compile_unit()` around it marks the unit failed with it.
#include <Python.h>

#include "kernel_compiler.hpp"
#include "llvm_backend.hpp"
#include "mlir_lowering.hpp"

#include <llvm/Target/TargetMachine.h>

#include <memory>
#include <mutex>
#include <string>

namespace {

PyObject* g_compile_error = nullptr;  // _tinydsl_backend.CompileError

// One MLIRContext for the process, made on first use and never destroyed:
// compile threads may still be running while the interpreter exits.
mlir_gpu::MlirLowering& lowering() {
  static mlir_gpu::MlirLowering* instance = new mlir_gpu::MlirLowering();
  return *instance;
}

// A TargetMachine per thread: it is not thread-safe.
llvm::TargetMachine* target_machine(std::string* error) {
  thread_local std::unique_ptr<llvm::TargetMachine> tm;
  if (!tm) tm = mlir_gpu::make_target_machine(error);
  return tm.get();
}

PyObject* compile(PyObject*, PyObject* args) {
  const char* mlir = nullptr;
  Py_ssize_t mlir_len = 0;
  const char* kernel = nullptr;
  if (!PyArg_ParseTuple(args, "s#s:compile", &mlir, &mlir_len, &kernel)) return nullptr;
  const std::string source(mlir, static_cast<std::size_t>(mlir_len));
  const std::string name(kernel);
  mlir_gpu::CompiledKernel out;
  std::string tm_error;
  Py_BEGIN_ALLOW_THREADS;
  try {
    llvm::TargetMachine* tm = target_machine(&tm_error);
    if (tm != nullptr) out = mlir_gpu::compile_kernel(lowering(), *tm, source, name);
  } catch (const std::exception& e) {  // out of memory in a string
    tm_error = std::string("exception: ") + e.what();
  }
  Py_END_ALLOW_THREADS;
  if (!tm_error.empty()) {
    out.stage = "target";
    out.error = tm_error;
  }
  if (!out.ok()) {
    PyObject* error = Py_BuildValue("(sss)", out.stage.c_str(), out.error.c_str(), out.log.c_str());
    if (error != nullptr) PyErr_SetObject(g_compile_error, error);
    Py_XDECREF(error);
    return nullptr;
  }
  return Py_BuildValue("(s#y#)", out.ptx.data(), static_cast<Py_ssize_t>(out.ptx.size()),
                       out.cubin.data(), static_cast<Py_ssize_t>(out.cubin.size()));
}

PyObject* toolchain(PyObject*, PyObject*) {
  const std::string description = mlir_gpu::toolchain_description(lowering());
  return PyUnicode_FromStringAndSize(description.data(),
                                     static_cast<Py_ssize_t>(description.size()));
}

PyMethodDef g_methods[] = {
    {"compile", compile, METH_VARARGS,
     "compile(mlir, kernel) -> (ptx, cubin): MLIR text to an sm_90 cubin."},
    {"toolchain", toolchain, METH_NOARGS,
     "toolchain() -> str: LLVM's version and target, the MLIR pipeline, nvJitLink's options."},
    {nullptr, nullptr, 0, nullptr}};

PyModuleDef g_module = {PyModuleDef_HEAD_INIT, "_tinydsl_backend",
                        "The C++ backend of samples/python_driver (MLIR -> cubin).", -1, g_methods};

}  // namespace

PyMODINIT_FUNC PyInit__tinydsl_backend() {
  PyObject* module = PyModule_Create(&g_module);
  if (module == nullptr) return nullptr;
  g_compile_error =
      PyErr_NewExceptionWithDoc("_tinydsl_backend.CompileError",
                                "A stage of the C++ backend failed: args are (stage, error, log).",
                                PyExc_RuntimeError, nullptr);
  // PyModule_AddObject steals a reference (on success only): keep ours.
  Py_XINCREF(g_compile_error);
  if (g_compile_error == nullptr ||
      PyModule_AddObject(module, "CompileError", g_compile_error) < 0) {
    Py_XDECREF(g_compile_error);
    Py_DECREF(module);
    return nullptr;
  }
  return module;
}
