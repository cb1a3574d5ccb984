#include "base/boundary.hpp"

#include "base/log.hpp"

#include <exception>
#include <new>

namespace jitscope::detail {

std::string current_exception_reason() noexcept {
  try {
    try {
      throw;
    } catch (const std::bad_alloc&) {
      return "out of memory";
    } catch (const std::exception& e) {
      return e.what();
    } catch (...) {
      return "unknown exception";
    }
  } catch (...) {
    return {};  // copying what() ran out of memory: say less
  }
}

void report_current_exception(std::string_view what) noexcept {
  try {
    log_unique(std::string(what) + " failed: " + current_exception_reason());
  } catch (...) {
    log_unique("out of memory");  // the message itself did not fit
  }
}

Status current_exception_status(std::string_view what) noexcept {
  try {
    return Status::error(std::string(what) + " failed: " + current_exception_reason());
  } catch (...) {
    return Status::error("out of memory");
  }
}

}  // namespace jitscope::detail
