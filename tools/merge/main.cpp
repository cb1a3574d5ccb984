// jitscope-merge: several processes' or machines' traces as one timeline.
//
//   jitscope-merge -o merged.json parent.json worker-0.json worker-1.json
//   jitscope-merge -o merged.json --children parent.json   # + the workers it lists
//
// Each input keeps its own processes apart (pids namespaced per input), its
// own flow arrows (ids renumbered per input), its place in time (clocks
// lined up from each trace's session metadata; merge_plan.hpp has the rules)
// and a label on every process name: "[host H, rank R, pid P]". An input
// whose clock cannot be placed is refused, rather than drawn at the wrong
// time. A regular output file is written to a temporary file and renamed into
// place, so a failed merge never leaves a half-written trace behind; a device
// or FIFO (/dev/null, a pipe to a viewer) is written in place, never replaced;
// a symbolic link is followed (its target gets the merge, the link stays); a
// directory is refused, and so is an input (by device and inode: another
// path, a hard link or a symbolic link to it). A listed child that is not a
// regular file (a FIFO) is skipped unopened (input_file.hpp).
//
// Inputs may be gzip'd (.json.gz, known by their magic bytes; the reader
// inflates them as a stream) or Perfetto protobuf (.pftrace, known by their
// first bytes; read as the JSON form's events, so pids and flow ids are
// kept apart the same way); the output is plain JSON.
//
// Exit: 0 merged; 1 an input or the output failed (one `jitscope-merge:
// error:` line); 2 usage.
#include "event_rewriter.hpp"
#include "merge_plan.hpp"
#include "output_file.hpp"
#include "trace_reader.hpp"

#include <CLI/CLI.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;
using namespace jitscope::tools;
using namespace jitscope::tools::merge;

constexpr int kFailed = 1;
constexpr int kUsage = 2;
constexpr std::size_t kMaxInputs = 4096;  // a bound on --children recursion too

int fail(const std::string& message) {
  std::fprintf(stderr, "jitscope-merge: error: %s\n", message.c_str());
  return kFailed;
}

// The same file, however it was named (for "given twice"): its device and
// inode (a hard link too), else its canonical path.
std::string identity(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    return std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino);
  }
  std::error_code ec;
  const fs::path p = fs::weakly_canonical(path, ec);
  return ec ? path : p.string();
}

// A child's trace as recorded, found next to its parent when relative.
std::string resolve_child(const std::string& parent, const std::string& child) {
  if (fs::path(child).is_absolute()) return child;
  return (fs::path(parent).parent_path() / child).string();
}

// The merged trace as a JSON array, written through OutputFile (a regular
// file by rename, a device or FIFO in place, a link followed, a directory
// refused).
class Output {
 public:
  bool open(const std::string& path, std::string* error) {
    if (!file_.open(path, error)) return false;
    buf_ = "[\n";
    return true;
  }
  void event(std::string_view json) {
    if (events_++ != 0) buf_.append(",\n");
    buf_.append(json);
  }
  std::string& event_buffer() {
    if (events_++ != 0) buf_.append(",\n");
    return buf_;
  }
  bool maybe_flush(std::string* error) {
    return buf_.size() < (std::size_t{4} << 20) || hand_over(error);
  }
  bool finish(std::string* error) {
    buf_.append("\n]\n");
    return hand_over(error) && file_.commit(error);
  }
  std::uint64_t events() const { return events_; }

 private:
  bool hand_over(std::string* error) {
    const bool ok = file_.write(buf_, error);
    buf_.clear();
    return ok;
  }
  OutputFile file_{"the merge"};
  std::string buf_;
  std::uint64_t events_ = 0;
};

int run(std::vector<std::string> inputs, const std::string& output, bool children,
        const PlanOptions& options, bool quiet) {
  std::set<std::string> seen;
  for (const std::string& in : inputs) {
    struct stat st {};
    if (::stat(in.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
      return fail(in + " is not a regular file (merging reads each input twice)");
    }
    if (same_file(output, in)) return fail(in + " is both an input and the output");
    if (!seen.insert(identity(in)).second) return fail(in + " is given twice");
  }

  // Pass 1: what each input holds. With --children, the traces a parent
  // lists join the inputs right after it (and theirs after them).
  std::vector<InputScan> scans;
  std::vector<std::string> listed_by(inputs.size());  // a child's parent; empty: given by the user
  TraceReader reader;
  std::string error;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    InputScan scan;
    scan.path = inputs[i];
    InputScanner scanner(&scan);
    error.clear();
    const bool ok = reader.read(
        inputs[i], [&](const RawEvent& e) { return scanner.add(e, &error); },
        [&](const TopLevelField& f) { scanner.add_top_level(f); }, &error);
    if (!ok && !listed_by[i].empty()) {
      // A worker that crashed or was killed early leaves no trace, or an
      // empty one: the run worth looking at. Merge the rest, and say so.
      std::fprintf(stderr, "jitscope-merge: warning: skipping %s (listed by %s): %s\n",
                   inputs[i].c_str(), listed_by[i].c_str(),
                   error.empty() ? "cannot read" : error.c_str());
      inputs.erase(inputs.begin() + static_cast<std::ptrdiff_t>(i));
      listed_by.erase(listed_by.begin() + static_cast<std::ptrdiff_t>(i));
      --i;
      continue;
    }
    if (!ok) return fail(error.empty() ? inputs[i] + ": cannot read" : error);
    // What the reader repaired (a BOM, a trailing ',', a cut last event,
    // invalid UTF-8): merged as read, and said once per input.
    for (const std::string& w : repair_warnings(reader.repairs())) {
      std::fprintf(stderr, "jitscope-merge: warning: %s: %s\n", inputs[i].c_str(), w.c_str());
    }
    if (children) {
      std::size_t at = i + 1;
      for (const ChildTrace& c : scan.children) {
        const std::string path = resolve_child(inputs[i], c.trace);
        // A listed path that is not a regular file (a FIFO nobody writes)
        // is skipped below with the reader's error, never opened.
        if (!seen.insert(identity(path)).second) continue;
        if (same_file(output, path)) return fail(path + " is both an input and the output");
        if (inputs.size() >= kMaxInputs) return fail("more than 4096 inputs");
        listed_by.insert(listed_by.begin() + static_cast<std::ptrdiff_t>(at), inputs[i]);
        inputs.insert(inputs.begin() + static_cast<std::ptrdiff_t>(at++), path);
      }
    }
    scans.push_back(std::move(scan));
  }
  if (scans.empty()) return fail("no input could be read");

  MergePlan plan;
  if (!jitscope::tools::merge::plan(scans, options, &plan, &error)) return fail(error);

  // Pass 2: the merged trace.
  Output out;
  if (!out.open(output, &error)) return fail(error);
  out.event(merge_metadata(scans, plan));
  std::int64_t next_flow_id = 1;
  for (std::size_t i = 0; i < scans.size(); ++i) {
    EventRewriter rewriter(scans[i], plan.inputs[i], &next_flow_id);
    for (const std::string& e : rewriter.missing_process_names()) out.event(e);
    const bool ok = reader.read(
        scans[i].path,
        [&](const RawEvent& e) {
          return rewriter.rewrite(e, &out.event_buffer(), &error) && out.maybe_flush(&error);
        },
        nullptr, &error);
    if (!ok) return fail(error.empty() ? scans[i].path + ": cannot read" : error);
    if (reader.events() != scans[i].events) {
      return fail(scans[i].path + ": changed while it was being merged");
    }
  }
  if (!out.finish(&error)) return fail(error);

  if (!quiet) {
    for (std::size_t i = 0; i < scans.size(); ++i) {
      const InputPlan& p = plan.inputs[i];
      std::fprintf(stderr, "jitscope-merge: rank %d: %s: %llu events, %s, shift %+.3f ms\n", p.rank,
                   scans[i].path.c_str(), static_cast<unsigned long long>(scans[i].events),
                   alignment_name(p.alignment), static_cast<double>(p.shift_ns) / 1e6);
    }
    std::fprintf(stderr, "jitscope-merge: wrote %s (%llu events)\n", output.c_str(),
                 static_cast<unsigned long long>(out.events()));
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "Merges Chrome trace-event JSON traces (jitscope's, clang -ftime-trace) from several "
      "processes or machines into one timeline: pids kept apart per input, flow ids renumbered "
      "per input, clocks lined up from each trace's session metadata, processes labelled "
      "[host, rank, pid]. Inputs may be gzip'd (.json.gz, known by their first bytes): they "
      "are inflated as they are read; they may be Perfetto protobuf traces (.pftrace, "
      "JITSCOPE_FORMAT=perfetto), in any mix with JSON; the output is plain JSON.",
      "jitscope-merge"};
  std::vector<std::string> inputs;
  std::string output;
  bool children = false, quiet = false;
  PlanOptions options;
  app.add_option("inputs", inputs,
                 "trace files (JSON or Perfetto protobuf, plain or gzip'd), in rank order")
      ->required()
      ->check(CLI::ExistingFile);
  app.add_option("-o,--output", output,
                 "the merged trace (a regular file is written via a temporary file; a device or "
                 "FIFO in place; a link's target through the link)")
      ->required();
  app.add_flag("--children", children,
               "also merge the worker traces each input lists (jitscope_child metadata, "
               "jitscope::note_child_process), placed right after their parent; one that is "
               "missing or unreadable is skipped with a warning");
  app.add_flag("--assume-same-clock", options.assume_same_clock,
               "merge inputs that carry no clock metadata unshifted, as if on the reference's "
               "clock (only when you know they are: same machine, same boot, CLOCK_MONOTONIC)");
  app.add_flag("-q,--quiet", quiet, "no summary on stderr");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : kUsage;
  }
  try {
    return run(inputs, output, children, options, quiet);
  } catch (const std::bad_alloc&) {
    return fail("out of memory");
  } catch (const std::exception& e) {
    return fail(e.what());
  }
}
