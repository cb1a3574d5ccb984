// The host boundary: the one place where the SDK's "never throw into the
// host" rule is kept. Every cold-path body that can throw (it allocates,
// calls a host hook, formats a message) and is reached from the host runs
// through one of these; no SDK function lets an exception out.
//
//   if (!guarded("opening a compile unit", [&] { ... })) { undo(); }
//   return guarded_status("adding a metric", [&] { ...; return Status(); });
//
// An exception becomes:
// - guarded: one deduplicated `jitscope: <what> failed: <reason>` line and
//   false (true when the body ran to its end); a third argument may wrap the
//   saying of that line;
// - guarded_status: a failed Status, "<what> failed: <reason>", returned to
//   the caller, who decides whether to log it;
// - guarded_quiet: false, and nothing said. Only where a comment at the call
//   says why silence is right (a log line would itself be the harm).
// <reason> is "out of memory" for std::bad_alloc, what() for another
// std::exception, "unknown exception" otherwise.
//
// The bodies are inline lambdas: the happy path costs what the body costs;
// the catch side is one out-of-line cold call.
#pragma once

#include <jitscope/jitscope.hpp>

#include <string>
#include <string_view>
#include <utility>

namespace jitscope::detail {

// The exception being handled, in words (see above). Only inside a catch.
[[gnu::cold]] std::string current_exception_reason() noexcept;
// The line and the Status, for the exception being handled.
[[gnu::cold]] void report_current_exception(std::string_view what) noexcept;
[[gnu::cold]] Status current_exception_status(std::string_view what) noexcept;

template <class Body>
bool guarded(std::string_view what, Body&& body) noexcept {
  try {
    std::forward<Body>(body)();
    return true;
  } catch (...) {
    report_current_exception(what);
    return false;
  }
}

// guarded, with the line said through `around`, a noexcept callable that
// gets the saying as a callable and runs it once (the step log clears its
// progress bar around it, so the line does not land inside the bar).
template <class Body, class Around>
bool guarded(std::string_view what, Body&& body, Around&& around) noexcept {
  try {
    std::forward<Body>(body)();
    return true;
  } catch (...) {
    around([what]() noexcept { report_current_exception(what); });
    return false;
  }
}

template <class Body>
Status guarded_status(std::string_view what, Body&& body) noexcept {
  try {
    return std::forward<Body>(body)();
  } catch (...) {
    return current_exception_status(what);
  }
}

template <class Body>
bool guarded_quiet(Body&& body) noexcept {
  try {
    std::forward<Body>(body)();
    return true;
  } catch (...) {
    return false;
  }
}

}  // namespace jitscope::detail
