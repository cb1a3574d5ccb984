// Which of the trace's two forms a session writes. Header-only: the
// config's checks use it too (and the config fuzzer links no writer).
#pragma once

#include <jitscope/jitscope.hpp>

#include <string_view>

namespace jitscope::detail {

// TraceFormat::kAuto: a path ending in ".pftrace" is the protobuf form.
inline bool is_perfetto_path(std::string_view path) {
  constexpr std::string_view kExtension = ".pftrace";
  return path.size() > kExtension.size() &&
         path.substr(path.size() - kExtension.size()) == kExtension;
}

// The session writes the protobuf form (explicitly, or by a .pftrace path).
inline bool writes_perfetto(const Config& cfg) {
  return cfg.format == TraceFormat::kPerfetto ||
         (cfg.format == TraceFormat::kAuto && is_perfetto_path(cfg.output_path));
}

}  // namespace jitscope::detail
