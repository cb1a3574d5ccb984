// Python str -> the C strings jitscope's API takes, without ever raising.
//
// Names and arg keys: a span's static name and every arg key are stored by
// pointer in the rings and read later by the flusher, without the GIL, maybe
// after the interpreter has finalized (the session stops in a static
// destructor). So they are copied once into storage that is never freed
// (interned by the str object), bounded; past the bound a name is copied
// per use instead (the SDK's dynamic names) and a key drops its arg.
#pragma once

#include <Python.h>

#include <cstddef>
#include <string>
#include <string_view>

namespace jitscope::python {

// The UTF-8 of `s` (a str), valid while `s` lives: the str's own cache,
// or `scratch` when it holds lone surrogates (written backslash-escaped).
// Never raises; anything but a str gives its str() (or "<unprintable>").
std::string_view utf8_of(PyObject* s, std::string& scratch) noexcept;

// A copy of `s`'s text that lives for the process, NUL-terminated, or
// nullptr past the bound (kMaxInterned names, kMaxInternedBytes bytes).
// Needs the GIL.
const char* interned(PyObject* s) noexcept;

inline constexpr std::size_t kMaxInterned = 16384;
inline constexpr std::size_t kMaxInternedBytes = std::size_t{4} << 20;

// One "jitscope: <text>" line on stderr, once per distinct text.
void say_once(const std::string& text) noexcept;

}  // namespace jitscope::python
