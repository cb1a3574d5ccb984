#include "args.hpp"

#include "text.hpp"

#include <cstdint>
#include <string>

namespace jitscope::python {
namespace {

// An Arg for a key known only at run time (the constructors take literals);
// `key` lives for the process (interned).
jitscope::Arg arg_with_key(const char* key) noexcept {
  jitscope::Arg a("", false);
  a.key = key;
  return a;
}

}  // namespace

bool to_arg(PyObject* key, PyObject* value, jitscope::Arg& a, std::string& scratch) noexcept {
  const char* k = interned(key);
  if (k == nullptr) {
    say_once("an arg key was dropped: more than 16384 distinct names and keys interned");
    return false;
  }
  a = arg_with_key(k);
  if (PyBool_Check(value)) {
    a.type = detail::ValueType::kBool;
    a.b = value == Py_True;
  } else if (PyLong_Check(value)) {
    int overflow = 0;
    const long long v = PyLong_AsLongLongAndOverflow(value, &overflow);
    if (overflow == 0 && !(v == -1 && PyErr_Occurred())) {
      a.type = detail::ValueType::kInt;
      a.i64 = v;
      return true;
    }
    PyErr_Clear();
    const unsigned long long u = overflow > 0 ? PyLong_AsUnsignedLongLong(value) : 0;
    if (overflow > 0 && !PyErr_Occurred()) {
      a.type = detail::ValueType::kUint;
      a.u64 = u;
      return true;
    }
    PyErr_Clear();
    a.type = detail::ValueType::kString;
    a.u64 = 0;
    a.str = utf8_of(value, scratch);  // its digits: beyond 64 bits
  } else if (PyFloat_Check(value)) {
    a.type = detail::ValueType::kDouble;
    a.f64 = PyFloat_AS_DOUBLE(value);
  } else {
    a.type = detail::ValueType::kString;
    a.u64 = 0;
    a.str = utf8_of(value, scratch);
  }
  return true;
}

void add_arg(jitscope::Span& span, PyObject* key, PyObject* value) noexcept {
  if (!span.recording()) return;
  jitscope::Arg a("", false);
  std::string scratch;
  if (to_arg(key, value, a, scratch)) span.arg(a);
}

void add_args(jitscope::Span& span, PyObject* kwargs) noexcept {
  if (kwargs == nullptr || !span.recording()) return;
  PyObject* key = nullptr;
  PyObject* value = nullptr;
  Py_ssize_t pos = 0;
  while (PyDict_Next(kwargs, &pos, &key, &value)) add_arg(span, key, value);
}

void add_args(jitscope::Span& span, PyObject* const* values, PyObject* kwnames) noexcept {
  if (kwnames == nullptr || !span.recording()) return;
  const Py_ssize_t n = PyTuple_GET_SIZE(kwnames);
  for (Py_ssize_t i = 0; i < n; ++i) add_arg(span, PyTuple_GET_ITEM(kwnames, i), values[i]);
}

}  // namespace jitscope::python
