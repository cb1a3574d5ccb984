// The trace writer's output interface (format/trace_writer.hpp writes to
// one): sink/file_sink.hpp writes a file, sink/compressing_sink.hpp
// compresses on the way to another sink.
#pragma once

#include <string_view>

namespace jitscope::detail {

// Where the JSON goes. write() gets whole events only. A sink whose write
// fails keeps whole events only (it cuts its output back to the last one)
// and discards later writes, but for one try of the closing part.
class TraceSink {
 public:
  virtual ~TraceSink() = default;
  virtual void write(std::string_view bytes) noexcept = 0;
  // The trace's closing part (the last counter, the stats, "]"): written
  // like any other, and tried once more after a failure, in case it fits
  // where the cut event did not.
  virtual void write_closing(std::string_view bytes) noexcept { write(bytes); }
  // Whether a write failed: the output lacks events from then on.
  virtual bool failed() const noexcept { return false; }
  // Whether next_file() may be called (SessionInfo::rotate_bytes).
  virtual bool can_rotate() const noexcept { return false; }
  // Ends the file being written (all its bytes were written) and starts the
  // next one. false: there is none; the sink has said why and discards the rest.
  virtual bool next_file() noexcept { return false; }
  // The output, for messages ("" if it has no name).
  virtual std::string_view name() const noexcept { return {}; }
};

}  // namespace jitscope::detail
