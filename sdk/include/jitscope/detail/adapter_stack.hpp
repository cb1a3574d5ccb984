// What the compiler adapters (<jitscope/llvm.hpp>, <jitscope/mlir.hpp>)
// share: each thread's stack of the pass runs an adapter instance has begun,
// the boundary that keeps an exception out of LLVM's and MLIR's frames, a
// span written after the fact, and the adapters' one `jitscope:` line.
// Internal: include an adapter header instead. Not used under JITSCOPE_DISABLE.
#pragma once

#include <jitscope/compile.hpp>
#include <jitscope/jitscope.hpp>

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <optional>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace jitscope::detail {

// Runs `work`; an exception (out of memory copying a name) is dropped here,
// since LLVM and MLIR are built without exceptions and must never see one.
// False when it was dropped.
template <class Work>
bool adapter_guarded(Work&& work) noexcept {
#if defined(__cpp_exceptions) || defined(__EXCEPTIONS)
  try {
    work();
    return true;
  } catch (...) {
    return false;
  }
#else
  work();  // -fno-exceptions: out of memory ends the process, the host's choice
  return true;
#endif
}

// One pass, analysis or pipeline run begun on this thread, until its end
// (the MLIR adapter's; the LLVM adapter's runs are pass_run_stack.hpp's).
struct AdapterFrame {
  std::uint32_t kind = 0;   // the adapter's own enum
  std::uintptr_t key = 0;   // what its end callback is matched by (a pass, a name)
  std::uintptr_t key2 = 0;  // (the IR unit, a name's length, a parent thread)
  // Destroyed in reverse order: the span ends, then the column phase around
  // it, then the attachment (both carry the attached unit's compile_id).
  ThreadAttachment attachment;  // a worker's pipeline: the parent's unit
  PhaseHandle phase;            // an outermost run with Options::column
  std::optional<Span> span;
  // MLIR: a pass's: when the last pipeline it ran on its own thread ended
  // (its wait for workers begins after it); a pipeline's: run on a worker.
  std::uint64_t last_own_end = 0;
  bool threaded = false;

  bool matches(std::uint32_t k, std::uintptr_t a, std::uintptr_t b) const noexcept {
    return kind == k && key == a && key2 == b;
  }
};

// The calling thread's frames, one stack per adapter instance, so that two
// pass managers (or an LLVM and an MLIR one) never end each other's spans.
class AdapterStacks {
 public:
  using Frames = std::vector<AdapterFrame>;

  // This thread's stack for `owner`, or nullptr when it has none.
  Frames* find(std::uint64_t owner) noexcept {
    for (Entry& e : entries_) {
      if (e.owner == owner) return &e.frames;
    }
    return nullptr;
  }
  // True when another owner's innermost frame on this thread is exactly
  // (kind, key, key2): the same run, begun just before by a second instance
  // attached to the same pass manager.
  bool other_top_matches(std::uint64_t owner, std::uint32_t kind, std::uintptr_t key,
                         std::uintptr_t key2) const noexcept {
    for (const Entry& e : entries_) {
      if (e.owner != owner && !e.frames.empty() && e.frames.back().matches(kind, key, key2)) {
        return true;
      }
    }
    return false;
  }
  // The same, made when missing (may allocate: call inside adapter_guarded).
  Frames& get(std::uint64_t owner) {
    if (Frames* f = find(owner)) return *f;
    // An empty stack of another instance is reused: threads that see many
    // short-lived pass managers keep a few entries, not one per instance.
    for (Entry& e : entries_) {
      if (e.frames.empty()) {
        e.owner = owner;
        return e.frames;
      }
    }
    entries_.push_back(Entry{owner, {}});
    return entries_.back().frames;
  }

 private:
  struct Entry {
    std::uint64_t owner;
    Frames frames;
  };
  std::vector<Entry> entries_;
};

inline AdapterStacks& this_thread_adapter_stacks() noexcept {
  static thread_local AdapterStacks stacks;
  return stacks;
}

// The stack of `owner` made or grown to room for 8 more frames, or nullptr
// when that failed (out of memory). Out of line: rare.
[[gnu::noinline]] inline AdapterStacks::Frames* grow_frames(AdapterStacks& stacks,
                                                            std::uint64_t owner) noexcept {
  AdapterStacks::Frames* frames = nullptr;
  const bool grown = adapter_guarded([&] {
    frames = &stacks.get(owner);
    frames->reserve(frames->capacity() < 8 ? 8 : 2 * frames->capacity());
  });
  return grown ? frames : nullptr;
}
// This thread's stack of `owner` with room for one more frame, or nullptr
// (out of memory: the run is dropped). With the room made first, nothing
// after it allocates or throws, and a run needs no guard (an exception
// handler's frame took about 25 instructions a run).
JITSCOPE_ALWAYS_INLINE AdapterStacks::Frames* frames_with_room(AdapterStacks& stacks,
                                                               std::uint64_t owner) noexcept {
  AdapterStacks::Frames* frames = stacks.find(owner);
  if (frames != nullptr && frames->size() < frames->capacity()) [[likely]]
    return frames;
  return grow_frames(stacks, owner);
}

// A process-unique id per adapter instance (an address could be reused).
inline std::uint64_t new_adapter_id() noexcept {
  static std::atomic<std::uint64_t> last{0};
  return last.fetch_add(1, std::memory_order_relaxed) + 1;  // relaxed: uniqueness only
}

// The column phase around an outermost run: its time goes into `column` of
// the unit current on this thread. Exclusive, so that column phases the
// host opens inside a pass are not counted twice. Its trace slice is named
// by the column without "_us" ("llvm_passes" for "llvm_passes_us").
inline PhaseHandle begin_column_phase(std::string_view column) noexcept {
  if (column.empty()) return {};
  std::string_view key = column;
  if (key.size() > 3 && key.substr(key.size() - 3) == "_us") key.remove_suffix(3);
  PhaseOptions options;
  options.column = column;
  options.exclusive = true;
  return begin_phase(key, options);
}

// A span that began and ended earlier, written now on this thread as a
// child of its innermost open span: `begin` and `end` are times of
// `session`'s clock (read_clock), read on any thread. The trace keeps it
// inside that span and after the spans that ended there before it (the
// writer's ties: trace_writer.hpp). Nothing when the session changed since
// or the interval is empty. `name` must be a string literal.
inline void record_past_span(std::uint32_t session, std::uint64_t begin, std::uint64_t end,
                             const char* name, std::initializer_list<Arg> args) noexcept {
  if (session == 0 || session != session_word() || end <= begin) return;
  const SpanToken token = begin_static(session, begin, name);
  if (token.session() == 0) return;
  if (token.recorded()) {
    for (const Arg& a : args) add_arg(token, a);
  }
  end_span(token, end);
}

// The adapters' one line for a misuse: "jitscope: <message>" on stderr in
// one write(2), the first time `said` is seen false (once per process).
inline void adapter_log_once(std::atomic<bool>& said, std::string_view message) noexcept {
  if (said.exchange(true, std::memory_order_relaxed)) return;  // relaxed: one writer is all
  char line[512];
  constexpr std::string_view kPrefix = "jitscope: ";
  std::size_t n = kPrefix.size();
  std::memcpy(line, kPrefix.data(), n);
  const std::size_t len =
      message.size() < sizeof(line) - n - 1 ? message.size() : sizeof(line) - n - 1;
  std::memcpy(line + n, message.data(), len);
  n += len;
  line[n++] = '\n';
  const int saved = errno;
  for (std::size_t off = 0; off < n;) {
    const ssize_t w = ::write(STDERR_FILENO, line + off, n - off);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) break;
    off += static_cast<std::size_t>(w);
  }
  errno = saved;
}

// The innermost frame that matches, or -1.
inline std::ptrdiff_t find_frame(const AdapterStacks::Frames& frames, std::uint32_t kind,
                                 std::uintptr_t key, std::uintptr_t key2) noexcept {
  for (std::ptrdiff_t i = static_cast<std::ptrdiff_t>(frames.size()) - 1; i >= 0; --i) {
    if (frames[static_cast<std::size_t>(i)].matches(kind, key, key2)) return i;
  }
  return -1;
}

// True when the `n` bytes at `a` and `b` are the same: 8 bytes at a time,
// the last 8 overlapping, where a call to memcmp took about 30
// instructions for a pass's name (callgrind).
JITSCOPE_ALWAYS_INLINE bool same_bytes(const char* a, const char* b, std::size_t n) noexcept {
  if (n < 8) {
    if (n < 4) return std::memcmp(a, b, n) == 0;
    std::uint32_t x, y, u, v;  // the first 4 and the last 4, overlapping
    std::memcpy(&x, a, 4);
    std::memcpy(&y, b, 4);
    std::memcpy(&u, a + n - 4, 4);
    std::memcpy(&v, b + n - 4, 4);
    return x == y && u == v;
  }
  std::uint64_t x, y;
  for (std::size_t i = 0; i + 8 < n; i += 8) {
    std::memcpy(&x, a + i, 8);
    std::memcpy(&y, b + i, 8);
    if (x != y) return false;
  }
  std::memcpy(&x, a + n - 8, 8);
  std::memcpy(&y, b + n - 8, 8);
  return x == y;
}

// stable_name(name), through this thread's cache of the names it has seen,
// by the view's address (and its bytes, compared: an address may be reused
// for other text). For names whose views stay put (LLVM's pass names): a
// repeat costs a hash and a compare, no lock. In the host's own TLS (its
// default model), trivially destructible: no guard, nothing at thread exit.
inline const char* kept_name(std::string_view name) noexcept {
  struct Entry {
    const char* data;
    std::size_t size;
    const char* kept;
  };
  // 4-way: a hundred names in one slot each would collide by the dozen
  // (the O2 pipeline's did, and took the lock on every run of them).
  static thread_local Entry cache[256];
  static thread_local std::uint8_t next_way[64];
  const auto address = reinterpret_cast<std::uintptr_t>(name.data());
  const std::size_t set = ((address ^ name.size()) * 0x9E3779B97F4A7C15u) >> 58;
  Entry* ways = &cache[set * 4];
  for (int w = 0; w < 4; ++w) {
    const Entry& e = ways[w];
    if (e.data != name.data() || e.size != name.size()) continue;
    // Not kept (the table full): remembered too, so that a repeat takes no
    // lock; its text unchecked, which costs only a copied name.
    if (e.kept == nullptr) return nullptr;
    if (same_bytes(e.kept, name.data(), name.size())) return e.kept;
  }
  const char* kept = stable_name(name);
  if (name.data() != nullptr) ways[next_way[set]++ % 4] = {name.data(), name.size(), kept};
  return kept;
}

// A run's span and its args (at most kMaxBeginArgs) through the library
// (which clamps a long name or string and counts a dropped span), by its
// kept name or, where the name was not kept, a copied one: the adapters'
// path when the inline write cannot take the run.
inline SpanToken begin_adapter_token(std::uint32_t session, const char* kept, std::string_view name,
                                     const Arg* args, std::size_t n) noexcept {
  const std::uint64_t ts = read_clock(session);
  if (kept != nullptr) return begin_static_args(session, ts, kept, args, n);
  return begin_dynamic_args(session, ts, name, args, n);
}
inline void begin_adapter_span(std::uint32_t session, const char* kept, std::string_view name,
                               const Arg* args, std::size_t n, std::optional<Span>& span) noexcept {
  span.emplace(kAdoptToken, begin_adapter_token(session, kept, name, args, n));
}

// A run's span with its args (keys: literals) in one inline write, by its
// kept name. False: nothing written (no room, the inline path's gate
// closed, a string arg over kInlineNameBytes).
inline bool begin_args_inline(std::uint32_t session, const char* kept, const Arg* args,
                              std::size_t n, SpanToken& token) noexcept {
  std::uint64_t slots = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (args[i].type != ValueType::kString) {
      ++slots;
      continue;
    }
    if (args[i].str.size() > kInlineNameBytes) [[unlikely]]
      return false;
    slots += string_arg_slots(args[i].str.size());
  }
  SpanBatch batch;
  if (!begin_span_batch(session, kept, slots, token, batch)) [[unlikely]]
    return false;
  std::uint64_t at = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const Arg& a = args[i];
    if (a.type == ValueType::kString) {
      at += put_string_arg(batch, at, a.key, a.str);
    } else {
      put_scalar_arg(batch, at++, a.key, a.type, a.type == ValueType::kBool ? a.b : a.u64);
    }
  }
  commit_batch(batch, slots);
  return true;
}

// A run's span with its args: inline where it can, else the library's.
inline void begin_run_span(std::uint32_t session, std::string_view name, const Arg* args,
                           std::size_t n, std::optional<Span>& span) noexcept {
  // A name that is the same text on every run (a pass's, a literal): kept
  // once, the span takes it by pointer.
  const char* kept = kept_name(name);
  SpanToken token;
  if (kept != nullptr && begin_args_inline(session, kept, args, n, token)) [[likely]] {
    span.emplace(kAdoptToken, token);
  } else {
    begin_adapter_span(session, kept, name, args, n, span);
  }
}

// Room for up to N args made in place (Arg has no empty form), for
// begin_run_span.
template <std::size_t N>
class ArgList {
 public:
  template <class... V>
  void add(V&&... v) noexcept {
    ::new (static_cast<void*>(storage_ + n_ * sizeof(Arg))) Arg(std::forward<V>(v)...);
    ++n_;
  }
  const Arg* data() const noexcept { return reinterpret_cast<const Arg*>(storage_); }
  std::size_t size() const noexcept { return n_; }

 private:
  static_assert(std::is_trivially_destructible_v<Arg>);
  static_assert(N <= kMaxBeginArgs, "begin_adapter_token writes them with the Begin");
  alignas(Arg) unsigned char storage_[N * sizeof(Arg)];
  std::size_t n_ = 0;
};

// This thread's open spans, recorded or not, times 8 (HotThread::depth_x8).
inline std::uint64_t open_spans_x8() noexcept { return t_hot->depth_x8; }

// Ends frame `index` and pops it with every frame above it. Those above
// never saw their end callback (a pass that bailed out): jitscope ends
// their spans with this one, marks them "jitscope_ended_with_outer" and
// counts them; popping them only ends their phases and attachments.
inline void end_frames_from(AdapterStacks::Frames& frames, std::size_t index) noexcept {
  if (index >= frames.size()) return;
  if (frames[index].span) frames[index].span->end();
  while (frames.size() > index) frames.pop_back();  // spans first, then attachments
}

}  // namespace jitscope::detail
