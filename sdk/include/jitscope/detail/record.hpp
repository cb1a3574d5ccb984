// The fixed-size record carried by the per-thread rings. Internal: the layout
// may change between versions. The ring's producer (the inline hot path in
// hot.hpp included) writes it and the flusher's writer reads it; a program
// built against these headers is built against this library version.
#pragma once

#include <jitscope/detail/value_type.hpp>

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace jitscope::detail {

enum class RecordKind : std::uint8_t {
  kBegin = 1,       // span opened: ts, name (or dynamic name bytes follow); index unused
  kEnd = 2,         // innermost recorded span closed: ts
  kArg = 3,         // arg on the `index`-th recorded open span (from 0): name = key
  kInstant = 4,     // ts, name; `index` = number of kArg records that follow
  kCounter = 5,     // ts, name, value.f64
  kThreadName = 6,  // dynamic name bytes follow
  // An event another library emitted (NVTX capture): ts = start ticks,
  // value.u64 = end ticks (kRange, kAsyncRange), type = the payload's
  // ValueType (kNone: none), index = CapturedKind. The next slot is a
  // CapturedExtra; dynamic name bytes follow it.
  kCaptured = 7,
  // A CUDA API call on this thread that the CUPTI collector correlates
  // (launch, copy, set, graph launch, module load), written at its entry:
  // ts = the launched kernel's interned name (a const std::string*, 0:
  // none; its times come from CUPTI), value.u64 = CUPTI's correlation id,
  // name = the GpuUnitTag* of the compile unit that built the launched
  // function (nullptr: none), index = GpuCallRole. The flusher pairs it with
  // the innermost span open on the thread.
  kGpuCall = 8,
};

enum class CapturedKind : std::uint8_t {
  kRange = 0,       // push/pop: a slice on the recording thread
  kMark = 1,        // an instant
  kAsyncRange = 2,  // start/end, possibly across threads: CapturedExtra::tid started it
  kThreadName = 3,  // names OS thread CapturedExtra::tid
};

// Flags on a record.
inline constexpr std::uint8_t kFlagDynamicName = 1;  // name bytes follow, `name_len` long
inline constexpr std::uint8_t kFlagTruncated = 2;    // a dynamic string was cut to fit the ring
// On a kBegin: what the slice is. kFlagUnit: a compile unit; value.u64 holds
// its packed compile id (frame << 32 | attempt), and the flusher stamps that
// id on every event of the thread until the slice ends.
inline constexpr std::uint8_t kFlagUnit = 4;
inline constexpr std::uint8_t kFlagPhase = 8;
inline constexpr std::uint8_t kFlagCompileEvent = 16;
// On a kArg of kString: its bytes (value.u64 of them, at most
// kInlineStringBytes) are in the record's `ts` word and no payload slot
// follows. A one-byte frame name took a slot of its own before.
inline constexpr std::uint8_t kFlagInlineString = 32;
inline constexpr std::size_t kInlineStringBytes = 8;

// One ring slot. Dynamic bytes (a runtime-built name, a string value) travel
// in the slots right after their record, as raw bytes, pushed in the same
// all-or-nothing batch, so the reader always sees a record and its payload
// together.
struct Record {
  std::uint64_t ts;  // clock ticks (see clock.hpp); 0 where unused
  const char* name;  // static name or arg key; nullptr when kFlagDynamicName
  union {
    std::int64_t i64;
    std::uint64_t u64;  // kUint value; for kString: the string's byte length
    double f64;
  } value;
  // The last 8 bytes are one word to the hot path (record_word), kind first
  // so that a record without a name length is a 32-bit immediate store.
  RecordKind kind;
  ValueType type;
  std::uint8_t flags;
  std::uint8_t index;  // kArg: the target span among the recorded open ones; kInstant: arg count
  std::uint32_t name_len;  // dynamic name length in bytes
};

static_assert(sizeof(Record) == 32, "a ring slot is pinned at 32 bytes");

// kind, type, flags, index and name_len as the one 8-byte word they form
// (little-endian), so the hot path writes them with one store.
constexpr std::uint64_t record_word(RecordKind kind, ValueType type, std::uint8_t flags,
                                    std::uint8_t index, std::uint32_t name_len = 0) noexcept {
  return std::uint64_t{static_cast<std::uint8_t>(kind)} |
         std::uint64_t{static_cast<std::uint8_t>(type)} << 8 | std::uint64_t{flags} << 16 |
         std::uint64_t{index} << 24 | std::uint64_t{name_len} << 32;
}
inline void set_record_word(Record& r, std::uint64_t word) noexcept {
  static_assert(offsetof(Record, kind) == 24 && offsetof(Record, name_len) == 28);
  static_assert(std::endian::native == std::endian::little, "record_word's byte order");
  std::memcpy(reinterpret_cast<char*>(&r) + offsetof(Record, kind), &word, sizeof word);
}
static_assert(std::is_trivially_copyable_v<Record>);

// The slot after a kCaptured record.
struct CapturedExtra {
  const void* domain;      // the source's domain (captured_names.hpp), never freed
  std::uint64_t payload;   // bits of the payload value, typed by Record::type
  std::uint64_t id;        // kAsyncRange: the range id
  std::uint32_t category;  // the source's category number; 0: none
  std::int32_t tid;        // kAsyncRange: thread that started it; kThreadName: the thread named
};
static_assert(sizeof(CapturedExtra) == 32, "fills exactly one slot");
static_assert(std::is_trivially_copyable_v<CapturedExtra>);

inline constexpr std::size_t kRecordBytes = sizeof(Record);

// Slots needed to carry `bytes` of dynamic payload.
constexpr std::size_t payload_slots(std::size_t bytes) noexcept {
  return (bytes + kRecordBytes - 1) / kRecordBytes;
}

}  // namespace jitscope::detail
