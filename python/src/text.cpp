#include "text.hpp"

#include <unistd.h>

#include <cerrno>
#include <deque>
#include <mutex>
#include <set>

namespace jitscope::python {
namespace {

// str -> its interned copy's address (a PyLong), kept by the module forever.
PyObject* g_interned = nullptr;
std::size_t g_interned_bytes = 0;

std::deque<std::string>& storage() {
  static auto* s = new std::deque<std::string>;  // never freed: read after finalization
  return *s;
}

}  // namespace

std::string_view utf8_of(PyObject* s, std::string& scratch) noexcept {
  if (PyUnicode_Check(s)) {
    Py_ssize_t n = 0;
    if (const char* text = PyUnicode_AsUTF8AndSize(s, &n)) {
      return {text, static_cast<std::size_t>(n)};
    }
    PyErr_Clear();  // lone surrogates: escaped below
    PyObject* bytes = PyUnicode_AsEncodedString(s, "utf-8", "backslashreplace");
    if (bytes == nullptr) {
      PyErr_Clear();
      scratch = "<unprintable>";
      return scratch;
    }
    scratch.assign(PyBytes_AS_STRING(bytes), static_cast<std::size_t>(PyBytes_GET_SIZE(bytes)));
    Py_DECREF(bytes);
    return scratch;
  }
  PyObject* str = PyObject_Str(s);
  if (str == nullptr) {
    PyErr_Clear();
    scratch = "<unprintable>";
    return scratch;
  }
  std::string inner;
  const std::string_view text = utf8_of(str, inner);
  scratch.assign(text.data(), text.size());
  Py_DECREF(str);
  return scratch;
}

const char* interned(PyObject* s) noexcept {
  if (!PyUnicode_CheckExact(s)) return nullptr;
  if (g_interned == nullptr) {
    g_interned = PyDict_New();
    if (g_interned == nullptr) {
      PyErr_Clear();
      return nullptr;
    }
  }
  if (PyObject* hit = PyDict_GetItemWithError(g_interned, s)) {
    return static_cast<const char*>(PyLong_AsVoidPtr(hit));
  }
  if (PyErr_Occurred()) {  // an unhashable str cannot be: a failed hash (out of memory)
    PyErr_Clear();
    return nullptr;
  }
  std::string scratch;
  const std::string_view text = utf8_of(s, scratch);
  if (static_cast<std::size_t>(PyDict_GET_SIZE(g_interned)) >= kMaxInterned ||
      g_interned_bytes + text.size() + 1 > kMaxInternedBytes) {
    return nullptr;
  }
  try {
    const char* copy = storage().emplace_back(text).c_str();
    PyObject* address = PyLong_FromVoidPtr(const_cast<char*>(copy));
    if (address == nullptr || PyDict_SetItem(g_interned, s, address) < 0) {
      Py_XDECREF(address);
      PyErr_Clear();
      return copy;  // used once, interned next time (the copy stays: never freed)
    }
    Py_DECREF(address);
    g_interned_bytes += text.size() + 1;
    return copy;
  } catch (...) {
    return nullptr;
  }
}

void say_once(const std::string& text) noexcept {
  try {
    static std::mutex mutex;
    static auto* said = new std::set<std::string>;  // never freed: may be used at exit
    {
      std::lock_guard<std::mutex> lock(mutex);
      if (said->size() >= 1024 || !said->insert(text).second) return;
    }
    const std::string line = "jitscope: " + text + "\n";
    const int saved = errno;
    for (std::size_t off = 0; off < line.size();) {
      const ssize_t w = ::write(STDERR_FILENO, line.data() + off, line.size() - off);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) break;
      off += static_cast<std::size_t>(w);
    }
    errno = saved;
  } catch (...) {
    // Out of memory building the line: nothing said.
  }
}

}  // namespace jitscope::python
