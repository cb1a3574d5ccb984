// Per-sequence interning of event names, categories and debug annotation
// names (docs/perfetto-format.md, "Sequences and interning"). Runs on the
// flusher only.
//
// An id is defined by appending an entry to `pending`, the body of an
// InternedData message that the next packet written on the sequence
// carries; the writer clears `pending` only once that packet is committed,
// so a packet cut by the cap never takes a definition with it.
//
// Bounded: at most kMaxEntries names per kind and kMaxBytes of name bytes
// per sequence; past that intern() returns 0 and the caller writes the name
// inline, so memory stays flat however long the trace. Static names (string
// literals) are looked up by pointer first in a small direct-mapped cache;
// forget_static() drops those pointers when an image is unloaded.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace jitscope::detail::pfw {

class Interner {
 public:
  // Its entries point into its own tables: moved, never copied.
  Interner() = default;
  Interner(const Interner&) = delete;
  Interner& operator=(const Interner&) = delete;
  Interner(Interner&&) = default;
  Interner& operator=(Interner&&) = default;

  enum Kind : unsigned { kName = 0, kCategory = 1, kAnnotation = 2 };
  static constexpr std::size_t kMaxEntries = 4096;
  static constexpr std::size_t kMaxBytes = 256 * 1024;

  // The id of `s` (1, 2, ...), defined in `pending` if new; 0: the table is
  // full, write `s` inline.
  std::uint64_t intern(Kind kind, std::string_view s);
  // The same for a static name; cached by pointer (a slot of this epoch:
  // its definition is in `pending` or the file since the last restart).
  std::uint64_t intern_static(Kind kind, const char* s) {
    // Fibonacci hashing: literals lie a few bytes apart, so the low bits
    // alone would put neighbours in one slot.
    const std::uint64_t h = reinterpret_cast<std::uintptr_t>(s) * 0x9e3779b97f4a7c15ull;
    Slot& slot = cache_[kind][h >> (64 - kCacheBits)];
    if (slot.ptr == s && slot.epoch == epoch_ && slot.ptr != nullptr) [[likely]]
      return slot.iid;
    const std::uint64_t iid = intern(kind, s);
    if (iid != 0) slot = {s, iid, epoch_};
    return iid;
  }
  // Static name pointers may name other strings from now on.
  void forget_static() noexcept;
  // A new file (or first use): no id is defined.
  void clear();
  // The sequence starts again (a new file, or a window's part): every id
  // keeps its number, none is defined, and each is defined again by the
  // next packet that uses it. Ids already inside encoded bytes (args
  // encoded before their packet is written) are defined again by
  // define_annotation_names.
  void restart() noexcept;
  // Defines (once since the restart) the debug annotation names whose ids
  // `annotations` (TrackEvent debug_annotations fields, encoded) use,
  // nested entries included.
  void define_annotation_names(std::string_view annotations);
  // Appends to `defs` (an InternedData body) the definitions of the names
  // `annotations` uses, whatever was defined: for a packet outside the
  // sequence's stream (a snapshot's). Changes nothing here.
  void append_annotation_names(std::string_view annotations, std::string& defs) const;

  // The definitions the packet being built must carry: those made since
  // the last take() (earlier packets of the same commit carry the rest).
  std::string_view take() noexcept {
    const std::string_view out = std::string_view(pending).substr(taken_);
    taken_ = pending.size();
    return out;
  }
  // After a commit: kept (its definitions are in the file) or cut (every
  // pending definition goes with the next packet again).
  void settle(bool committed) noexcept {
    if (committed && taken_ != 0) pending.erase(0, taken_);  // those taken are in the file
    taken_ = 0;
  }
  bool has_pending() const noexcept { return taken_ < pending.size(); }

  std::string pending;  // InternedData body: definitions not yet in a committed packet

 private:
  static constexpr unsigned kCacheBits = 6;
  static constexpr std::size_t kCacheSlots = std::size_t{1} << kCacheBits;
  struct Slot {
    const char* ptr = nullptr;
    std::uint64_t iid = 0;
    std::uint32_t epoch = 0;
  };
  // By id - 1: its name (the table's key) and the epoch it was last
  // defined in.
  struct Entry {
    const std::string* name;
    std::uint32_t epoch;
  };
  void mark(Kind kind, std::uint64_t iid);
  static void append_definition(std::string& out, Kind kind, std::uint64_t iid, std::string_view s);
  struct Hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const noexcept {
      return std::hash<std::string_view>{}(s);
    }
  };
  std::unordered_map<std::string, std::uint64_t, Hash, std::equal_to<>> tables_[3];
  std::vector<Entry> entries_[3];
  std::uint32_t epoch_ = 1;
  std::size_t bytes_ = 0;
  std::size_t taken_ = 0;
  Slot cache_[3][kCacheSlots];
};

// `s` as valid UTF-8: invalid bytes become U+FFFD exactly as the JSON writer
// escapes them, so both forms carry the same text. Returns `s` itself when
// it is valid (the common case: no copy), else `repaired`.
std::string_view valid_utf8(std::string_view s, std::string& repaired);

}  // namespace jitscope::detail::pfw
