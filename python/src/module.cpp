// The jitscope._jitscope extension module: sessions, spans, instants,
// counters, compile units, phases and the compile tables, over the shared
// library (libjitscope.so), so that C++ extensions in the same process share
// the session, the rings and the current compile unit. The package
// (python/jitscope/__init__.py) is the public face.
#include "args.hpp"
#include "autotune.hpp"
#include "compile_types.hpp"
#include "config.hpp"
#include "decorated.hpp"
#include "span.hpp"
#include "text.hpp"
#include "unit_scopes.hpp"

#include <jitscope/compile.hpp>
#include <jitscope/jitscope.hpp>
#include <jitscope/version.hpp>

#include <deque>
#include <string>
#include <vector>

namespace jitscope::python {
namespace {

using Fast = PyObject* (*)(PyObject*, PyObject* const*, Py_ssize_t);
using FastKw = PyObject* (*)(PyObject*, PyObject* const*, Py_ssize_t, PyObject*);
PyCFunction fast(Fast f) { return reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(f)); }
PyCFunction fast_kw(FastKw f) {
  return reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(f));
}

// start(path=None, /, **config) -> bool. Without a path, the JITSCOPE_*
// variables' config (JITSCOPE_TRACE required) and then **config.
PyObject* py_start(PyObject*, PyObject* args, PyObject* kwargs) {
  PyObject* path = nullptr;
  if (!PyArg_UnpackTuple(args, "start", 0, 1, &path)) return nullptr;
  jitscope::Config config;
  if (path == nullptr || path == Py_None) {
    if (Status st = jitscope::Config::from_env(&config); !st) {
      PyErr_Format(PyExc_ValueError, "jitscope.start: no path given, and %s", st.message().c_str());
      return nullptr;
    }
  } else {
    PyObject* fs = PyOS_FSPath(path);  // str or os.PathLike
    if (fs == nullptr) return nullptr;
    if (!PyUnicode_Check(fs)) {
      Py_DECREF(fs);
      PyErr_SetString(PyExc_TypeError,
                      "jitscope.start: the path must be a str or os.PathLike of str");
      return nullptr;
    }
    std::string scratch;
    config.output_path = std::string(utf8_of(fs, scratch));
    Py_DECREF(fs);
  }
  if (!apply_config(kwargs, config)) return nullptr;
  if (Status st = config.validate(); !st) {
    PyErr_Format(PyExc_ValueError, "jitscope.start: %s", st.message().c_str());
    return nullptr;
  }
  Status st;
  Py_BEGIN_ALLOW_THREADS  // opens files: other Python threads go on
      st = jitscope::start(config);
  Py_END_ALLOW_THREADS return PyBool_FromLong(st.ok());  // a refusal said its own `jitscope:` line
}

int put(PyObject* d, const char* key, PyObject* value) {
  if (value == nullptr) return -1;
  const int rc = PyDict_SetItemString(d, key, value);
  Py_DECREF(value);
  return rc;
}

PyObject* stats_dict(const jitscope::SessionStats& s) {
  PyObject* d = PyDict_New();
  if (d == nullptr) return nullptr;
  const auto u = [](std::uint64_t v) { return PyLong_FromUnsignedLongLong(v); };
  const auto str = [](const std::string& v) {
    return PyUnicode_DecodeUTF8(v.data(), static_cast<Py_ssize_t>(v.size()), "replace");
  };
  if (put(d, "output_path", str(s.output_path)) < 0 ||
      put(d, "metrics_path", str(s.metrics_path)) < 0 ||
      put(d, "events_written", u(s.events_written)) < 0 ||
      put(d, "events_dropped", u(s.events_dropped)) < 0 ||
      put(d, "spans_incomplete", u(s.spans_incomplete)) < 0 ||
      put(d, "spans_ended_out_of_order", u(s.spans_ended_out_of_order)) < 0 ||
      put(d, "threads", u(s.threads)) < 0 || put(d, "bytes_written", u(s.bytes_written)) < 0 ||
      put(d, "compile_records_written", u(s.compile_records_written)) < 0 ||
      put(d, "compile_records_dropped", u(s.compile_records_dropped)) < 0 ||
      put(d, "nvtx_captured", u(s.nvtx_captured)) < 0 ||
      put(d, "cupti_on", PyBool_FromLong(s.cupti_on)) < 0 ||
      put(d, "gpu_events", u(s.gpu_events)) < 0 ||
      put(d, "write_failed", PyBool_FromLong(s.write_failed)) < 0 ||
      put(d, "events_over_cap", u(s.events_over_cap)) < 0 ||
      put(d, "trace_files", u(s.trace_files)) < 0 ||
      put(d, "artifacts_written", u(s.artifacts_written)) < 0 ||
      put(d, "snapshots_written", u(s.snapshots_written)) < 0 ||
      put(d, "snapshots_refused", u(s.snapshots_refused)) < 0) {
    Py_DECREF(d);
    return nullptr;
  }
  return d;
}

// stop() -> dict of the session's stats, or None without a session.
PyObject* py_stop(PyObject*, PyObject*) {
  if (!jitscope::active()) Py_RETURN_NONE;
  jitscope::SessionStats stats;
  Status st;
  Py_BEGIN_ALLOW_THREADS  // drains and writes: the flusher never needs the GIL
      st = jitscope::stop(&stats);
  Py_END_ALLOW_THREADS if (!st.ok() && stats.output_path.empty()) Py_RETURN_NONE;
  return stats_dict(stats);
}

PyObject* py_active(PyObject*, PyObject*) { return PyBool_FromLong(jitscope::active()); }

// instant(name, /, **args)
PyObject* py_instant(PyObject*, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  if (nargs != 1 || !PyUnicode_Check(args[0])) {
    PyErr_SetString(PyExc_TypeError, "jitscope.instant(name: str, /, **args)");
    return nullptr;
  }
  const std::uint32_t s = detail::session_word();
  if (s == 0) Py_RETURN_NONE;
  name_thread_once();
  try {
    std::vector<jitscope::Arg> list;
    std::deque<std::string> scratch;
    const Py_ssize_t n = kwnames != nullptr ? PyTuple_GET_SIZE(kwnames) : 0;
    for (Py_ssize_t i = 0; i < n; ++i) {
      jitscope::Arg a("", false);
      if (to_arg(PyTuple_GET_ITEM(kwnames, i), args[nargs + i], a, scratch.emplace_back())) {
        list.push_back(a);
      }
    }
    const char* literal = interned(args[0]);
    std::string name_scratch;
    detail::instant(s, detail::read_clock(s), literal,
                    literal != nullptr ? std::string_view() : utf8_of(args[0], name_scratch),
                    list.data(), list.size());
  } catch (...) {
    // Out of memory: the instant is lost, nothing raised.
  }
  Py_RETURN_NONE;
}

// counter(name, value)
PyObject* py_counter(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 2 || !PyUnicode_Check(args[0]) ||
      !(PyFloat_Check(args[1]) || PyLong_Check(args[1]))) {
    PyErr_SetString(PyExc_TypeError, "jitscope.counter(name: str, value: int | float)");
    return nullptr;
  }
  const double value =
      PyFloat_Check(args[1]) ? PyFloat_AS_DOUBLE(args[1]) : PyLong_AsDouble(args[1]);
  if (value == -1.0 && PyErr_Occurred()) return nullptr;  // OverflowError: a wrong argument
  const std::uint32_t s = detail::session_word();
  if (s == 0) Py_RETURN_NONE;
  name_thread_once();
  const char* literal = interned(args[0]);
  std::string scratch;
  detail::counter(s, detail::read_clock(s), literal,
                  literal != nullptr ? std::string_view() : utf8_of(args[0], scratch), value);
  Py_RETURN_NONE;
}

PyObject* py_set_thread_name(PyObject*, PyObject* arg) {
  if (!PyUnicode_Check(arg)) {
    PyErr_SetString(PyExc_TypeError, "jitscope.set_thread_name(name: str)");
    return nullptr;
  }
  std::string scratch;
  jitscope::set_thread_name(utf8_of(arg, scratch));
  Py_RETURN_NONE;
}

PyObject* text_result(const std::string& s) {
  return PyUnicode_DecodeUTF8(s.data(), static_cast<Py_ssize_t>(s.size()), "replace");
}

// compile_times(csv=False, aggregate=False) -> str
PyObject* py_compile_times(PyObject*, PyObject* args, PyObject* kwargs) {
  static const char* names[] = {"csv", "aggregate", nullptr};
  int csv = 0, aggregate = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|pp:compile_times", const_cast<char**>(names),
                                   &csv, &aggregate)) {
    return nullptr;
  }
  try {
    return text_result(
        jitscope::compile_times(csv ? TableFormat::kCsv : TableFormat::kText, aggregate != 0));
  } catch (...) {
    return PyErr_NoMemory();
  }
}

PyObject* py_cumulative_time_report(PyObject*, PyObject* args, PyObject* kwargs) {
  static const char* names[] = {"csv", nullptr};
  int csv = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|p:cumulative_time_report",
                                   const_cast<char**>(names), &csv)) {
    return nullptr;
  }
  try {
    return text_result(
        jitscope::cumulative_time_report(csv ? TableFormat::kCsv : TableFormat::kText));
  } catch (...) {
    return PyErr_NoMemory();
  }
}

// phase_times() -> [(key, column, count, total_ns, max_ns, self_ns, [durations_ns])]
PyObject* py_phase_times(PyObject*, PyObject*) {
  try {
    const std::vector<jitscope::PhaseTimes> all = jitscope::phase_times();
    PyObject* list = PyList_New(0);
    if (list == nullptr) return nullptr;
    for (const jitscope::PhaseTimes& p : all) {
      PyObject* durations = PyList_New(static_cast<Py_ssize_t>(p.durations_ns.size()));
      if (durations == nullptr) {
        Py_DECREF(list);
        return nullptr;
      }
      for (std::size_t i = 0; i < p.durations_ns.size(); ++i) {
        PyObject* v = PyLong_FromUnsignedLongLong(p.durations_ns[i]);
        if (v == nullptr) {
          Py_DECREF(durations);
          Py_DECREF(list);
          return nullptr;
        }
        PyList_SET_ITEM(durations, static_cast<Py_ssize_t>(i), v);
      }
      PyObject* item = Py_BuildValue(
          "{s:s#,s:s#,s:K,s:K,s:K,s:K,s:K,s:O,s:N}", "key", p.key.data(),
          static_cast<Py_ssize_t>(p.key.size()), "column", p.column.data(),
          static_cast<Py_ssize_t>(p.column.size()), "count", p.count, "total_ns", p.total_ns,
          "max_ns", p.max_ns, "outermost_ns", p.outermost_ns, "self_ns", p.self_ns, "exclusive",
          p.exclusive ? Py_True : Py_False, "durations_ns", durations);
      if (item == nullptr || PyList_Append(list, item) < 0) {
        Py_XDECREF(item);
        Py_DECREF(list);
        return nullptr;
      }
      Py_DECREF(item);
    }
    return list;
  } catch (...) {
    return PyErr_NoMemory();
  }
}

// recent_compile_records() -> [str]: each record's metrics line (JSON).
PyObject* py_recent_compile_records(PyObject*, PyObject*) {
  try {
    const std::vector<jitscope::CompileRecord> records = jitscope::recent_compile_records();
    PyObject* list = PyList_New(0);
    if (list == nullptr) return nullptr;
    for (const jitscope::CompileRecord& r : records) {
      PyObject* line = text_result(r.to_json());
      if (line == nullptr || PyList_Append(list, line) < 0) {
        Py_XDECREF(line);
        Py_DECREF(list);
        return nullptr;
      }
      Py_DECREF(line);
    }
    return list;
  } catch (...) {
    return PyErr_NoMemory();
  }
}

PyObject* py_reset_compile_state(PyObject*, PyObject*) {
  jitscope::reset_compile_state();
  Py_RETURN_NONE;
}

PyObject* py_set_model_name(PyObject*, PyObject* arg) {
  if (!PyUnicode_Check(arg)) {
    PyErr_SetString(PyExc_TypeError, "jitscope.set_model_name(name: str)");
    return nullptr;
  }
  std::string scratch;
  jitscope::set_model_name(utf8_of(arg, scratch));
  Py_RETURN_NONE;
}

// current_compile_id() -> "frame/attempt" of the unit current on this thread, or None.
PyObject* py_current_compile_id(PyObject*, PyObject*) {
  jitscope::CompileId id;
  if (!jitscope::current_compile_id(&id)) Py_RETURN_NONE;
  return PyUnicode_FromFormat("%u/%u", id.frame, id.attempt);
}

// note_child_process(pid, trace_path=None, label="") -> bool
PyObject* py_note_child_process(PyObject*, PyObject* args, PyObject* kwargs) {
  static const char* names[] = {"pid", "trace_path", "label", nullptr};
  int pid = 0;
  PyObject* path_arg = Py_None;
  const char* label = "";
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "i|Os:note_child_process",
                                   const_cast<char**>(names), &pid, &path_arg, &label)) {
    return nullptr;
  }
  PyObject* path = nullptr;  // None: the worker's own file beside the trace
  if (path_arg != Py_None && PyUnicode_FSConverter(path_arg, &path) == 0) return nullptr;
  const Status st =
      jitscope::note_child_process(pid, path != nullptr ? PyBytes_AS_STRING(path) : "", label);
  Py_XDECREF(path);
  if (!st.ok()) say_once("note_child_process: " + st.message());
  return PyBool_FromLong(st.ok());
}

// note_task_sent(key) / note_task_received(sender_pid, key) -> bool: the
// ends of a task's arrow; False without a session (nothing said: a pool
// worker may have none).
PyObject* task_end_result(const Status& st, const char* what) {
  if (!st.ok() && jitscope::active()) say_once(std::string(what) + ": " + st.message());
  return PyBool_FromLong(st.ok());
}

// snapshot(path=None) -> bool: the flight recorder's window written to
// `path` (None: the next numbered snapshot) by the flusher's next cycle;
// False (said once) when refused.
PyObject* py_snapshot(PyObject*, PyObject* args, PyObject* kwargs) {
  static const char* names[] = {"path", nullptr};
  PyObject* path_arg = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|O:snapshot", const_cast<char**>(names),
                                   &path_arg)) {
    return nullptr;
  }
  PyObject* path = nullptr;
  if (path_arg != Py_None && PyUnicode_FSConverter(path_arg, &path) == 0) return nullptr;
  const Status st = jitscope::snapshot(path != nullptr ? PyBytes_AS_STRING(path) : "");
  Py_XDECREF(path);
  if (!st.ok()) say_once(st.message());
  return PyBool_FromLong(st.ok());
}

PyObject* py_mark_ready(PyObject*, PyObject*) {
  jitscope::mark_ready();
  Py_RETURN_NONE;
}

PyObject* py_note_task_sent(PyObject*, PyObject* arg) {
  const unsigned long long key = PyLong_AsUnsignedLongLong(arg);
  if (key == static_cast<unsigned long long>(-1) && PyErr_Occurred()) return nullptr;
  return task_end_result(jitscope::note_task_sent(key), "note_task_sent");
}

PyObject* py_note_task_received(PyObject*, PyObject* args) {
  long long sender = 0;
  unsigned long long key = 0;
  if (!PyArg_ParseTuple(args, "LK:note_task_received", &sender, &key)) return nullptr;
  return task_end_result(jitscope::note_task_received(sender, key), "note_task_received");
}

// worker_trace_path(trace_path, pid) -> str
PyObject* py_worker_trace_path(PyObject*, PyObject* args) {
  PyObject* path = nullptr;
  int pid = 0;
  if (!PyArg_ParseTuple(args, "O&i:worker_trace_path", PyUnicode_FSConverter, &path, &pid)) {
    return nullptr;
  }
  const std::string worker = jitscope::worker_trace_path(PyBytes_AS_STRING(path), pid);
  Py_DECREF(path);
  return PyUnicode_DecodeFSDefaultAndSize(worker.data(), static_cast<Py_ssize_t>(worker.size()));
}

PyObject* py_set_async_hooks(PyObject*, PyObject* args) {
  PyObject* ready = nullptr;
  PyObject* track = nullptr;
  if (!PyArg_UnpackTuple(args, "_set_async_hooks", 2, 2, &ready, &track)) return nullptr;
  Py_INCREF(ready);
  Py_XSETREF(g_async_ready, ready);
  Py_INCREF(track);
  Py_XSETREF(g_async_track, track);
  Py_RETURN_NONE;
}

PyObject* py_set_decorator(PyObject*, PyObject* fn) {
  Py_INCREF(fn);
  Py_XSETREF(g_decorate, fn);
  Py_RETURN_NONE;
}

PyObject* py_config_names(PyObject*, PyObject*) { return config_names(); }

PyMethodDef g_methods[] = {
    {"start", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(py_start)),
     METH_VARARGS | METH_KEYWORDS,
     "start(path=None, /, **config) -> bool: starts a session (False: refused, said on "
     "stderr)."},
    {"stop", py_stop, METH_NOARGS, "stop() -> dict of the session's stats, or None."},
    {"active", py_active, METH_NOARGS, "active() -> bool"},
    {"begin", fast_kw(begin_span), METH_FASTCALL | METH_KEYWORDS,
     "begin(name, /, **args) -> span: begun now; end it with .end()."},
    {"instant", fast_kw(py_instant), METH_FASTCALL | METH_KEYWORDS,
     "instant(name, /, **args): an instant event on this thread."},
    {"counter", fast(py_counter), METH_FASTCALL, "counter(name, value): a counter sample."},
    {"set_thread_name", py_set_thread_name, METH_O,
     "set_thread_name(name): this thread's name in the trace."},
    {"compile_times", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(py_compile_times)),
     METH_VARARGS | METH_KEYWORDS, "compile_times(csv=False, aggregate=False) -> str"},
    {"cumulative_time_report",
     reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(py_cumulative_time_report)),
     METH_VARARGS | METH_KEYWORDS, "cumulative_time_report(csv=False) -> str"},
    {"phase_times", py_phase_times, METH_NOARGS, "phase_times() -> list of dicts"},
    {"recent_compile_records", py_recent_compile_records, METH_NOARGS,
     "recent_compile_records() -> list of metrics lines (JSON text)"},
    {"reset_compile_state", py_reset_compile_state, METH_NOARGS, "reset_compile_state()"},
    {"set_model_name", py_set_model_name, METH_O, "set_model_name(name)"},
    {"current_compile_id", py_current_compile_id, METH_NOARGS,
     "current_compile_id() -> 'frame/attempt' or None"},
    {"note_child_process",
     reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(py_note_child_process)),
     METH_VARARGS | METH_KEYWORDS,
     "note_child_process(pid, trace_path=None, label='') -> bool: lists a worker process; "
     "no path: the worker's own file beside this session's trace."},
    {"note_task_sent", py_note_task_sent, METH_O,
     "note_task_sent(key) -> bool: the start of an arrow to where another process starts "
     "task `key` (note_task_received)."},
    {"snapshot", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(py_snapshot)),
     METH_VARARGS | METH_KEYWORDS,
     "snapshot(path=None) -> bool: a flight recorder's window (start(..., "
     "flight_recorder_bytes=...)) written as a whole trace to `path`, or to the next "
     "trace.snapshot.N.json, by the flusher's next cycle; False (said once) if refused."},
    {"mark_ready", py_mark_ready, METH_NOARGS,
     "mark_ready(): warm-up is over; every compile unit opened from now on, until stop(), is "
     "a compile while serving (one jitscope: line; a flight recorder's snapshot at its end)."},
    {"note_task_received", py_note_task_received, METH_VARARGS,
     "note_task_received(sender_pid, key) -> bool: the end of the arrow from the sender's "
     "note_task_sent(key)."},
    {"worker_trace_path", py_worker_trace_path, METH_VARARGS,
     "worker_trace_path(trace_path, pid) -> str: trace.json -> trace.worker-<pid>.json."},
    {"_set_decorator", py_set_decorator, METH_O, "The package's span decorator factory."},
    {"_set_async_hooks", py_set_async_hooks, METH_VARARGS,
     "_set_async_hooks(ready, task_track): the package's async helpers."},
    {"_decorated", fast(make_decorated), METH_FASTCALL,
     "_decorated(func, name, args): func called inside a span (the decorator's C form)."},
    {"_config_names", py_config_names, METH_NOARGS, "The names start() takes."},
    {nullptr, nullptr, 0, nullptr}};

PyModuleDef g_module = {PyModuleDef_HEAD_INIT, "jitscope._jitscope",
                        "jitscope's extension module (use the jitscope package).", -1, g_methods};

}  // namespace
}  // namespace jitscope::python

PyMODINIT_FUNC PyInit__jitscope() {
  using namespace jitscope::python;
  if (!init_span_type() || !init_compile_types() || !init_unit_scope_type() ||
      !init_decorated_type() || !init_autotune_types()) {
    return nullptr;
  }
  PyObject* m = PyModule_Create(&g_module);
  if (m == nullptr) return nullptr;
  if (PyModule_AddObjectRef(m, "span", reinterpret_cast<PyObject*>(&g_span_type)) < 0 ||
      PyModule_AddObjectRef(m, "compile_unit", reinterpret_cast<PyObject*>(&g_unit_type)) < 0 ||
      PyModule_AddObjectRef(m, "phase", reinterpret_cast<PyObject*>(&g_phase_type)) < 0 ||
      PyModule_AddObjectRef(m, "Autotune", reinterpret_cast<PyObject*>(&g_autotune_type)) < 0 ||
      PyModule_AddStringConstant(m, "__version__", JITSCOPE_VERSION_STRING) < 0) {
    Py_DECREF(m);
    return nullptr;
  }
  return m;
}
