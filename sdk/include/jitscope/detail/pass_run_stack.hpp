// The LLVM adapter's per-thread stacks of open pass runs, made for the
// cost of a pass run: a run is 32 trivially copyable bytes (its key, its
// span's token, its depth), the outermost run's column phase is kept
// beside the stack (only the outermost has one), and the stack a thread
// used last is found through one thread-local pointer. adapter_stack.hpp's
// AdapterFrame, with its phase, attachment and optional span made and
// destroyed on every run, cost about 100 instructions a run more.
// Internal: include <jitscope/llvm.hpp>. Not used under JITSCOPE_DISABLE.
#pragma once

#include <jitscope/compile.hpp>
#include <jitscope/detail/adapter_stack.hpp>

#include <cstdint>
#include <cstdlib>
#include <new>
#include <type_traits>
#include <vector>

namespace jitscope::detail {

// One pass or analysis run begun on this thread, until its end callback:
// 32 bytes, so that the top is one shift away.
struct PassRun {
  const char* key = nullptr;       // the run's name (its view's data) and its size:
  std::uint64_t serial_word = 0;   // what the end callback is matched by;
  std::uint32_t session_word = 0;  // its span's token (session 0: no span,
  std::uint32_t key_size = 0;      // out of memory)
  std::uint32_t depth_x8 = 0;      // this thread's open spans (times 8) after it began
  std::uint8_t kind = 0;           // the adapter's own enum
  bool end_deferred = false;       // its end waits for the tail after-callback

  bool matches(std::uint8_t k, const char* a, std::size_t n) const noexcept {
    return key == a && key_size == n && kind == k;
  }
  SpanToken token() const noexcept { return {session_word, serial_word}; }
  void set_token(SpanToken t) noexcept {
    session_word = t.session_word;
    serial_word = t.serial_word;
  }
};
static_assert(std::is_trivially_copyable_v<PassRun> && sizeof(PassRun) == 32);

// One adapter instance's open runs on one thread. Made once per thread and
// instance (an empty one is reused by the next instance), never moved.
struct PassRunStack {
  std::uint64_t owner = 0;
  PassRun* base = nullptr;    // malloc'd: a run is trivially copyable
  PassRun* next = nullptr;    // one past the top
  PassRun* limit = nullptr;   // one past the room
  bool has_deferred = false;  // a run on top waits for the tail (only the top ones do)
  PhaseHandle outer_phase;    // the outermost run's column phase (Options::column)

  bool empty() const noexcept { return next == base; }
  std::size_t size() const noexcept { return static_cast<std::size_t>(next - base); }
  PassRun& top() noexcept { return next[-1]; }
  // Pops the top run, whose span has ended; the last one ends the column
  // phase around it (out of line: the usual pop saves no register).
  JITSCOPE_ALWAYS_INLINE void pop() noexcept {
    if (--next == base && outer_phase.open()) [[unlikely]]
      end_outer_phase();
  }
  [[gnu::noinline]] void end_outer_phase() noexcept { outer_phase.end(); }
  static void end_span_of(const PassRun& r) noexcept {
    if (r.session_word != 0) end_span_now(r.token());
  }
  // Ends the span of run `index` and pops it with every run above it. Those
  // above never saw their end callback (a pass that bailed out): their
  // spans end with it, out of order, so the library marks them
  // "jitscope_ended_with_outer" and counts them; ending each afterwards does
  // nothing more. The last run popped ends the column phase around it.
  void end_from(std::size_t index) noexcept {
    if (index >= size()) return;
    end_span_of(base[index]);
    while (size() > index + 1) end_span_of(*--next);
    next = base + index;
    if (empty() && outer_phase.open()) outer_phase.end();
  }
  // Ends the deferred runs on top (innermost first). Rare: the flag's test
  // inline at every callback, the work out of line.
  [[gnu::noinline]] void end_deferred_now() noexcept {
    while (!empty() && top().end_deferred) end_from(size() - 1);
    has_deferred = false;
  }
  JITSCOPE_ALWAYS_INLINE void end_deferred() noexcept {
    if (has_deferred) [[unlikely]]
      end_deferred_now();
  }
  // The innermost run that matches, or -1.
  std::ptrdiff_t find(std::uint8_t kind, const char* key, std::size_t key_size) const noexcept {
    for (std::ptrdiff_t i = next - base - 1; i >= 0; --i) {
      if (base[i].matches(kind, key, key_size)) return i;
    }
    return -1;
  }
  // True when spans begun after run `r`'s (the host's, opened inside it)
  // are still open, so that ending it now would cut them. Past depth 255
  // the count is not kept: false.
  static bool spans_open_inside(const PassRun& r) noexcept {
    const std::uint64_t now = open_spans_x8();
    return r.session_word != 0 && r.depth_x8 != 0 && now > r.depth_x8 && now < kParkedDepth * 8;
  }

  ~PassRunStack() {
    end_from(0);
    std::free(base);
  }
};

// The stack this thread used last: one load finds it on every callback but
// the first of a thread or of an instance. Trivially destructible, in the
// host's own TLS, so no guard.
inline PassRunStack*& last_pass_run_stack() noexcept {
  static thread_local PassRunStack* last = nullptr;
  return last;
}
// This thread's stacks, owned; their destructor (at thread exit) ends the
// runs left open. Reached only out of line.
struct PassRunStacks {
  std::vector<PassRunStack*> all;
  ~PassRunStacks() {
    last_pass_run_stack() = nullptr;
    gone() = true;
    for (PassRunStack* s : all) delete s;
  }
  // Set once the thread's stacks were destroyed (a callback from another
  // thread-local's destructor finds none).
  static bool& gone() noexcept {
    static thread_local bool destroyed = false;
    return destroyed;
  }
};

// The stack of `owner` on this thread, made when `make` and missing, with
// room for one more run when `make`; nullptr when it has none (or out of
// memory). Also caches it as the last one. Out of line: the first callback
// of a thread or instance, or another instance's in between, or growth.
[[gnu::noinline]] inline PassRunStack* pass_run_stack_slow(std::uint64_t owner,
                                                           bool make) noexcept {
  if (PassRunStacks::gone()) return nullptr;
  static thread_local PassRunStacks stacks;
  PassRunStack* found = nullptr;
  for (PassRunStack* s : stacks.all) {
    if (s->owner == owner) {
      found = s;
      break;
    }
  }
  if (found == nullptr) {
    if (!make) return nullptr;
    // An empty stack of another instance is reused: threads that see many
    // short-lived pass managers keep a few stacks, not one per instance.
    for (PassRunStack* s : stacks.all) {
      if (s->empty() && !s->outer_phase.open()) {
        found = s;
        break;
      }
    }
    if (found == nullptr) {
      auto* made = new (std::nothrow) PassRunStack;
      if (made == nullptr || !adapter_guarded([&] { stacks.all.push_back(made); })) {
        delete made;
        return nullptr;
      }
      found = made;
    }
    found->owner = owner;
  }
  if (make && found->next == found->limit) {
    const std::size_t size = found->size();
    const std::size_t grown = size < 8 ? 8 : 2 * size;
    void* runs = std::realloc(found->base, grown * sizeof(PassRun));
    if (runs == nullptr) return nullptr;
    found->base = static_cast<PassRun*>(runs);
    found->next = found->base + size;
    found->limit = found->base + grown;
  }
  last_pass_run_stack() = found;
  return found;
}

// This thread's stack of `owner` with room for one more run, or nullptr
// (out of memory: the run is dropped).
JITSCOPE_ALWAYS_INLINE PassRunStack* pass_run_stack_with_room(std::uint64_t owner) noexcept {
  PassRunStack* s = last_pass_run_stack();
  if (s != nullptr && s->owner == owner && s->next != s->limit) [[likely]]
    return s;
  return pass_run_stack_slow(owner, true);
}
// The stack this thread used last when it is `owner`'s, else nullptr: one
// load and a test, no call (a caller's usual path saves no register).
JITSCOPE_ALWAYS_INLINE PassRunStack* last_pass_run_stack_of(std::uint64_t owner) noexcept {
  PassRunStack* s = last_pass_run_stack();
  return s != nullptr && s->owner == owner ? s : nullptr;
}
// This thread's stack of `owner`, or nullptr when it has none.
JITSCOPE_ALWAYS_INLINE PassRunStack* find_pass_run_stack(std::uint64_t owner) noexcept {
  if (PassRunStack* s = last_pass_run_stack_of(owner)) [[likely]]
    return s;
  return pass_run_stack_slow(owner, false);
}

}  // namespace jitscope::detail
