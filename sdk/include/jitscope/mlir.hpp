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
//     pipelines), args "pass" (its argument, "canonicalize"), "op" (the
//     operation's name, "func.func"), "ir_name" (its sym_name, when it has
//     one) and "location" (the op's location, Options::locations);
//   - a pass that failed (runAfterPassFailed, a verifier failure included):
//     "failed": true on its span, and on the pipeline it was running in,
//     which MLIR then leaves without runAfterPipeline;
//   - each nested pipeline run: a span "pipeline" with args "op" (the anchor,
//     "any" for op-agnostic ones), "parent_pass" (the adaptor that spawned it),
//     "parent_thread" (the spawning thread's id: the trace's tid on Linux) and
//     "threaded" (true when it runs on another thread than its parent);
//   - with Options::analyses, each analysis computed: a span named by the
//     analysis with "analysis": true;
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
//
// Cost: with no session, each callback is one relaxed load and a branch (the
// end callbacks add a look at this thread's empty adapter stack). With a
// session, a pass run is one span with a copied name and three or four
// string args (the location is printed into a string: turn it off with
// Options::locations for op-granular passes on huge modules); a threaded
// pipeline adds one short lock. Nothing here throws into MLIR or aborts it.
//
// Names: inside namespace jitscope, `mlir` means jitscope::mlir: write ::mlir::.
// With JITSCOPE_DISABLE defined, the instrumentation records nothing.
// Builds with -fno-exceptions and -fno-rtti (MLIR's own flags).
#pragma once

#include <jitscope/compile.hpp>
#include <jitscope/jitscope.hpp>

#include <mlir/IR/OperationSupport.h>  // OperationName, complete: the disabled form too
#include <mlir/Pass/PassInstrumentation.h>

#include <atomic>
#include <cstdint>
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
#include <llvm/Support/raw_ostream.h>
#include <mlir/IR/BuiltinAttributes.h>
#include <mlir/IR/Operation.h>
#include <mlir/Pass/Pass.h>
#endif

JITSCOPE_NAMESPACE_BEGIN
namespace mlir {

struct Options {
  bool analyses = true;   // spans for the analyses computed, too
  bool locations = true;  // the "location" arg (prints the op's location)
  bool pipelines = true;  // "pipeline" spans (workers attach to units either way)
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
  enum Kind : std::uint32_t{kPass = 1, kAnalysis = 2, kPipeline = 3};
  using Frames = detail::AdapterStacks::Frames;

  void begin_op_span(Kind kind, std::string_view name, std::uintptr_t key, ::mlir::Operation* op,
                     ::mlir::Pass* pass) noexcept;
  void end_span(Kind kind, std::uintptr_t key, std::uintptr_t key2, bool failed) noexcept;
  // The unit current on each thread that runs a pipeline or top-level pass
  // of this pass manager, for the workers its adaptors spawn.
  void remember_thread_unit(std::uint64_t thread) noexcept;
  void forget_thread_unit(std::uint64_t thread) noexcept;
  CompileUnitRef unit_of_thread(std::uint64_t thread) noexcept;
  void release_if_done(Frames& frames) noexcept;

  const std::uint64_t id_ = detail::new_adapter_id();
  std::mutex units_mutex_;
  std::vector<std::pair<std::uint64_t, CompileUnitRef>> thread_units_;
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

inline void Instrumentation::begin_op_span(Kind kind, std::string_view name, std::uintptr_t key,
                                           ::mlir::Operation* op, ::mlir::Pass* pass) noexcept {
  if (!::jitscope::active()) return;
  const bool ok = detail::adapter_guarded([&] {
    Frames& frames = detail::this_thread_adapter_stacks().get(id_);
    detail::AdapterFrame frame;
    // A top-level pass on the host's thread: the unit current here is what
    // the workers of its adaptors attach to, and what the column charges.
    if (frames.empty()) {
      remember_thread_unit(::llvm::get_threadid());
      frame.phase = detail::begin_column_phase(column_);
    }
    frame.kind = kind;
    frame.key = key;
    frame.key2 = reinterpret_cast<std::uintptr_t>(op);
    frame.span.emplace(name);
    Span& span = *frame.span;
    if (pass != nullptr && !pass->getArgument().empty()) {
      span.arg("pass", view_of(pass->getArgument()));
    }
    if (kind == kAnalysis) span.arg("analysis", true);
    span.arg("op", view_of(op->getName().getStringRef()));
    if (auto sym = op->getAttrOfType<::mlir::StringAttr>("sym_name")) {
      span.arg("ir_name", view_of(sym.getValue()));
    }
    if (options_.locations) {
      std::string location;
      ::llvm::raw_string_ostream os(location);
      op->getLoc().print(os);
      span.arg("location", os.str());
    }
    frames.push_back(std::move(frame));
  });
  if (!ok) {
    dropped_.fetch_add(1, std::memory_order_relaxed);  // relaxed: tallies (all below too)
  } else {
    (kind == kPass ? passes_ : analyses_).fetch_add(1, std::memory_order_relaxed);
  }
}

inline void Instrumentation::end_span(Kind kind, std::uintptr_t key, std::uintptr_t key2,
                                      bool failed) noexcept {
  Frames* frames = detail::this_thread_adapter_stacks().find(id_);
  const std::ptrdiff_t at = frames == nullptr ? -1 : detail::find_frame(*frames, kind, key, key2);
  if (at < 0) {
    if (::jitscope::active()) unmatched_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  if (failed) {
    if ((*frames)[static_cast<std::size_t>(at)].span) {
      (*frames)[static_cast<std::size_t>(at)].span->arg("failed", true);
    }
    failed_.fetch_add(1, std::memory_order_relaxed);
  }
  detail::end_frames_from(*frames, static_cast<std::size_t>(at));
  // A failed pass ends its pipeline too: OpToOpPassAdaptor::runPipeline
  // returns at the first failure, without runAfterPipeline.
  if (failed && kind == kPass && !frames->empty() && frames->back().kind == kPipeline) {
    if (frames->back().span) frames->back().span->arg("failed", true);
    detail::end_frames_from(*frames, frames->size() - 1);
  }
  release_if_done(*frames);
}

inline void Instrumentation::release_if_done(Frames& frames) noexcept {
  if (frames.empty()) forget_thread_unit(::llvm::get_threadid());
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
  if (!::jitscope::active()) return;
  pipelines_.fetch_add(1, std::memory_order_relaxed);
  const std::uint64_t thread = ::llvm::get_threadid();
  const bool threaded = parent.parentThreadID != thread;
  const auto key = reinterpret_cast<std::uintptr_t>(parent.parentPass);
  const bool ok = detail::adapter_guarded([&] {
    Frames& frames = detail::this_thread_adapter_stacks().get(id_);
    // The same parent's pipeline still open on top never got its end (its
    // first pass could not even start): it ends here.
    if (!frames.empty() && frames.back().matches(kPipeline, key, parent.parentThreadID)) {
      detail::end_frames_from(frames, frames.size() - 1);
    }
    const bool first_on_thread = frames.empty();
    detail::AdapterFrame frame;
    frame.kind = kPipeline;
    frame.key = key;
    frame.key2 = parent.parentThreadID;
    if (threaded) {
      CompileUnitRef unit = unit_of_thread(parent.parentThreadID);
      if (unit.valid()) {
        frame.attachment = attach_thread(unit);
        if (frame.attachment.attached()) attached_.fetch_add(1, std::memory_order_relaxed);
      }
    }
    if (options_.pipelines) {
      frame.span.emplace("pipeline");
      frame.span->arg("op", name ? view_of(name->getStringRef()) : std::string_view("any"));
      if (parent.parentPass != nullptr) {
        frame.span->arg("parent_pass", view_of(parent.parentPass->getName()));
      }
      frame.span->arg("parent_thread", parent.parentThreadID);
      frame.span->arg("threaded", threaded);
    }
    frames.push_back(std::move(frame));
    // This thread's own adaptors spawn workers too: they attach to the unit
    // this thread has now (the one just attached, on a worker).
    if (first_on_thread) remember_thread_unit(thread);
  });
  if (!ok) dropped_.fetch_add(1, std::memory_order_relaxed);
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
  end_span(kPass, reinterpret_cast<std::uintptr_t>(pass), reinterpret_cast<std::uintptr_t>(op),
           false);
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
