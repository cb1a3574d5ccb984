// jitscope::mlir — an MLIR PassManager in the trace, in one call.
//
// Quickstart (CMake: target_link_libraries(tool PRIVATE jitscope::mlir))
//   #include <jitscope/mlir.hpp>
//
//   ::mlir::PassManager pm(&context);
//   pm.addInstrumentation(jitscope::mlir::make_instrumentation());
//   ...
//   if (failed(pm.run(module))) ...  // every pass run is a span
//
// What is recorded, while a jitscope session is on:
//   - each pass run: a span named by the pass (Pass::getName(): "Canonicalizer",
//     and "mlir::detail::OpToOpPassAdaptor" for the adaptors that run nested
//     pipelines), args "pass" (its argument, "canonicalize"; empty for a
//     pass without one, as the adaptors: jitscope-report's mark of a pass), "op" (the
//     operation's name, "func.func"), "ir_name" (its sym_name, when it has
//     one) and "location" (the op's file:line:col, Options::locations);
//   - a pass that failed (runAfterPassFailed, a verifier failure included):
//     "failed": true on its span, and on the pipeline it was running in,
//     which MLIR then leaves without runAfterPipeline;
//   - each nested pipeline run: a span "pipeline" with args "op" (the anchor,
//     "any" for op-agnostic ones), "parent_pass" (the adaptor that spawned it),
//     "parent_thread" (the spawning thread's id: the trace's tid on Linux) and
//     "threaded" (true when it runs on another thread than its parent);
//   - with Options::analyses, each analysis computed: a span named by the
//     analysis with "analysis": true;
//   - with Options::ir_size, "ir_size_before" and "ir_size_after" on each
//     pass run's span: operations in the op it ran on (IR growth per pass);
//   - with Options::column ("mlir_passes_us"), each top-level pass run on
//     the host's thread inside an exclusive column phase: the current
//     unit's column is the wall time in passes (workers charge nothing).
//
// Threads: with multithreading on (MLIRContext's default), the adaptor's
// pipelines run on the context's thread pool. Their spans land on the worker
// threads, inside a "pipeline" span that names the parent pass and thread.
// When the parent thread had a jitscope CompileUnit current (compile.hpp),
// the worker is attached to that unit for the pipeline: its spans carry the
// same compile_id. One Instrumentation serves all threads of its PassManager.
// The pass that spawned them waits on its own thread meanwhile: a span
// "wait for workers" (args "wait": true, "pipelines": how many ran on
// workers) inside that pass's span covers it, from the first worker
// pipeline's begin to the last one's end, so the pass's self time (its span
// less its children) is its own work. That interval is what is observed:
// MLIR reports no wait; the parent's own task dispatch overlaps its first
// microseconds. Single-threaded runs have none.
//
// Order: MLIR runs the instrumentations' after-hooks in the reverse order
// of their before-hooks, so spans the host's own instrumentations open
// around a pass nest with jitscope's, added before or after it.
//
// Once: a second jitscope Instrumentation on the same PassManager sees, at
// its first pass, the first one's span of that very pass begun just before;
// it then records nothing at all (its counts() stay zero) and says so in
// one `jitscope:` line (once per process).
//
// Cost: with no session, each callback is one relaxed load and a branch (the
// end callbacks add a look at this thread's empty adapter stack). With a
// session, a pass run is one span written inline with its args: the
// pass's name kept once (not copied per run), three or four string args
// (the location written from its fields, not printed). A threaded pipeline
// adds one short lock. Nothing here throws into MLIR or aborts it.
//
// Names: inside namespace jitscope, `mlir` means jitscope::mlir: write ::mlir::.
// With JITSCOPE_DISABLE defined, the instrumentation records nothing.
// Builds with -fno-exceptions and -fno-rtti (MLIR's own flags).
#pragma once

#include <jitscope/compile.hpp>
#include <jitscope/jitscope.hpp>

#include <mlir/IR/OperationSupport.h>  // OperationName, complete: the disabled form too
#include <mlir/Pass/PassInstrumentation.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#if !defined(JITSCOPE_DISABLE)
#include <jitscope/detail/adapter_stack.hpp>

#include <llvm/Support/Threading.h>
#include <mlir/IR/BuiltinAttributes.h>
#include <mlir/IR/Location.h>
#include <mlir/IR/Operation.h>
#include <mlir/Pass/Pass.h>
#endif

JITSCOPE_NAMESPACE_BEGIN
namespace mlir {

struct Options {
  bool analyses = true;   // spans for the analyses computed, too
  bool locations = true;  // the "location" arg (the op's file:line:col)
  bool pipelines = true;  // "pipeline" spans (workers attach to units either way)
  // The IR's size around each pass run: args "ir_size_before" and
  // "ir_size_after" (operations in the op the pass ran on, itself and all
  // nested), which jitscope-report's ir_growth table sums per pass. Off by
  // default: counting walks the op twice a run (docs/performance.md has
  // its cost). The after count is taken after the span's end time is read
  // (inside it for a pass whose pipelines ran on workers); a failed pass
  // has none.
  bool ir_size = false;
  // A metrics column ("mlir_passes_us") of the compile unit current on the
  // host's thread: each top-level pass run there is an exclusive phase
  // charging it. Workers add nothing (their time is inside the parent's),
  // so the column is wall time, never CPU time summed over threads.
  std::string_view column = {};
};

// What one instrumentation recorded (all zero when compiled out).
struct Counts {
  std::uint64_t passes = 0;     // pass spans begun
  std::uint64_t failed = 0;     // of them, ended by runAfterPassFailed
  std::uint64_t analyses = 0;   // analysis spans begun
  std::uint64_t pipelines = 0;  // nested pipeline runs seen
  std::uint64_t attached = 0;   // of them, run on a worker attached to the parent's unit
  std::uint64_t unmatched = 0;  // end callbacks with no begun run (begun with no session)
  std::uint64_t dropped = 0;    // runs not recorded: out of memory
};

class Instrumentation final : public ::mlir::PassInstrumentation {
 public:
  explicit Instrumentation(const Options& options = {})
      : options_(options), column_(options.column) {}
  Counts counts() const noexcept;

  void runBeforePipeline(std::optional<::mlir::OperationName> name,
                         const PipelineParentInfo& parent) override;
  void runAfterPipeline(std::optional<::mlir::OperationName> name,
                        const PipelineParentInfo& parent) override;
  void runBeforePass(::mlir::Pass* pass, ::mlir::Operation* op) override;
  void runAfterPass(::mlir::Pass* pass, ::mlir::Operation* op) override;
  void runAfterPassFailed(::mlir::Pass* pass, ::mlir::Operation* op) override;
  void runBeforeAnalysis(::llvm::StringRef name, ::mlir::TypeID id, ::mlir::Operation* op) override;
  void runAfterAnalysis(::llvm::StringRef name, ::mlir::TypeID id, ::mlir::Operation* op) override;

 private:
#if !defined(JITSCOPE_DISABLE)
  // Apart from jitscope::llvm's kinds: a frame of one never matches the other's.
  enum Kind : std::uint32_t{kPass = 0x101, kAnalysis = 0x102, kPipeline = 0x103};
  using Frames = detail::AdapterStacks::Frames;

  // The pipelines a pass spawned onto other threads (its adaptor's
  // workers), from the first one's begin to the last one's end, until the
  // pass ends on its own thread: there, that time is its wait.
  struct WorkerPipelines {
    std::uint64_t parent_thread = 0;
    std::uintptr_t parent_pass = 0;
    std::uint32_t session = 0;  // whose clock the times are of
    std::uint64_t first_begin = 0, last_end = 0;
    std::uint32_t open = 0, count = 0;
  };

  void begin_op_span(Kind kind, std::string_view name, std::uintptr_t key, ::mlir::Operation* op,
                     ::mlir::Pass* pass) noexcept;
  void end_span(Kind kind, std::uintptr_t key, std::uintptr_t key2, bool failed) noexcept;
  void end_pass_sized(::mlir::Pass* pass, ::mlir::Operation* op) noexcept;
  // end_frames_from, telling the workers' tally of each threaded pipeline
  // it ends, and each pass below of its own pipelines' ends.
  void end_frames(Frames& frames, std::size_t index) noexcept;
  void note_worker_begin(std::uint64_t parent_thread, std::uintptr_t parent_pass,
                         std::uint32_t session, std::uint64_t now);  // may throw: guarded
  void note_worker_end(std::uint64_t parent_thread, std::uintptr_t parent_pass,
                       std::uint64_t now) noexcept;
  // Takes the workers' tally of `pass` ending on this thread and, with its
  // frame (nullptr: none), writes the "wait for workers" span inside it.
  void record_wait(const detail::AdapterFrame* frame, std::uintptr_t pass) noexcept;
  // True once it found another jitscope instrumentation on its pass manager
  // (added twice): from then on it records nothing.
  bool duplicate() const noexcept;
  void become_duplicate() noexcept;
  // The unit current on each thread that runs a pipeline or top-level pass
  // of this pass manager, for the workers its adaptors spawn.
  void remember_thread_unit(std::uint64_t thread) noexcept;
  void forget_thread_unit(std::uint64_t thread) noexcept;
  CompileUnitRef unit_of_thread(std::uint64_t thread) noexcept;
  void release_if_done(Frames& frames) noexcept;

  const std::uint64_t id_ = detail::new_adapter_id();
  std::atomic<bool> duplicate_{false};
  std::mutex units_mutex_;
  std::vector<std::pair<std::uint64_t, CompileUnitRef>> thread_units_;  // guarded by units_mutex_
  std::vector<WorkerPipelines> workers_;                                // guarded by units_mutex_
  std::atomic<std::uint32_t> worker_entries_{0};  // workers_.size(), for a look without the lock
  std::atomic<std::uint64_t> passes_{0}, failed_{0}, analyses_{0}, pipelines_{0}, attached_{0},
      unmatched_{0}, dropped_{0};
#endif
  const Options options_;
  const std::string column_;  // options_.column's text, owned
};

// The instrumentation for PassManager::addInstrumentation. Keep a raw
// pointer before handing it over to read counts() while the manager lives.
inline std::unique_ptr<Instrumentation> make_instrumentation(const Options& options = {}) {
  return std::make_unique<Instrumentation>(options);
}

#if defined(JITSCOPE_DISABLE)
inline Counts Instrumentation::counts() const noexcept { return {}; }
inline void Instrumentation::runBeforePipeline(std::optional<::mlir::OperationName>,
                                               const PipelineParentInfo&) {}
inline void Instrumentation::runAfterPipeline(std::optional<::mlir::OperationName>,
                                              const PipelineParentInfo&) {}
inline void Instrumentation::runBeforePass(::mlir::Pass*, ::mlir::Operation*) {}
inline void Instrumentation::runAfterPass(::mlir::Pass*, ::mlir::Operation*) {}
inline void Instrumentation::runAfterPassFailed(::mlir::Pass*, ::mlir::Operation*) {}
inline void Instrumentation::runBeforeAnalysis(::llvm::StringRef, ::mlir::TypeID,
                                               ::mlir::Operation*) {}
inline void Instrumentation::runAfterAnalysis(::llvm::StringRef, ::mlir::TypeID,
                                              ::mlir::Operation*) {}
#else

inline std::string_view view_of(::llvm::StringRef s) noexcept { return {s.data(), s.size()}; }

// Operations in `op`, itself and all nested (Options::ir_size).
inline std::uint64_t operations_in(::mlir::Operation* op) noexcept {
  std::uint64_t n = 0;
  op->walk([&n](::mlir::Operation*) { ++n; });
  return n;
}

// llvm::get_threadid() (a system call on Linux), once per thread: what
// MLIR's PipelineParentInfo::parentThreadID holds for the parent's thread.
inline std::uint64_t this_thread_id() noexcept {
  static thread_local const std::uint64_t id = ::llvm::get_threadid();
  return id;
}

// Writes ":<n>" at `at` (room for kColonNumber chars); returns its end.
inline constexpr std::size_t kColonNumber = 11;
inline char* put_colon_number(char* at, unsigned n) noexcept {
  char digits[10];
  std::size_t count = 0;
  do {
    digits[count++] = static_cast<char>('0' + n % 10);
    n /= 10;
  } while (n != 0 && count < sizeof digits);
  *at++ = ':';
  while (count > 0) *at++ = digits[--count];
  return at;
}

// The "location" arg: "file:line:col" of the first FileLineColLoc in the
// op's location (a NameLoc, CallSiteLoc or FusedLoc wraps one), else a
// NameLoc's name; none for an unknown location. Written from the location's
// fields, never printed: a pass run on every function of a module pays
// for this, where printing through raw_ostream cost more than the span.
// The text is in `buffer`, or a view of MLIR's own (a name, or a path too
// long for the buffer, which then goes alone). False: no location.
struct LocationText {
  char buffer[256];
  std::string_view text;
};
inline bool location_text(::mlir::Location location, LocationText& out) noexcept {
  // Most ops carry a FileLineColLoc itself: no walk (a callback per level).
  ::mlir::FileLineColLoc file = location.dyn_cast<::mlir::FileLineColLoc>();
  ::mlir::NameLoc name;
  if (!file)
    location->walk([&](::mlir::Location l) {
      if (auto f = l.dyn_cast<::mlir::FileLineColLoc>()) {
        file = f;
        return ::mlir::WalkResult::interrupt();
      }
      if (!name) name = l.dyn_cast<::mlir::NameLoc>();
      return ::mlir::WalkResult::advance();
    });
  if (!file) {
    if (!name) return false;
    out.text = view_of(name.getName().getValue());
    return true;
  }
  const ::llvm::StringRef path = file.getFilename().getValue();
  if (path.size() > sizeof out.buffer - 2 * kColonNumber) {
    out.text = view_of(path);  // a path this long: the file alone
    return true;
  }
  std::memcpy(out.buffer, path.data(), path.size());
  char* at = put_colon_number(out.buffer + path.size(), file.getLine());
  at = put_colon_number(at, file.getColumn());
  out.text = std::string_view(out.buffer, static_cast<std::size_t>(at - out.buffer));
  return true;
}

inline Counts Instrumentation::counts() const noexcept {
  const auto load = [](const std::atomic<std::uint64_t>& v) {
    return v.load(std::memory_order_relaxed);  // relaxed: a snapshot of tallies
  };
  Counts c;
  c.passes = load(passes_);
  c.failed = load(failed_);
  c.analyses = load(analyses_);
  c.pipelines = load(pipelines_);
  c.attached = load(attached_);
  c.unmatched = load(unmatched_);
  c.dropped = load(dropped_);
  return c;
}

inline bool Instrumentation::duplicate() const noexcept {
  return duplicate_.load(std::memory_order_relaxed);  // relaxed: a flag set once, read anywhere
}

inline void Instrumentation::become_duplicate() noexcept {
  duplicate_.store(true, std::memory_order_relaxed);  // relaxed: see duplicate()
  static std::atomic<bool> said{false};
  detail::adapter_log_once(said,
                           "jitscope::mlir: a second jitscope instrumentation on one PassManager "
                           "records nothing (add one per PassManager)");
}

inline void Instrumentation::begin_op_span(Kind kind, std::string_view name, std::uintptr_t key,
                                           ::mlir::Operation* op, ::mlir::Pass* pass) noexcept {
  const std::uint32_t s = detail::session_word();
  if (s == 0 || duplicate()) return;
  detail::AdapterStacks& stacks = detail::this_thread_adapter_stacks();
  // The same pass on the same op began just now in another jitscope
  // instrumentation: both are on this pass manager (MLIR calls its
  // instrumentations' before-hooks one after the other, and a Pass belongs
  // to one pass manager). The first records; this one stops.
  if (kind == kPass &&
      stacks.other_top_matches(id_, kPass, key, reinterpret_cast<std::uintptr_t>(op))) {
    become_duplicate();
    return;
  }
  Frames* const frames = detail::frames_with_room(stacks, id_);
  if (frames == nullptr) {
    dropped_.fetch_add(1, std::memory_order_relaxed);  // relaxed: tallies (all below too)
    return;
  }
  // A top-level pass on the host's thread: the unit current here is what
  // the workers of its adaptors attach to, and what the column charges.
  const bool outermost = frames->empty();
  if (outermost) remember_thread_unit(this_thread_id());
  detail::AdapterFrame& frame = frames->emplace_back();  // made in place
  frame.kind = kind;
  frame.key = key;
  frame.key2 = reinterpret_cast<std::uintptr_t>(op);
  if (outermost) frame.phase = detail::begin_column_phase(column_);
  detail::ArgList<6> args;
  // Every pass run says "pass" (its argument; empty for one without, such
  // as the adaptors): what jitscope-report knows passes by.
  if (pass != nullptr) args.add("pass", view_of(pass->getArgument()));
  if (kind == kAnalysis) args.add("analysis", true);
  args.add("op", view_of(op->getName().getStringRef()));
  if (auto sym = op->getAttrOfType<::mlir::StringAttr>("sym_name")) {
    args.add("ir_name", view_of(sym.getValue()));
  }
  LocationText location;
  if (options_.locations && location_text(op->getLoc(), location)) {
    args.add("location", location.text);
  }
  if (options_.ir_size && kind == kPass) [[unlikely]]
    args.add("ir_size_before", operations_in(op));
  detail::begin_run_span(s, name, args.data(), args.size(), frame.span);
  (kind == kPass ? passes_ : analyses_).fetch_add(1, std::memory_order_relaxed);
}

inline void Instrumentation::end_span(Kind kind, std::uintptr_t key, std::uintptr_t key2,
                                      bool failed) noexcept {
  Frames* frames = detail::this_thread_adapter_stacks().find(id_);
  // Almost always: the innermost pass or analysis ends, without failing, and
  // no adaptor of this pass manager has workers to account for.
  if (frames != nullptr && !frames->empty() && !failed && kind != kPipeline &&
      worker_entries_.load(std::memory_order_relaxed) == 0) [[likely]] {
    detail::AdapterFrame& top = frames->back();
    if (top.matches(kind, key, key2)) [[likely]] {
      if (top.span) top.span->end();
      frames->pop_back();
      release_if_done(*frames);
      return;
    }
  }
  const std::ptrdiff_t at = frames == nullptr ? -1 : detail::find_frame(*frames, kind, key, key2);
  if (at < 0) {
    if (kind == kPass && worker_entries_.load(std::memory_order_relaxed) != 0) {
      record_wait(nullptr, key);  // forgets its workers' tally: the pass had no span
    }
    if (::jitscope::active() && !duplicate()) unmatched_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  const auto index = static_cast<std::size_t>(at);
  // relaxed: the workers' notes happen before this thread's wait returned
  // (the thread pool's own synchronization), so a nonzero count is seen.
  if (kind == kPass && worker_entries_.load(std::memory_order_relaxed) != 0) {
    record_wait(&(*frames)[index], key);
  }
  if (failed) {
    if ((*frames)[index].span) (*frames)[index].span->arg("failed", true);
    failed_.fetch_add(1, std::memory_order_relaxed);
  }
  end_frames(*frames, index);
  // A failed pass ends its pipeline too: OpToOpPassAdaptor::runPipeline
  // returns at the first failure, without runAfterPipeline.
  if (failed && kind == kPass && !frames->empty() && frames->back().kind == kPipeline) {
    if (frames->back().span) frames->back().span->arg("failed", true);
    end_frames(*frames, frames->size() - 1);
  }
  release_if_done(*frames);
}

inline void Instrumentation::end_frames(Frames& frames, std::size_t index) noexcept {
  if (index >= frames.size()) return;
  // The pipelines among the frames that end: their parents, read first.
  struct Ended {
    std::uintptr_t parent_pass;
    std::uint64_t parent_thread;
    bool threaded;
  };
  Ended ended[4];
  std::size_t count = 0;
  for (std::size_t i = index; i < frames.size() && count < 4; ++i) {
    if (frames[i].kind == kPipeline) {
      ended[count++] = {frames[i].key, frames[i].key2, frames[i].threaded};
    }
  }
  detail::end_frames_from(frames, index);
  const std::uint32_t session = detail::session_word();
  if (count == 0 || session == 0) return;
  const std::uint64_t now = detail::read_clock(session);  // after their spans ended
  for (std::size_t e = 0; e < count; ++e) {
    if (ended[e].threaded) {
      note_worker_end(ended[e].parent_thread, ended[e].parent_pass, now);
      continue;
    }
    // The parent's own thread ran it: the parent's wait, if any, is after it.
    for (std::size_t i = frames.size(); i-- > 0;) {
      if (frames[i].kind == kPass && frames[i].key == ended[e].parent_pass) {
        frames[i].last_own_end = now;
        break;
      }
    }
  }
}

inline void Instrumentation::note_worker_begin(std::uint64_t parent_thread,
                                               std::uintptr_t parent_pass, std::uint32_t session,
                                               std::uint64_t now) {
  std::lock_guard<std::mutex> lock(units_mutex_);
  WorkerPipelines* w = nullptr;
  for (auto& entry : workers_) {
    if (entry.parent_thread == parent_thread && entry.parent_pass == parent_pass) w = &entry;
  }
  if (w == nullptr) {
    workers_.push_back({parent_thread, parent_pass, session, now, 0, 0, 0});  // may throw: guarded
    worker_entries_.store(static_cast<std::uint32_t>(workers_.size()), std::memory_order_relaxed);
    w = &workers_.back();
  } else if (w->session != session) {
    *w = {parent_thread, parent_pass, session, now, 0, 0, 0};
  }
  if (now < w->first_begin) w->first_begin = now;
  ++w->open;
  ++w->count;
}

inline void Instrumentation::note_worker_end(std::uint64_t parent_thread,
                                             std::uintptr_t parent_pass,
                                             std::uint64_t now) noexcept {
  std::lock_guard<std::mutex> lock(units_mutex_);
  for (auto& entry : workers_) {
    if (entry.parent_thread == parent_thread && entry.parent_pass == parent_pass) {
      if (now > entry.last_end) entry.last_end = now;
      if (entry.open > 0) --entry.open;
      return;
    }
  }
}

inline void Instrumentation::record_wait(const detail::AdapterFrame* frame,
                                         std::uintptr_t pass) noexcept {
  const std::uint64_t thread = this_thread_id();
  WorkerPipelines w;
  {
    std::lock_guard<std::mutex> lock(units_mutex_);
    std::size_t i = 0;
    while (i < workers_.size() &&
           !(workers_[i].parent_thread == thread && workers_[i].parent_pass == pass)) {
      ++i;
    }
    if (i == workers_.size()) return;
    w = workers_[i];
    workers_[i] = workers_.back();
    workers_.pop_back();
    worker_entries_.store(static_cast<std::uint32_t>(workers_.size()), std::memory_order_relaxed);
  }
  // Only inside the pass's own span, the innermost open one on this thread.
  if (frame == nullptr || !frame->span || w.count == 0) return;
  const std::uint32_t session = detail::session_word();
  if (session != w.session) return;
  const std::uint64_t now = detail::read_clock(session);
  // This thread waited from the first worker's start (or the end of the
  // last pipeline it ran itself, when it is a pool thread that helped) to
  // the last worker's end (now, if a worker's pipeline never ended).
  const std::uint64_t begin = std::max(w.first_begin, frame->last_own_end);
  const std::uint64_t end = w.open > 0 ? now : std::min(w.last_end, now);
  detail::record_past_span(session, begin, end, "wait for workers",
                           {{"wait", true}, {"pipelines", w.count}});
}

inline void Instrumentation::release_if_done(Frames& frames) noexcept {
  if (frames.empty()) forget_thread_unit(this_thread_id());
}

inline void Instrumentation::remember_thread_unit(std::uint64_t thread) noexcept {
  CompileUnitRef unit = current_compile_unit();
  if (!unit.valid()) return;
  detail::adapter_guarded([&] {
    std::lock_guard<std::mutex> lock(units_mutex_);
    for (auto& entry : thread_units_) {
      if (entry.first == thread) {
        entry.second = std::move(unit);
        return;
      }
    }
    thread_units_.emplace_back(thread, std::move(unit));
  });
}

inline void Instrumentation::forget_thread_unit(std::uint64_t thread) noexcept {
  CompileUnitRef dropped;  // released after the lock
  std::lock_guard<std::mutex> lock(units_mutex_);
  for (std::size_t i = 0; i < thread_units_.size(); ++i) {
    if (thread_units_[i].first == thread) {
      dropped = std::move(thread_units_[i].second);
      thread_units_[i] = std::move(thread_units_.back());
      thread_units_.pop_back();
      return;
    }
  }
}

inline CompileUnitRef Instrumentation::unit_of_thread(std::uint64_t thread) noexcept {
  std::lock_guard<std::mutex> lock(units_mutex_);
  for (const auto& entry : thread_units_) {
    if (entry.first == thread) return entry.second;
  }
  return {};
}

// Runs on the thread that runs the pipeline: a worker of the context's pool
// when the adaptor is threaded, else the parent's own thread. MLIR pairs it
// with runAfterPipeline on the same thread, or with nothing when a pass fails.
inline void Instrumentation::runBeforePipeline(std::optional<::mlir::OperationName> name,
                                               const PipelineParentInfo& parent) {
  const std::uint32_t session = detail::session_word();
  if (session == 0 || duplicate()) return;
  pipelines_.fetch_add(1, std::memory_order_relaxed);
  const std::uint64_t thread = this_thread_id();
  const bool threaded = parent.parentThreadID != thread;
  const auto key = reinterpret_cast<std::uintptr_t>(parent.parentPass);
  Frames* const frames = detail::frames_with_room(detail::this_thread_adapter_stacks(), id_);
  if (frames == nullptr) {
    dropped_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  // The same parent's pipeline still open on top never got its end (its
  // first pass could not even start): it ends here.
  if (!frames->empty() && frames->back().matches(kPipeline, key, parent.parentThreadID)) {
    end_frames(*frames, frames->size() - 1);
  }
  // Before its span: the parent's wait covers the whole pipeline.
  if (threaded && !detail::adapter_guarded([&] {
        note_worker_begin(parent.parentThreadID, key, session, detail::read_clock(session));
      })) {
    dropped_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  const bool first_on_thread = frames->empty();
  detail::AdapterFrame& frame = frames->emplace_back();  // made in place: room was made
  frame.kind = kPipeline;
  frame.key = key;
  frame.key2 = parent.parentThreadID;
  if (threaded) {
    frame.threaded = true;
    CompileUnitRef unit = unit_of_thread(parent.parentThreadID);
    if (unit.valid()) {
      frame.attachment = attach_thread(unit);
      if (frame.attachment.attached()) attached_.fetch_add(1, std::memory_order_relaxed);
    }
  }
  if (options_.pipelines) {
    detail::ArgList<4> args;
    args.add("op", name ? view_of(name->getStringRef()) : std::string_view("any"));
    if (parent.parentPass != nullptr) {
      args.add("parent_pass", view_of(parent.parentPass->getName()));
    }
    args.add("parent_thread", parent.parentThreadID);
    args.add("threaded", threaded);
    detail::begin_run_span(session, "pipeline", args.data(), args.size(), frame.span);
  }
  // This thread's own adaptors spawn workers too: they attach to the unit
  // this thread has now (the one just attached, on a worker).
  if (first_on_thread) remember_thread_unit(thread);
}

inline void Instrumentation::runAfterPipeline(std::optional<::mlir::OperationName>,
                                              const PipelineParentInfo& parent) {
  end_span(kPipeline, reinterpret_cast<std::uintptr_t>(parent.parentPass), parent.parentThreadID,
           false);
}

inline void Instrumentation::runBeforePass(::mlir::Pass* pass, ::mlir::Operation* op) {
  begin_op_span(kPass, view_of(pass->getName()), reinterpret_cast<std::uintptr_t>(pass), op, pass);
}

inline void Instrumentation::runAfterPass(::mlir::Pass* pass, ::mlir::Operation* op) {
  if (options_.ir_size) [[unlikely]] {
    end_pass_sized(pass, op);
    return;
  }
  end_span(kPass, reinterpret_cast<std::uintptr_t>(pass), reinterpret_cast<std::uintptr_t>(op),
           false);
}

// runAfterPass with Options::ir_size: "ir_size_after" on the pass's span,
// which ends at the time read before the count; then end_span pops its
// frame as usual (its span already ended). A pass with workers to account
// for keeps its span open for its wait span, the count inside it.
inline void Instrumentation::end_pass_sized(::mlir::Pass* pass, ::mlir::Operation* op) noexcept {
  const auto key = reinterpret_cast<std::uintptr_t>(pass);
  const auto key2 = reinterpret_cast<std::uintptr_t>(op);
  Frames* frames = detail::this_thread_adapter_stacks().find(id_);
  if (frames != nullptr && !frames->empty() && frames->back().matches(kPass, key, key2) &&
      frames->back().span && frames->back().span->recording()) {
    std::optional<Span>& span = frames->back().span;
    if (worker_entries_.load(std::memory_order_relaxed) == 0) {
      const detail::SpanToken token = span->release(detail::kAdoptToken);
      const std::uint64_t ts = detail::read_clock(token.session());
      detail::add_arg_bits(token, "ir_size_after", detail::ValueType::kUint, operations_in(op));
      detail::end_span(token, ts);
    } else {
      span->arg("ir_size_after", operations_in(op));
    }
  }
  end_span(kPass, key, key2, false);
}

inline void Instrumentation::runAfterPassFailed(::mlir::Pass* pass, ::mlir::Operation* op) {
  end_span(kPass, reinterpret_cast<std::uintptr_t>(pass), reinterpret_cast<std::uintptr_t>(op),
           true);
}

inline void Instrumentation::runBeforeAnalysis(::llvm::StringRef name, ::mlir::TypeID id,
                                               ::mlir::Operation* op) {
  if (!options_.analyses) return;
  begin_op_span(kAnalysis, view_of(name), reinterpret_cast<std::uintptr_t>(id.getAsOpaquePointer()),
                op, nullptr);
}

inline void Instrumentation::runAfterAnalysis(::llvm::StringRef, ::mlir::TypeID id,
                                              ::mlir::Operation* op) {
  if (!options_.analyses) return;
  end_span(kAnalysis, reinterpret_cast<std::uintptr_t>(id.getAsOpaquePointer()),
           reinterpret_cast<std::uintptr_t>(op), false);
}
#endif  // JITSCOPE_DISABLE

}  // namespace mlir
JITSCOPE_NAMESPACE_END
