#include "config.hpp"

#include "text.hpp"

#include "base/edit_distance.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>

namespace jitscope::python {
namespace {

// PyErr_Format knows no "%.*s": the message is made here.
void fail(PyObject* type, std::string_view field, const std::string& what) {
  const std::string text = "jitscope.start: " + std::string(field) + " " + what;
  PyErr_SetString(type, text.c_str());
}

std::string type_name(PyObject* value) { return Py_TYPE(value)->tp_name; }

template <class T>
struct Choice {
  std::string_view name;
  T value;
};

bool get_str(PyObject* value, std::string_view field, std::string& out) {
  if (!PyUnicode_Check(value)) {
    fail(PyExc_TypeError, field, "must be a str, not " + type_name(value));
    return false;
  }
  std::string scratch;
  out = std::string(utf8_of(value, scratch));
  return true;
}

bool get_bool(PyObject* value, std::string_view field, bool& out) {
  if (!PyBool_Check(value)) {
    fail(PyExc_TypeError, field, "must be a bool, not " + type_name(value));
    return false;
  }
  out = value == Py_True;
  return true;
}

template <class T>
bool get_int(PyObject* value, std::string_view field, T& out) {
  if (!PyLong_Check(value) || PyBool_Check(value)) {
    fail(PyExc_TypeError, field, "must be an int, not " + type_name(value));
    return false;
  }
  const long long v = PyLong_AsLongLong(value);
  if ((v == -1 && PyErr_Occurred()) || (v < 0 && !std::is_signed_v<T>)) {
    PyErr_Clear();
    fail(PyExc_ValueError, field, "is out of range");
    return false;
  }
  out = static_cast<T>(v);
  return true;
}

template <class T, std::size_t N>
bool get_choice(PyObject* value, std::string_view field, const std::array<Choice<T>, N>& choices,
                T& out) {
  std::string text;
  if (!get_str(value, field, text)) return false;
  std::string known;
  for (const Choice<T>& c : choices) {
    if (c.name == text) {
      out = c.value;
      return true;
    }
    known += (known.empty() ? "" : ", ") + std::string(c.name);
  }
  fail(PyExc_ValueError, field, "must be one of " + known + ", not '" + text + "'");
  return false;
}

constexpr std::array<std::string_view, 30> kNames = {"format",
                                                     "compression",
                                                     "metrics",
                                                     "ring_capacity",
                                                     "overflow",
                                                     "flush_interval_ms",
                                                     "process_name",
                                                     "clock",
                                                     "compile_times",
                                                     "nvtx_emit",
                                                     "nvtx_capture",
                                                     "cupti",
                                                     "cupti_buffer_bytes",
                                                     "cupti_buffers",
                                                     "crash_handler",
                                                     "max_trace_bytes",
                                                     "rotate_bytes",
                                                     "flight_recorder_bytes",
                                                     "max_snapshots",
                                                     "snapshot_min_interval_ms",
                                                     "snapshot_signal",
                                                     "snapshot_slow_unit_ms",
                                                     "snapshot_failed_unit",
                                                     "snapshot_miss_storm",
                                                     "snapshot_miss_storm_window_ms",
                                                     "snapshot_after_ready",
                                                     "artifacts_dir",
                                                     "max_artifact_bytes",
                                                     "parent_pid",
                                                     "metrics_path"};

// A duration field given as an int of milliseconds.
bool get_ms(PyObject* value, std::string_view field, std::chrono::milliseconds& out) {
  std::int64_t ms = 0;
  if (!get_int(value, field, ms)) return false;
  out = std::chrono::milliseconds(ms);
  return true;
}

bool apply_one(std::string_view name, PyObject* v, jitscope::Config& c) {
  using namespace std::string_view_literals;
  if (name == "format") {
    static constexpr std::array<Choice<TraceFormat>, 3> k = {
        {{"auto", TraceFormat::kAuto},
         {"json", TraceFormat::kJson},
         {"perfetto", TraceFormat::kPerfetto}}};
    return get_choice(v, name, k, c.format);
  }
  if (name == "compression") {
    static constexpr std::array<Choice<TraceCompression>, 3> k = {
        {{"none", TraceCompression::kNone},
         {"deflate", TraceCompression::kDeflate},
         {"zstd", TraceCompression::kZstd}}};
    return get_choice(v, name, k, c.compression);
  }
  if (name == "overflow") {
    static constexpr std::array<Choice<OverflowPolicy>, 2> k = {
        {{"drop", OverflowPolicy::kDrop}, {"block", OverflowPolicy::kBlock}}};
    return get_choice(v, name, k, c.overflow);
  }
  if (name == "clock") {
    static constexpr std::array<Choice<ClockChoice>, 3> k = {
        {{"auto", ClockChoice::kAuto},
         {"tsc", ClockChoice::kTsc},
         {"monotonic", ClockChoice::kMonotonic}}};
    return get_choice(v, name, k, c.clock);
  }
  if (name == "compile_times") {
    static constexpr std::array<Choice<CompileTimesReport>, 3> k = {
        {{"off", CompileTimesReport::kOff},
         {"table", CompileTimesReport::kTable},
         {"csv", CompileTimesReport::kCsv}}};
    return get_choice(v, name, k, c.compile_times);
  }
  if (name == "cupti") {
    static constexpr std::array<Choice<CuptiMode>, 3> k = {
        {{"auto", CuptiMode::kAuto}, {"on", CuptiMode::kOn}, {"off", CuptiMode::kOff}}};
    return get_choice(v, name, k, c.cupti);
  }
  if (name == "metrics" || name == "metrics_path") return get_str(v, name, c.metrics_path);
  if (name == "process_name") return get_str(v, name, c.process_name);
  if (name == "artifacts_dir") return get_str(v, name, c.artifacts_dir);
  if (name == "nvtx_emit") return get_bool(v, name, c.nvtx_emit);
  if (name == "nvtx_capture") return get_bool(v, name, c.nvtx_capture);
  if (name == "crash_handler") return get_bool(v, name, c.crash_handler);
  if (name == "ring_capacity") return get_int(v, name, c.ring_capacity);
  if (name == "cupti_buffer_bytes") return get_int(v, name, c.cupti_buffer_bytes);
  if (name == "cupti_buffers") return get_int(v, name, c.cupti_buffers);
  if (name == "max_trace_bytes") return get_int(v, name, c.max_trace_bytes);
  if (name == "rotate_bytes") return get_int(v, name, c.rotate_bytes);
  if (name == "flight_recorder_bytes") return get_int(v, name, c.flight_recorder_bytes);
  if (name == "max_snapshots") return get_int(v, name, c.max_snapshots);
  if (name == "snapshot_signal") return get_int(v, name, c.snapshot_signal);
  if (name == "snapshot_slow_unit_ms") return get_ms(v, name, c.snapshot_slow_unit);
  if (name == "snapshot_failed_unit") return get_bool(v, name, c.snapshot_failed_unit);
  if (name == "snapshot_miss_storm") return get_int(v, name, c.snapshot_miss_storm);
  if (name == "snapshot_miss_storm_window_ms") {
    return get_ms(v, name, c.snapshot_miss_storm_window);
  }
  if (name == "snapshot_after_ready") return get_bool(v, name, c.snapshot_after_ready);
  if (name == "snapshot_min_interval_ms") return get_ms(v, name, c.snapshot_min_interval);
  if (name == "max_artifact_bytes") return get_int(v, name, c.max_artifact_bytes);
  if (name == "parent_pid") return get_int(v, name, c.parent_pid);
  if (name == "flush_interval_ms") return get_ms(v, name, c.flush_interval);
  std::string_view closest;
  std::size_t best = 4;  // at most 3 edits away
  for (std::string_view known : kNames) {
    const std::size_t d = detail::edit_distance(name, known);
    if (d < best) best = d, closest = known;
  }
  const std::string hint =
      closest.empty() ? std::string() : " (did you mean '" + std::string(closest) + "'?)";
  PyErr_SetString(PyExc_TypeError,
                  ("jitscope.start: unknown config '" + std::string(name) + "'" + hint).c_str());
  return false;
}

}  // namespace

bool apply_config(PyObject* kwargs, jitscope::Config& config) noexcept {
  if (kwargs == nullptr) return true;
  PyObject* key = nullptr;
  PyObject* value = nullptr;
  Py_ssize_t pos = 0;
  try {
    while (PyDict_Next(kwargs, &pos, &key, &value)) {
      std::string scratch;
      const std::string_view name = utf8_of(key, scratch);
      // None keeps the field's default, as for an argument left out (a
      // caller passing its own optional settings through); an unknown
      // name is still an error.
      if (value == Py_None && std::find(kNames.begin(), kNames.end(), name) != kNames.end()) {
        continue;
      }
      if (!apply_one(name, value, config)) return false;
    }
  } catch (...) {
    PyErr_NoMemory();
    return false;
  }
  return true;
}

PyObject* config_names() noexcept {
  PyObject* t = PyTuple_New(kNames.size());
  if (t == nullptr) return nullptr;
  for (std::size_t i = 0; i < kNames.size(); ++i) {
    PyObject* s =
        PyUnicode_FromStringAndSize(kNames[i].data(), static_cast<Py_ssize_t>(kNames[i].size()));
    if (s == nullptr) {
      Py_DECREF(t);
      return nullptr;
    }
    PyTuple_SET_ITEM(t, static_cast<Py_ssize_t>(i), s);
  }
  return t;
}

}  // namespace jitscope::python
