// jitscope::llvm — LLVM's new pass manager in the trace, in one call.
//
// Quickstart (CMake: target_link_libraries(tool PRIVATE jitscope::llvm))
//   #include <jitscope/llvm.hpp>
//
//   ::llvm::PassInstrumentationCallbacks pic;
//   jitscope::llvm::register_callbacks(pic);  // before the pipeline runs, with a session on
//   ::llvm::PassBuilder pb(tm, ::llvm::PipelineTuningOptions(), std::nullopt, &pic);
//   ...
//   mpm.run(module, mam);  // every pass run is a span on this thread
//
// What is recorded, while a jitscope session is on:
//   - each pass run: a span named by the pass ("InstCombinePass",
//     "ModuleToFunctionPassAdaptor", "PassManager<Function>"...), so pass
//     managers and adaptors contain the passes they run; args "ir" (the IR
//     unit's kind: "module", "cgscc", "function", "loop", "machine function")
//     and "ir_name" (its name: the module identifier, the function, the
//     loop's header block, an SCC's first function, with "functions" its size);
//   - a pass whose IR unit it invalidated (a loop it deleted, an SCC it
//     split): its span ends at the after-invalidated callback, "ir_invalidated": true;
//   - a pass LLVM skipped (optnone, -opt-bisect-limit): an instant
//     "llvm_pass_skipped" with args "pass", "ir", "ir_name", and Counts::skipped;
//   - with Options::analyses, each analysis computed: a span named by the
//     analysis with "analysis": true;
//   - with Options::ir_size, "ir_size_before" and "ir_size_after" on each
//     pass run's span: instructions in its IR unit (IR growth per pass);
//   - with Options::column ("llvm_passes_us"), each outermost pass run on a
//     thread inside an exclusive column phase: the current unit's column is
//     the wall time in passes.
// Inside a jitscope CompileUnit the spans carry its compile_id (compile.hpp).
//
// Cost: with no session on at register_callbacks, nothing is registered and
// nothing is paid. Attached with no session (Options::attach_without_session,
// or a session that has since stopped): LLVM's own dispatch of the
// callbacks, about 5 % of an O2 pipeline, each callback then a few loads
// and a branch. With a session, a pass run is one span (its name kept
// once per pass, then taken by pointer) with two or three args written with
// its Begin: about 340 instructions beside LLVM's own 1,050 to call the
// two callbacks (docs/performance.md). Nothing here
// throws into LLVM or aborts it: out of memory loses the span and is
// counted (Counts::dropped) when exceptions are on.
//
// Threads: the callbacks may run on several threads at once (one pipeline
// per thread); each thread keeps its own stack of open runs per registration.
// An after-callback that does not match the innermost run ends the run it
// matches, and jitscope ends the runs opened inside it with it (marked
// "jitscope_ended_with_outer").
//
// Order: LLVM runs before-callbacks in registration order and after-callbacks
// in list order; jitscope's after-callbacks go to the front of their lists
// (ToFront). A span the host's own callbacks open around a pass nests with
// jitscope's: around it when registered before the attach; inside it when
// registered after it, where with ToFront (LLVM's time-trace convention) it
// ends first. Registered after it without ToFront, jitscope's span can wait
// for it only with after-callbacks of its own at the back of each list,
// which LLVM calls on every pass run and which can only be added when the
// first pass runs (later, a thread may be inside those lists: another, or
// this one in an after-callback that runs passes). With
// Options::tail_from_first_pass they are; by default such a span ends with
// jitscope's (marked; one `jitscope:` line says so), and callbacks
// registered after the first such run in the process get them.
// After-callbacks the host adds after the first pass ran come too late.
// Once: a second register_callbacks on the same callbacks object registers
// nothing, says so in one `jitscope:` line (once per process) and returns
// the first one's Registration.
//
// Names: inside namespace jitscope, `llvm` means jitscope::llvm: write ::llvm::.
// With JITSCOPE_DISABLE defined, register_callbacks registers nothing.
// Builds with -fno-exceptions and -fno-rtti (LLVM's own flags).
#pragma once

#include <jitscope/compile.hpp>
#include <jitscope/jitscope.hpp>

#include <llvm/ADT/Any.h>
#include <llvm/ADT/StringRef.h>
#include <llvm/IR/PassInstrumentation.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#if !defined(JITSCOPE_DISABLE)
#include <jitscope/detail/pass_run_stack.hpp>

#include <llvm/Analysis/LazyCallGraph.h>
#include <llvm/Analysis/LoopInfo.h>
#include <llvm/CodeGen/MachineFunction.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/Module.h>
#endif

JITSCOPE_NAMESPACE_BEGIN
namespace llvm {

struct Options {
  bool analyses = false;         // spans for the analyses computed, too
  bool skipped_instants = true;  // an instant per skipped pass (always counted)
  bool ir_names = true;          // the "ir_name" arg (copies a name per span)
  // A metrics column ("llvm_passes_us") of the compile unit current on the
  // thread: each outermost pass run on a thread is an exclusive phase
  // charging it (compile.hpp), so it sums to the wall time in passes.
  std::string_view column = {};
  // With no session on at register_callbacks: false (the default) registers
  // nothing, and the registration is not registered(); call it again once a
  // session is on (a PassBuilder made per compile does). LLVM computes each
  // pass's name and boxes its IR unit for every callback on its lists,
  // whatever the callback does: attached with no session, jitscope's cost
  // is about 5 % of an O2 pipeline. true registers anyway, for callbacks made
  // before a session starts that are still used after it. Callbacks stay
  // attached once registered (LLVM cannot remove them), also after the
  // session stops.
  bool attach_without_session = false;
  // The IR's size around each pass run: args "ir_size_before" and
  // "ir_size_after" (instructions in the IR unit the pass ran on: the
  // function, the module, the loop's blocks, the SCC's functions, the
  // machine function), which jitscope-report's ir_growth table sums per
  // pass. Off by default: counting walks every block of the unit twice a
  // run (docs/performance.md has its cost). The after count is taken after
  // the span's end time is read, so a pass's time does not include it; a
  // pass that invalidated its IR unit has no after count.
  bool ir_size = false;
  // Spans the host's own callbacks open around pass runs ("Order"): with a
  // before-callback registered after jitscope's and an after-callback
  // without ToFront, the host's span is still open inside jitscope's when
  // jitscope's after-callback runs. To wait for it, jitscope needs
  // after-callbacks of its own at the back of LLVM's lists ("the tail"),
  // added when the first pass runs (later, a thread may be inside those
  // lists), which LLVM then calls on every pass run whatever they do:
  // about 520 instructions a run, a quarter of jitscope's cost
  // (docs/performance.md). false (the default): no tail, until a run of
  // this process has ended with such a span open inside it: such spans end
  // with the run's (marked "jitscope_ended_with_outer"; one `jitscope:` line
  // says so, once per process), and callbacks registered after that in this
  // process get the tail (and its cost, also attached without a session).
  // true: the tail from the start.
  bool tail_from_first_pass = false;
};

// What one registration recorded (all zero when compiled out).
struct Counts {
  std::uint64_t passes = 0;       // pass spans begun
  std::uint64_t invalidated = 0;  // of them, ended by the after-invalidated callback
  std::uint64_t skipped = 0;      // passes LLVM skipped while a session was on
  std::uint64_t analyses = 0;     // analysis spans begun
  std::uint64_t unmatched = 0;    // after-callbacks with no begun run (begun with no session)
  std::uint64_t dropped = 0;      // runs not recorded: out of memory
};

// Internal: the state the callbacks share.
struct CallbackState;

// Owns nothing the callbacks need (they share the state): it may be dropped.
class Registration {
 public:
  Registration() = default;
  Counts counts() const noexcept;
  bool registered() const noexcept { return state_ != nullptr; }

 private:
  friend inline Registration register_callbacks(::llvm::PassInstrumentationCallbacks&,
                                                const Options&) noexcept;
  std::shared_ptr<CallbackState> state_;
};

// Registers jitscope's callbacks with `callbacks` (the PassBuilder's or
// StandardInstrumentations' PassInstrumentationCallbacks), before the
// pipeline runs; with no session on, nothing unless
// Options::attach_without_session. Again on the same object: nothing
// registered, one `jitscope:` line, and the first registration returned
// (see "Once").
inline Registration register_callbacks(::llvm::PassInstrumentationCallbacks& callbacks,
                                       const Options& options = {}) noexcept;

#if defined(JITSCOPE_DISABLE)
inline Counts Registration::counts() const noexcept { return {}; }
inline Registration register_callbacks(::llvm::PassInstrumentationCallbacks& callbacks,
                                       const Options& options) noexcept {
  static_cast<void>(callbacks), static_cast<void>(options);
  return {};
}
#else

// The IR unit a callback got, as the trace shows it.
struct IrUnit {
  std::string_view kind = "unknown";
  // The kind's bytes as one word, where it fits one (all but "machine
  // function"): a constant per kind, where the word built from the chosen
  // view took about 15 instructions a run (callgrind).
  std::uint64_t kind_bits = detail::text_bits("unknown");
  ::llvm::StringRef name;
  std::uint64_t functions = 0;    // an SCC's size
  std::uint64_t size_before = 0;  // Options::ir_size: instructions + 1; 0: not measured

  void set_kind(std::string_view k, std::uint64_t bits) noexcept {
    kind = k;
    kind_bits = bits;
  }
};

JITSCOPE_ALWAYS_INLINE IrUnit describe_ir(const ::llvm::Any& ir) noexcept {
  using detail::text_bits;
  IrUnit unit;
  if (const auto* f = ::llvm::any_cast<const ::llvm::Function*>(&ir)) {
    unit.set_kind("function", text_bits("function"));
    unit.name = (*f)->getName();
  } else if (const auto* m = ::llvm::any_cast<const ::llvm::Module*>(&ir)) {
    unit.set_kind("module", text_bits("module"));
    unit.name = (*m)->getModuleIdentifier();
  } else if (const auto* l = ::llvm::any_cast<const ::llvm::Loop*>(&ir)) {
    unit.set_kind("loop", text_bits("loop"));
    unit.name = (*l)->getName();
  } else if (const auto* c = ::llvm::any_cast<const ::llvm::LazyCallGraph::SCC*>(&ir)) {
    unit.set_kind("cgscc", text_bits("cgscc"));
    unit.functions = static_cast<std::uint64_t>((*c)->size());
    if ((*c)->size() > 0) unit.name = (*(*c)->begin()).getFunction().getName();
  } else if (const auto* mf = ::llvm::any_cast<const ::llvm::MachineFunction*>(&ir)) {
    unit.set_kind("machine function", 0);  // over a word: the library's path
    unit.name = (*mf)->getName();
  }
  return unit;
}

// Instructions in the IR unit (Options::ir_size); 0 for one of no known kind.
inline std::uint64_t ir_size(const ::llvm::Any& ir) noexcept {
  if (const auto* f = ::llvm::any_cast<const ::llvm::Function*>(&ir)) {
    return (*f)->getInstructionCount();
  }
  if (const auto* m = ::llvm::any_cast<const ::llvm::Module*>(&ir)) {
    return (*m)->getInstructionCount();
  }
  if (const auto* l = ::llvm::any_cast<const ::llvm::Loop*>(&ir)) {
    std::uint64_t n = 0;
    for (const ::llvm::BasicBlock* block : (*l)->getBlocks()) n += block->size();
    return n;
  }
  if (const auto* c = ::llvm::any_cast<const ::llvm::LazyCallGraph::SCC*>(&ir)) {
    std::uint64_t n = 0;
    for (const ::llvm::LazyCallGraph::Node& node : **c)
      n += node.getFunction().getInstructionCount();
    return n;
  }
  if (const auto* mf = ::llvm::any_cast<const ::llvm::MachineFunction*>(&ir)) {
    return (*mf)->getInstructionCount();
  }
  return 0;
}

inline std::string_view view_of(::llvm::StringRef s) noexcept { return {s.data(), s.size()}; }

struct CallbackState {
  enum Kind : std::uint32_t { kPass = 1, kAnalysis = 2 };

  explicit CallbackState(const Options& o) : options(o), column(o.column) {}

  // A pass or analysis begins: its run goes on this thread's stack.
  // Out of line (the three below too): one copy beside the callbacks'
  // lambdas, and the adapter's cost counted by function (adapter_bench.sh).
  // kSized: Options::ir_size (its own callback), so that the default path
  // has no test of it.
  template <bool kSized = false>
  [[gnu::noinline]] void begin(Kind kind, ::llvm::StringRef name, const ::llvm::Any& ir) noexcept {
    const std::uint32_t s = detail::session_word();
    if (s == 0) return;
    detail::PassRunStack* const stack = detail::pass_run_stack_with_room(id);
    if (stack == nullptr) [[unlikely]] {
      dropped.fetch_add(1, std::memory_order_relaxed);  // relaxed: tallies (all below too)
      return;
    }
    stack->end_deferred();  // when the tail after-callback did not run
    IrUnit unit = describe_ir(ir);
    if constexpr (kSized) {
      if (kind == kPass) unit.size_before = ir_size(ir) + 1;  // +1: 0 is "not measured"
    }
    if (stack->empty() && !column.empty()) [[unlikely]]
      stack->outer_phase = detail::begin_column_phase(column);
    // A pass's name is a view into __PRETTY_FUNCTION__, the same for
    // every run of the pass: kept once, the span takes it by pointer.
    const char* kept = detail::kept_name(view_of(name));
    detail::PassRun& run = *stack->next++;
    run.key = name.data();
    run.key_size = static_cast<std::uint32_t>(name.size());
    run.kind = static_cast<std::uint8_t>(kind);
    run.end_deferred = false;
    detail::SpanToken token;
    if (kept == nullptr || !begin_inline<kSized>(s, kept, kind, unit, token)) [[unlikely]]
      token = begin_general(s, kept, kind, name, unit);
    run.set_token(token);
    run.depth_x8 = static_cast<std::uint32_t>(detail::open_spans_x8());
    (kind == kPass ? passes : analyses).fetch_add(1, std::memory_order_relaxed);
  }

  // The pass run's Begin and its args in one inline write, where the
  // library's general path took about 290 instructions. False: nothing
  // written (no room, the inline path's gate closed, an IR unit's name
  // over 128 bytes).
  template <bool kSized>
  JITSCOPE_ALWAYS_INLINE bool begin_inline(std::uint32_t s, const char* kept, Kind kind,
                                           const IrUnit& unit,
                                           detail::SpanToken& token) const noexcept {
    const std::size_t name_bytes = options.ir_names ? unit.name.size() : 0;
    if (name_bytes > detail::kInlineNameBytes || unit.kind_bits == 0) [[unlikely]]
      return false;
    const std::uint64_t slots = 1 + (options.ir_names ? detail::string_arg_slots(name_bytes) : 0) +
                                (unit.functions != 0 ? 1 : 0) + (kind == kAnalysis ? 1 : 0) +
                                (kSized && unit.size_before != 0 ? 1 : 0);
    detail::SpanBatch batch;
    if (!detail::begin_span_batch(s, kept, slots, token, batch)) [[unlikely]]
      return false;
    detail::put_short_string_arg(batch, 0, "ir", unit.kind_bits, unit.kind.size());
    std::uint64_t at = 1;
    if (options.ir_names) at += detail::put_string_arg(batch, at, "ir_name", view_of(unit.name));
    if (unit.functions != 0) {
      detail::put_scalar_arg(batch, at++, "functions", detail::ValueType::kUint, unit.functions);
    }
    if (kind == kAnalysis)
      detail::put_scalar_arg(batch, at++, "analysis", detail::ValueType::kBool, 1);
    if (kSized && unit.size_before != 0) {
      detail::put_scalar_arg(batch, at++, "ir_size_before", detail::ValueType::kUint,
                             unit.size_before - 1);
    }
    detail::commit_batch(batch, slots);
    return true;
  }

  // The same through the library (which clamps a long name and counts a
  // dropped span), by the kept name or, not kept, a copied one.
  [[gnu::noinline]] detail::SpanToken begin_general(std::uint32_t s, const char* kept, Kind kind,
                                                    ::llvm::StringRef name,
                                                    const IrUnit& unit) const noexcept {
    detail::ArgList<5> args;
    args.add("ir", unit.kind);
    if (options.ir_names) args.add("ir_name", view_of(unit.name));
    if (unit.functions != 0) args.add("functions", unit.functions);
    if (kind == kAnalysis) args.add("analysis", true);
    if (unit.size_before != 0) args.add("ir_size_before", unit.size_before - 1);
    return detail::begin_adapter_token(s, kept, view_of(name), args.data(), args.size());
  }

  // A pass or analysis ends (the after-callbacks at the front of LLVM's
  // lists): its span ends, with any of its runs left open inside it.
  // Spans the host began inside it and ends in a later after-callback keep
  // it open until end_deferred, at the back of the lists ("Order").
  [[gnu::noinline]] void end(Kind kind, ::llvm::StringRef name, bool invalidated) noexcept {
    // Almost always: the innermost run ends, nothing deferred, and its span
    // is the innermost open on the thread, so no host span is open inside
    // it (the inline end's own test of the thread's innermost serial). All
    // else in end_slow, a tail call: this path saves no register.
    detail::PassRunStack* const stack = detail::last_pass_run_stack_of(id);
    if (stack != nullptr && !stack->empty() && !invalidated) [[likely]] {
      detail::PassRun& top = stack->top();
      if (top.matches(static_cast<std::uint8_t>(kind), name.data(), name.size()) &&
          !stack->has_deferred && detail::is_innermost(top.token())) [[likely]] {
        detail::end_innermost_now();
        stack->pop();
        return;
      }
    }
    end_slow(kind, name, invalidated);
  }

  [[gnu::noinline]] void end_slow(Kind kind, ::llvm::StringRef name, bool invalidated) noexcept {
    detail::PassRunStack* const stack = detail::find_pass_run_stack(id);
    if (stack == nullptr) {  // no run begun on this thread (or none with a session)
      if (::jitscope::active()) unmatched.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    end_general(*stack, kind, name, invalidated);
  }

  // end() with Options::ir_size: the innermost run, when it is this one, its
  // span was recorded and no span is open inside it, gets "ir_size_after"
  // and ends at the time read before the count (through the library, which
  // also ends the spans begun while the inline path was closed: another
  // clock, NVTX emission); any other case counts nothing and takes end()'s
  // paths.
  [[gnu::noinline]] void end_sized(::llvm::StringRef name, const ::llvm::Any& ir) noexcept {
    detail::PassRunStack* const stack = detail::find_pass_run_stack(id);
    if (stack != nullptr && !stack->empty() && !stack->has_deferred) {
      detail::PassRun& top = stack->top();
      const std::uint64_t open_x8 = detail::open_spans_x8();
      if (top.matches(kPass, name.data(), name.size()) && top.session_word != 0 &&
          top.token().recorded() && open_x8 == top.depth_x8 && open_x8 < detail::kParkedDepth * 8) {
        const detail::SpanToken token = top.token();
        const std::uint64_t ts = detail::read_clock(token.session());
        detail::add_arg_bits(token, "ir_size_after", detail::ValueType::kUint, ir_size(ir));
        detail::end_span(token, ts);
        stack->pop();
        return;
      }
    }
    end(kPass, name, false);
  }

  // end()'s general path: deferred runs above, a run that is not the
  // innermost (those inside it end with it), an invalidated IR unit, a
  // host span open inside the run (its end deferred), or a span whose end
  // goes through the library.
  [[gnu::noinline]] void end_general(detail::PassRunStack& stack, Kind kind, ::llvm::StringRef name,
                                     bool invalidated) noexcept {
    stack.end_deferred();
    const std::int64_t at = stack.find(static_cast<std::uint8_t>(kind), name.data(), name.size());
    if (at < 0) {
      if (::jitscope::active()) unmatched.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    detail::PassRun& run = stack.base[at];
    if (invalidated) {
      if (run.session_word != 0 && run.token().recorded())
        detail::add_arg(run.token(), Arg("ir_invalidated", true));
      this->invalidated.fetch_add(1, std::memory_order_relaxed);
    }
    if (static_cast<std::size_t>(at) + 1 == stack.size() &&
        detail::PassRunStack::spans_open_inside(run) && can_defer()) {
      run.end_deferred = true;
      stack.has_deferred = true;
      return;
    }
    stack.end_from(static_cast<std::size_t>(at));
  }

  // A run with a host span open inside it waits for the tail, when it is
  // there. Else it ends now, and the callbacks registered after this get
  // the tail (tail_needed).
  bool can_defer() noexcept {
    if (tail_registered.load(std::memory_order_relaxed)) return true;
    // Loaded first: threads cutting runs at once do not take turns writing.
    if (!tail_needed().load(std::memory_order_relaxed))
      tail_needed().store(true, std::memory_order_relaxed);
    if (tail_said().load(std::memory_order_relaxed)) return false;
    detail::adapter_log_once(
        tail_said(),
        "jitscope::llvm: a span the host's callbacks opened inside a pass run was still open at "
        "the run's end: it ends with the run's span (marked jitscope_ended_with_outer); "
        "callbacks registered from now on wait for such spans, and "
        "Options::tail_from_first_pass makes the first ones wait too");
    return false;
  }

  // Set once a run of this process needed the tail: the callbacks registered
  // after it add it when their first pass runs. Internal (tests reset it).
  static std::atomic<bool>& tail_needed() noexcept {
    static std::atomic<bool> needed{false};
    return needed;
  }
  // can_defer's line was written (once per process). Internal (tests reset it).
  static std::atomic<bool>& tail_said() noexcept {
    static std::atomic<bool> said{false};
    return said;
  }

  // The after-callbacks at the back of LLVM's lists: the spans end() left
  // open for the host's later after-callbacks end now.
  [[gnu::noinline]] void end_deferred() noexcept {
    detail::PassRunStack* const stack = detail::find_pass_run_stack(id);
    if (stack != nullptr) stack->end_deferred();
  }

  void skip(::llvm::StringRef pass, const ::llvm::Any& ir) noexcept {
    if (!::jitscope::active()) return;
    skipped.fetch_add(1, std::memory_order_relaxed);
    if (!options.skipped_instants) return;
    const IrUnit unit = describe_ir(ir);
    ::jitscope::instant(
        "llvm_pass_skipped",
        {{"pass", view_of(pass)}, {"ir", unit.kind}, {"ir_name", view_of(unit.name)}});
  }

  const Options options;
  const std::string column;  // options.column's text, owned
  const std::uint64_t id = detail::new_adapter_id();
  // The tail after-callbacks are registered (AttachedCallbacks::before).
  std::atomic<bool> tail_registered{false};
  // The first before-callback is to register them.
  std::atomic<bool> tail_wanted{options.tail_from_first_pass ||
                                tail_needed().load(std::memory_order_relaxed)};
  std::atomic<std::uint64_t> passes{0}, invalidated{0}, skipped{0}, analyses{0}, unmatched{0},
      dropped{0};
};

inline Counts Registration::counts() const noexcept {
  Counts c;
  if (!state_) return c;
  const auto load = [](const std::atomic<std::uint64_t>& v) {
    return v.load(std::memory_order_relaxed);  // relaxed: a snapshot of tallies
  };
  c.passes = load(state_->passes);
  c.invalidated = load(state_->invalidated);
  c.skipped = load(state_->skipped);
  c.analyses = load(state_->analyses);
  c.unmatched = load(state_->unmatched);
  c.dropped = load(state_->dropped);
  return c;
}

// Which callbacks objects have jitscope's callbacks: an entry per object,
// made by register_callbacks and erased when the object's callbacks are
// destroyed (with the object), so an address is never trusted after that.
// Immortal: a callbacks object destroyed at exit may still erase its entry.
struct Attachments {
  struct Entry {
    const void* callbacks;  // a key only: never dereferenced
    std::weak_ptr<CallbackState> state;
  };
  std::mutex mutex;
  std::vector<Entry> entries;  // guarded by mutex
};
inline Attachments& attachments() noexcept {
  static Attachments* const all = new Attachments;  // never freed (see above)
  return *all;
}

// Owned by the callbacks registered with one callbacks object, and by
// nothing else (Registration shares the state, not this): it dies with them,
// and takes the object's entry in attachments() with it.
struct AttachedCallbacks {
  AttachedCallbacks(std::shared_ptr<CallbackState> s, const void* c) noexcept
      : state(std::move(s)), callbacks(c) {}
  AttachedCallbacks(const AttachedCallbacks&) = delete;
  AttachedCallbacks& operator=(const AttachedCallbacks&) = delete;
  ~AttachedCallbacks() {
    Attachments& all = attachments();
    std::lock_guard<std::mutex> lock(all.mutex);
    if (!listed) return;
    for (std::size_t i = 0; i < all.entries.size(); ++i) {
      if (all.entries[i].callbacks == callbacks) {
        all.entries[i] = std::move(all.entries.back());
        all.entries.pop_back();
        return;
      }
    }
  }
  // Registers, once, the after-callbacks at the back of the lists that end
  // deferred spans (CallbackState::end_deferred), when the first of
  // jitscope's before-callbacks runs, when they are wanted
  // (CallbackState::tail_wanted): by then the host has registered its own.
  // `callbacks` owns the callback that calls this, so it is alive.
  // Safe beside other threads: one that runs an after-callback list ran one
  // of jitscope's before-callbacks first, which waits here until the lists
  // are whole (the mutex, then the flag's release). Never later: a thread
  // may then be running the lists (another, or this one, inside an
  // after-callback that runs passes).
  JITSCOPE_ALWAYS_INLINE void before(const std::shared_ptr<AttachedCallbacks>& self,
                                     ::llvm::PassInstrumentationCallbacks& callbacks) noexcept {
    if (state->tail_wanted.load(std::memory_order_acquire)) [[unlikely]]
      add_tail(self, callbacks);
  }
  [[gnu::noinline]] void add_tail(const std::shared_ptr<AttachedCallbacks>& self,
                                  ::llvm::PassInstrumentationCallbacks& callbacks) noexcept {
    std::lock_guard<std::mutex> lock(tail_mutex);
    CallbackState& s = *state;
    if (!s.tail_wanted.load(std::memory_order_relaxed)) return;
    const bool ok = detail::adapter_guarded([&] {
      callbacks.registerAfterPassCallback(
          [self](::llvm::StringRef, const ::llvm::Any&, const ::llvm::PreservedAnalyses&) {
            self->state->end_deferred();
          });
      callbacks.registerAfterPassInvalidatedCallback(
          [self](::llvm::StringRef, const ::llvm::PreservedAnalyses&) {
            self->state->end_deferred();
          });
      if (s.options.analyses) {
        callbacks.registerAfterAnalysisCallback(
            [self](::llvm::StringRef, const ::llvm::Any&) { self->state->end_deferred(); });
      }
    });
    // Out of memory: no deferral (spans end at the front), and no retry.
    s.tail_registered.store(ok, std::memory_order_relaxed);  // published by the release
    s.tail_wanted.store(false, std::memory_order_release);
  }

  const std::shared_ptr<CallbackState> state;
  const void* const callbacks;  // a key only: never dereferenced
  bool listed = false;          // its entry is in attachments() (guarded by its mutex)
  std::mutex tail_mutex;        // add_tail's
};

inline Registration register_callbacks(::llvm::PassInstrumentationCallbacks& callbacks,
                                       const Options& options) noexcept {
  Registration r;
  using State = CallbackState;
  detail::adapter_guarded([&] {
    std::shared_ptr<State> s;
    std::shared_ptr<AttachedCallbacks> a;
    bool again = false;
    {
      Attachments& all = attachments();
      std::lock_guard<std::mutex> lock(all.mutex);
      for (const auto& entry : all.entries) {
        if (entry.callbacks == &callbacks) {
          r.state_ = entry.state.lock();  // the first registration's counts
          again = true;
          break;
        }
      }
      if (!again) {
        // No session: nothing registered (Options::attach_without_session).
        // After the lookup, so that callbacks attached earlier still give
        // back their registration ("Once").
        if (!options.attach_without_session && !::jitscope::active()) return;
        s = std::make_shared<State>(options);
        a = std::make_shared<AttachedCallbacks>(s, &callbacks);
        all.entries.push_back({&callbacks, s});
        a->listed = true;
      }
    }
    if (again) {
      // A second set of callbacks would double every span and count.
      static std::atomic<bool> said{false};
      detail::adapter_log_once(said,
                               "jitscope::llvm::register_callbacks: these "
                               "PassInstrumentationCallbacks have jitscope's callbacks already; "
                               "this call registers nothing (its options are ignored)");
      return;
    }
    // Befores run in registration order; the afters go to the front, so
    // that they run before the afters registered earlier: a span a callback
    // registered before ours opened around a pass ends after ours, and one
    // a callback registered later with ToFront (as LLVM's time-trace
    // instrumentations do) opened inside ours ends before it ("Order").
    ::llvm::PassInstrumentationCallbacks* const owner = &callbacks;
    // With Options::ir_size, callbacks of their own: the default ones never
    // test it.
    if (options.ir_size) {
      callbacks.registerBeforeNonSkippedPassCallback(
          [a, owner](::llvm::StringRef pass, const ::llvm::Any& ir) {
            a->before(a, *owner);
            a->state->template begin<true>(State::kPass, pass, ir);
          });
      callbacks.registerAfterPassCallback(
          [a](::llvm::StringRef pass, const ::llvm::Any& ir, const ::llvm::PreservedAnalyses&) {
            a->state->end_sized(pass, ir);
          },
          /*ToFront=*/true);
    } else {
      callbacks.registerBeforeNonSkippedPassCallback(
          [a, owner](::llvm::StringRef pass, const ::llvm::Any& ir) {
            a->before(a, *owner);
            a->state->begin(State::kPass, pass, ir);
          });
      callbacks.registerAfterPassCallback(
          [a](::llvm::StringRef pass, const ::llvm::Any&, const ::llvm::PreservedAnalyses&) {
            a->state->end(State::kPass, pass, false);
          },
          /*ToFront=*/true);
    }
    callbacks.registerAfterPassInvalidatedCallback(
        [a](::llvm::StringRef pass, const ::llvm::PreservedAnalyses&) {
          a->state->end(State::kPass, pass, true);
        },
        /*ToFront=*/true);
    callbacks.registerBeforeSkippedPassCallback(
        [a](::llvm::StringRef pass, const ::llvm::Any& ir) { a->state->skip(pass, ir); });
    if (options.analyses) {
      callbacks.registerBeforeAnalysisCallback(
          [a, owner](::llvm::StringRef name, const ::llvm::Any& ir) {
            a->before(a, *owner);
            a->state->begin(State::kAnalysis, name, ir);
          });
      callbacks.registerAfterAnalysisCallback(
          [a](::llvm::StringRef name, const ::llvm::Any&) {
            a->state->end(State::kAnalysis, name, false);
          },
          /*ToFront=*/true);
    }
    r.state_ = std::move(s);
  });
  return r;
}
#endif  // JITSCOPE_DISABLE

}  // namespace llvm
JITSCOPE_NAMESPACE_END
