// The trace's and the metrics file's output: whole buffers to a file
// descriptor. The first error is reported once and turns the output off; the
// session goes on discarding.
//
// A full disk (ENOSPC, EFBIG) stops a write part way, inside an event. The
// sink then cuts the file back (ftruncate) to the end of the last whole
// event, or line, that it wrote: it knows where they end from the framing
// (Framing below): a JSON event, a metrics line, a Perfetto packet. The
// trace's closing part gets one more try after that
// (TraceSink::write_closing), and is cut back the same way if it fails too,
// so the file always ends with a whole event or packet: loadable as a cut
// trace.
//
// Rotation (Config::rotate_bytes): the writer closes each file as a whole
// JSON array and asks for the next one, a numbered file beside the first
// (numbered_path: trace.json, trace.1.json, trace.2.json, ...). The first
// file stays open and locked until the session ends, so that the lock on it
// keeps the whole family of names for this session.
#pragma once

#include "sink/framing.hpp"
#include "sink/trace_sink.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace jitscope::detail {

// Opens an output file for a session: created if needed, O_CLOEXEC, and
// locked (flock) before it is emptied, so that two sessions never write one
// file, whether a second jitscope runtime in this process or another process
// (a child that inherited JITSCOPE_TRACE) started them. Non-regular files
// (/dev/null, pipes, ttys) are neither locked nor emptied. -1 and `why` if not.
// `what` goes before the path in `why` ("" or "metrics file ").
//
// With `opened` (a session's trace), a file that holds the head of a trace
// this process wrote before it exec'd itself (its jitscope_session has this
// pid and boot, and this image has not opened the file) is not emptied: the
// session writes exec_path's file beside it instead, and `opened` is the
// path it writes (start() says so). A file this image wrote before (stop()
// then start() on one path) is emptied as any other.
// With `opened` too, a trace whose file's head names a session of an
// ancestor process (running or stopped) goes to worker_trace_path's file.
// With `beside` too (the metrics file of a session whose trace went beside),
// a regular file is kept and exec_path's file opened beside it, whatever it
// holds: the metrics file has no head to tell, and follows its trace.
int open_output(const std::string& path, const char* what, std::string& why,
                std::string* opened = nullptr, bool beside = false);

// open_output in two steps, for a start that opens several files and must
// change nothing on disk unless all of them open: claim_output opens and
// locks (creating the file if missing) and decides the path, without
// emptying anything; commit_output empties the file, the point of no
// return (ftruncate failing after the open and the lock is the one change a
// refused start cannot take back); an OutputFile not taken (take()) is
// released when it goes: closed, and removed if the claim created it.
// `keep_exec_trace` is open_output's `opened != nullptr`.
struct OutputFile {
  int fd = -1;
  std::string path;             // the file claimed: the one asked for, or one beside it
  bool created = false;         // made by the claim: removed on release
  bool must_empty = false;      // a regular file with bytes, emptied by commit_output
  bool noted = false;           // a session's trace: remembered as this image's at commit
  long parent_session_pid = 0;  // a worker's file: this ancestor's session holds `path`

  OutputFile() = default;
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;
  ~OutputFile();
  // The descriptor, now the caller's (nothing is released any more).
  int take() noexcept;
};
bool claim_output(const std::string& path, const char* what, std::string& why, OutputFile& out,
                  bool keep_exec_trace, bool beside = false);
bool commit_output(OutputFile& out, std::string& why);
void release_output(OutputFile& out) noexcept;
inline OutputFile::~OutputFile() { release_output(*this); }

// The file a session of pid `pid` writes instead of `path` when `path` holds
// the trace of the same process before an exec: "." + pid + "." + n before
// the extension (trace.json -> trace.4711.1.json), as numbered_path places it.
std::string exec_path(const std::string& path, long pid, std::uint64_t n);

// jitscope::worker_trace_path: "worker-" + pid before the extension.
std::string worker_trace_path(const std::string& path, long pid);

// The jitscope_session event's "owner" arg: "jitscope session of pid <pid>
// in boot <boot id>", which open_output looks for in a file's head to tell
// a trace this process wrote before an exec, in either form.
std::string session_owner_tag(long pid, std::string_view boot_id);

// The kernel's id for this boot: two traces with the same one share
// CLOCK_MONOTONIC. "" where /proc does not say.
std::string this_boot_id();

// Rotated file `n` of `path`: ".n" before the extension of the last path
// component (trace.json -> trace.1.json, trace -> trace.1, a.b/trace ->
// a.b/trace.1, .trace -> .trace.1). `path` itself for 0.
std::string numbered_path(const std::string& path, std::uint64_t n);

// Writes `parts`, in order, as the whole of `path`: into a temporary file
// beside it (named with this process's pid), then renamed over `path`, so
// that a reader sees the old file or the whole new one. false and `why` if
// not (the temporary file removed).
bool write_whole_file(const std::string& path, const std::vector<std::string_view>& parts,
                      std::string& why);

class FileSink final : public TraceSink {
 public:
  // Where a whole piece of the output ends, for cutting a failed write back.
  using Framing = detail::Framing;
  FileSink(int fd, std::string path, Framing framing = Framing::kTraceEvents)
      : fd_(fd), path_(std::move(path)), framing_(framing) {}
  // With `rotate_bytes` != 0 the writer may ask for numbered files: stale
  // ones of this name from an earlier run (path.1, path.2, ... while they
  // exist, each only if no one holds its lock) are removed now, so that a
  // reader never mixes runs. A non-regular output (/dev/null, a pipe) gets
  // one `jitscope:` line and no rotation. `fd` must be open_output's.
  FileSink(int fd, std::string path, std::uint64_t rotate_bytes,
           Framing framing = Framing::kTraceEvents);
  ~FileSink() override { close(); }

  void write(std::string_view bytes) noexcept override;
  void write_closing(std::string_view bytes) noexcept override;
  bool can_rotate() const noexcept override { return rotating_; }
  bool next_file() noexcept override;
  std::string_view name() const noexcept override { return path_; }
  void close() noexcept;
  bool failed() const noexcept override { return failed_; }
  // In its files, over all of them: a write cut back counts what was kept.
  std::uint64_t bytes() const noexcept { return bytes_; }
  std::uint64_t files() const noexcept { return files_; }  // files opened: 1 without rotation
  // Closes without a word and without flushing (a forked child's copy).
  void abandon() noexcept;

 private:
  // Writes all of `bytes`: 0, or the errno (-1: write returned 0) of a
  // write that failed, after cutting the file back to the last whole piece;
  // `cut_error` is then the errno of a cut that failed too.
  int write_whole(std::string_view bytes, int& cut_error) noexcept;
  void fail(const char* why) noexcept;
  void fail_writing(int error, int cut_error) noexcept;
  int fd_;
  int first_fd_ = -1;  // the first file, kept open (and locked) once rotated away from
  std::string path_;
  std::string current_;  // the file written now; empty: path_
  std::uint64_t bytes_ = 0;
  std::uint64_t files_ = 1;
  Framing framing_ = Framing::kTraceEvents;
  bool rotating_ = false;
  bool failed_ = false;
  bool closing_tried_ = false;  // write_closing's one try after a failure
  bool ends_whole_ = true;      // false: a failed write could not be cut back
};

}  // namespace jitscope::detail
