// WindowSink (sink/window_sink.hpp): the flight recorder's window. Each test
// writes numbered pieces in writes of uneven sizes, then requires that the
// window holds exactly a run of the newest pieces, whole and in order, that
// it uses the room it has, and that its memory stays flat.
#include "sink/window_sink.hpp"
#include "base/proto_wire.hpp"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace jitscope::testing {
namespace {

using detail::Framing;
using detail::WindowSink;
namespace wire = detail::wire;

// The pieces of `framing` numbered first..last-1, each `pad` bytes of
// filler long (varied by n so that sizes differ).
std::string json_event(std::uint64_t n, std::size_t pad) {
  return ",\n{\"name\":\"e" + std::to_string(n) + "\",\"pad\":\"" + std::string(pad + n % 7, 'x') +
         "\"}";
}
std::string packet(std::uint64_t n, std::size_t pad) {
  std::string body;
  wire::append_varint_field(body, (1 << 3) | 0, n);  // tags already shifted
  wire::append_bytes_field(body, (2 << 3) | 2, std::string(pad + n % 7, 'y'));
  std::string out;
  wire::append_bytes_field(out, (1 << 3) | 2, body);  // Trace.packet
  return out;
}
std::string piece(Framing framing, std::uint64_t n, std::size_t pad) {
  return framing == Framing::kPackets ? packet(n, pad) : json_event(n, pad);
}

// The numbers of the pieces in `held`, in order; fails the test on a piece
// that is not whole.
std::vector<std::uint64_t> numbers(Framing framing, std::string_view held) {
  std::vector<std::uint64_t> out;
  if (framing == Framing::kPackets) {
    std::size_t at = 0;
    while (at < held.size()) {
      const std::size_t end = wire::field_end(held, at);
      EXPECT_NE(end, 0u) << "a packet cut at " << at;
      if (end == 0) break;
      std::string_view body = held.substr(at, end - at);
      // The packet's tag and length, then its field 1's tag and value.
      const char* p = body.data();
      const char* const stop = body.data() + body.size();
      std::uint64_t tag = 0, length = 0, n = 0;
      bool truncated = false;
      EXPECT_TRUE(wire::read_varint(&p, stop, &tag, &truncated));
      EXPECT_TRUE(wire::read_varint(&p, stop, &length, &truncated));
      EXPECT_TRUE(wire::read_varint(&p, stop, &tag, &truncated));
      EXPECT_TRUE(wire::read_varint(&p, stop, &n, &truncated));
      out.push_back(n);
      at = end;
    }
    return out;
  }
  std::size_t at = 0;
  while (at < held.size()) {
    const std::string_view start = ",\n{\"name\":\"e";
    EXPECT_EQ(held.substr(at, start.size()), start) << "not at an event's start: " << at;
    const std::size_t end = held.find(",\n", at + 2);
    const std::string_view event =
        held.substr(at, (end == std::string_view::npos ? held.size() : end) - at);
    EXPECT_EQ(event.back(), '}') << "an event cut short";
    out.push_back(std::stoull(std::string(event.substr(start.size()))));
    at += event.size();
  }
  return out;
}

struct Case {
  Framing framing;
  std::size_t capacity;
  std::size_t pad;
};

class Window : public ::testing::TestWithParam<Case> {};

TEST_P(Window, HoldsTheNewestPiecesWholeInOrderAndUsesItsRoom) {
  const Case c = GetParam();
  WindowSink window(c.capacity, c.framing);
  std::mt19937 random(7);
  std::uint64_t next = 0;
  std::size_t largest = 0;
  for (int write = 0; write < 2000; ++write) {
    // As the writer hands them: a run of whole pieces per write.
    std::string bytes;
    const int pieces = 1 + static_cast<int>(random() % 40);
    for (int i = 0; i < pieces; ++i) {
      const std::string p = piece(c.framing, next++, c.pad);
      largest = std::max(largest, p.size());
      bytes += p;
    }
    window.write(bytes);
    ASSERT_LE(window.held(), c.capacity);
  }
  std::string held;
  window.append_to(held);
  ASSERT_EQ(held.size(), window.held());
  const std::vector<std::uint64_t> got = numbers(c.framing, held);
  ASSERT_FALSE(got.empty());
  EXPECT_EQ(got.back(), next - 1) << "the newest piece is held";
  for (std::size_t i = 1; i < got.size(); ++i) ASSERT_EQ(got[i], got[i - 1] + 1) << i;
  // The room is used: at most the oldest chunk's worth (and a piece) short.
  EXPECT_GE(window.held() + window.chunk_bytes() + largest, c.capacity);
  EXPECT_EQ(window.bytes_dropped() + window.held(), [&] {
    std::uint64_t total = 0;
    for (std::uint64_t n = 0; n < next; ++n) total += piece(c.framing, n, c.pad).size();
    return total;
  }());
  // Flat: the window and about one chunk, however much went through it.
  EXPECT_LE(window.allocated(), c.capacity + 2 * window.chunk_bytes());
}

INSTANTIATE_TEST_SUITE_P(Forms, Window,
                         ::testing::Values(Case{Framing::kTraceEvents, 64 * 1024, 40},
                                           Case{Framing::kTraceEvents, 1 << 20, 200},
                                           Case{Framing::kPackets, 64 * 1024, 20},
                                           Case{Framing::kPackets, 1 << 20, 300}));

TEST(WindowSink, APieceBiggerThanAChunkTakesOneOfItsOwnAndOneBiggerThanTheWindowPushesNothingOut) {
  WindowSink window(64 * 1024, Framing::kTraceEvents);
  const std::size_t chunk = window.chunk_bytes();
  window.write(json_event(0, 10) + json_event(1, 2 * chunk) + json_event(2, 10));
  std::string held;
  window.append_to(held);
  EXPECT_EQ(numbers(Framing::kTraceEvents, held), (std::vector<std::uint64_t>{0, 1, 2}));
  window.write(json_event(3, 100 * 1024));  // larger than the whole window
  window.write(json_event(4, 10));
  held.clear();
  window.append_to(held);
  EXPECT_EQ(numbers(Framing::kTraceEvents, held), (std::vector<std::uint64_t>{0, 1, 2, 4}));
  EXPECT_EQ(window.bytes_dropped(), json_event(3, 100 * 1024).size());
  EXPECT_LE(window.allocated(), 64 * 1024 + 2 * chunk);
}

// By part (the Perfetto form): chunks start where the writer says, each
// with a preamble, and only the oldest chunk's preamble is in views().
TEST(WindowSink, ByPartKeepsWholePartsAndOnlyTheOldestPartsPreamble) {
  constexpr std::size_t kCapacity = 64 * 1024;
  constexpr std::uint64_t kPreamble = 1'000'000;  // preamble packets: kPreamble + part
  WindowSink window(kCapacity, Framing::kPackets, WindowSink::Chunking::kByPart);
  std::mt19937 random(11);
  std::uint64_t next = 0, total = 0;
  std::uint64_t part = 0;
  std::size_t in_part = 0;
  for (int write = 0; write < 3000; ++write) {
    if (in_part >= window.part_bytes()) {
      std::string preamble = packet(kPreamble + ++part, 5);
      total += preamble.size();
      window.start_part(std::move(preamble));
      in_part = 0;
    }
    std::string bytes;
    const int pieces = 1 + static_cast<int>(random() % 20);
    for (int i = 0; i < pieces; ++i) bytes += packet(next++, 20);
    window.write(bytes);
    total += bytes.size();
    in_part += bytes.size();
    // The newest part stays whole; the oldest go whole.
    ASSERT_LE(window.held(), kCapacity + window.part_bytes() + bytes.size());
  }
  std::string held;
  window.append_to(held);
  ASSERT_EQ(held.size(), [&] {
    std::vector<std::string_view> parts;
    window.views(parts);
    std::size_t n = 0;
    for (std::string_view v : parts) n += v.size();
    return n;
  }());
  const std::vector<std::uint64_t> got = numbers(Framing::kPackets, held);
  ASSERT_GE(got.size(), 2u);
  // The oldest chunk's preamble first, and no other.
  ASSERT_GT(got.front(), kPreamble);
  const std::uint64_t oldest_part = got.front() - kPreamble;
  EXPECT_LT(oldest_part, part) << "older parts went";
  for (std::size_t i = 1; i < got.size(); ++i) ASSERT_LT(got[i], kPreamble) << i;
  EXPECT_EQ(got.back(), next - 1);
  for (std::size_t i = 2; i < got.size(); ++i) ASSERT_EQ(got[i], got[i - 1] + 1) << i;
  // Every byte is held or dropped; preambles of dropped and later chunks
  // are counted as held or dropped too (held() counts every chunk's).
  EXPECT_EQ(window.bytes_dropped() + window.held(), total);
  EXPECT_GE(window.held() + window.part_bytes(), kCapacity) << "the room is used";
  // Flat: parts that go past their chunk's room grow to their size, not double.
  EXPECT_LE(window.allocated(), kCapacity + 4 * window.part_bytes());
}

TEST(WindowSink, AnEmptyWindowHoldsNothing) {
  WindowSink window(8 * 1024, Framing::kPackets);
  std::string held = "kept";
  window.append_to(held);
  EXPECT_EQ(held, "kept");
  EXPECT_EQ(window.held(), 0u);
  EXPECT_EQ(window.bytes_dropped(), 0u);
}

}  // namespace
}  // namespace jitscope::testing
