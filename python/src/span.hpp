// jitscope.span: a span as a context manager, a decorator (through the
// package's _decorate) and a handle (begin()/end()).
#pragma once

#include <Python.h>

#include <jitscope/jitscope.hpp>

#include <string>
#include <string_view>

namespace jitscope::python {

extern PyTypeObject g_span_type;

// Ready the type (module init). False with an exception set.
bool init_span_type() noexcept;

// jitscope.begin(name, **args): a span begun now, to end with .end().
PyObject* begin_span(PyObject* module, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames);

// The package's decorator factory, called by span(...)(func):
// _decorate(span, func) -> wrapper. Set once at import (module.cpp).
extern PyObject* g_decorate;

// The package's async hooks, set once at import (module.cpp): `_ready(v)`,
// a coroutine function returning v (the awaitable __aenter__/__aexit__
// return), and `_task_track()`, the running task's track id.
extern PyObject* g_async_ready;
extern PyObject* g_async_track;

// Names the calling thread after threading.current_thread().name, once per
// thread, when a session is on (the first span, phase or unit it begins).
void name_thread_once() noexcept;

// The failed args on an open span: failed, fail_type, fail_reason (the
// record's names; a phase's slice gets the same through its EventRef).
void add_failed_args(jitscope::Span& span, std::string_view type,
                     std::string_view message) noexcept;

// The exception's type and message for the failed args and records:
// "ValueError", "bad shape". Never raises.
void describe_exception(PyObject* type, PyObject* value, std::string* type_name,
                        std::string* message) noexcept;

}  // namespace jitscope::python
