// CompressingSink (sink/compressing_sink.hpp): the Perfetto form's packets
// into compressed packets. Each test inflates what the sink wrote with zlib
// or zstd directly and requires exactly the packets that went in, in order.
#include "sink/compressing_sink.hpp"
#include "base/perfetto_fields.hpp"
#include "base/proto_wire.hpp"

#include <gtest/gtest.h>
#include <zlib.h>
#include <zstd.h>

#include <random>
#include <string>
#include <vector>

namespace jitscope::testing {
namespace {

namespace pf = detail::pf;
namespace wire = detail::wire;

struct Capture final : detail::TraceSink {
  std::vector<std::string> writes;
  void write(std::string_view bytes) noexcept override { writes.emplace_back(bytes); }
  std::string all() const {
    std::string out;
    for (const std::string& w : writes) out += w;
    return out;
  }
};

std::string packet(std::string_view body) {
  std::string out(1, '\x0a');
  wire::append_varint(out, body.size());
  out.append(body);
  return out;
}

// Packets much like a trace's: a few kinds of bodies with a counter in them.
std::string trace_like(std::size_t count) {
  std::string out;
  for (std::size_t i = 0; i < count; ++i) {
    std::string body = "\x50\x01\x5a\x08track_event name " + std::to_string(i % 37) + " ts " +
                       std::to_string(i * 7919);
    out += packet(body);
  }
  return out;
}

std::string inflate(std::uint32_t field, std::string_view data) {
  std::string out(64 << 20, '\0');
  if (field == pf::packet::kZstdCompressedPackets) {
    const std::size_t n = ZSTD_decompress(out.data(), out.size(), data.data(), data.size());
    EXPECT_EQ(ZSTD_isError(n), 0u) << ZSTD_getErrorName(n);
    out.resize(ZSTD_isError(n) != 0 ? 0 : n);
  } else {
    uLongf n = out.size();
    EXPECT_EQ(uncompress(reinterpret_cast<Bytef*>(out.data()), &n,
                         reinterpret_cast<const Bytef*>(data.data()), data.size()),
              Z_OK);
    out.resize(n);
  }
  return out;
}

struct Expanded {
  std::string packets;  // every packet, compressed ones inflated in their place
  std::size_t compressed = 0;
  std::size_t largest_compressed = 0;  // bytes, with its framing
};

// The sink's output, each write whole packets, compressed ones inflated.
Expanded expand(const Capture& c) {
  Expanded e;
  for (const std::string& w : c.writes) {
    EXPECT_EQ(wire::whole_fields_end(w, w.size()), w.size()) << "a write of part of a packet";
    std::size_t at = 0;
    while (const std::size_t end = wire::field_end(w, at)) {
      const std::string_view whole(w.data() + at, end - at);
      const char* p = whole.data();
      std::uint64_t tag = 0, size = 0, inner_tag = 0, inner_size = 0;
      bool truncated = false;
      wire::read_varint(&p, whole.data() + whole.size(), &tag, &truncated);
      wire::read_varint(&p, whole.data() + whole.size(), &size, &truncated);
      const char* body = p;
      std::uint32_t field = 0;
      if (wire::read_varint(&p, whole.data() + whole.size(), &inner_tag, &truncated)) {
        field = static_cast<std::uint32_t>(inner_tag >> 3);
      }
      if ((field == pf::packet::kCompressedPackets ||
           field == pf::packet::kZstdCompressedPackets) &&
          (inner_tag & 7) == pf::kLengthDelimited &&
          wire::read_varint(&p, whole.data() + whole.size(), &inner_size, &truncated)) {
        EXPECT_EQ(p + inner_size, body + size) << "a compressed packet with other fields";
        e.packets += inflate(field, std::string_view(p, inner_size));
        ++e.compressed;
        e.largest_compressed = std::max(e.largest_compressed, whole.size());
      } else {
        e.packets.append(whole);
      }
      at = end;
    }
    EXPECT_EQ(at, w.size());
  }
  return e;
}

class CompressingSinkTest : public ::testing::TestWithParam<TraceCompression> {};

TEST_P(CompressingSinkTest, WritesHoldTheWritersPacketsWholeAndInOrder) {
  Capture out;
  std::string why;
  detail::CompressingSink sink(out, GetParam(), why);
  ASSERT_TRUE(sink.ok()) << why;
  const std::string first = trace_like(20'000);  // about 900 KiB: several chunks
  const std::string second = trace_like(300);
  sink.write(first);
  sink.write_closing(second);
  ASSERT_EQ(out.writes.size(), 2u);
  const Expanded e = expand(out);
  EXPECT_EQ(e.packets, first + second);
  EXPECT_GE(e.compressed, 4u);
  EXPECT_LT(e.largest_compressed, std::size_t{512} << 10) << "Perfetto's bound per packet";
  EXPECT_LT(out.all().size() * 3, first.size() + second.size()) << "shrinks these at least 3x";
  EXPECT_EQ(sink.bytes_in(), first.size() + second.size());
}

TEST_P(CompressingSinkTest, APacketBiggerThanAChunkGoesPlainInItsPlace) {
  Capture out;
  std::string why;
  detail::CompressingSink sink(out, GetParam(), why);
  ASSERT_TRUE(sink.ok()) << why;
  const std::string big = packet(std::string(detail::CompressingSink::kChunkBytes + 1, 'b'));
  const std::string all = trace_like(100) + big + trace_like(100);
  sink.write(all);
  const Expanded e = expand(out);
  EXPECT_EQ(e.packets, all);
  EXPECT_EQ(e.compressed, 2u);  // the packets before it, and those after
  EXPECT_NE(out.all().find(big), std::string::npos) << "the big packet is not in the file as is";
}

TEST_P(CompressingSinkTest, ACrashCycleWritesThePacketsAsTheyAre) {
  Capture out;
  std::string why;
  detail::CompressingSink sink(out, GetParam(), why);
  ASSERT_TRUE(sink.ok()) << why;
  const std::string all = trace_like(2000);
  sink.set_crash_cycle(true);
  sink.write(all);
  sink.set_crash_cycle(false);
  sink.write(all);
  ASSERT_EQ(out.writes.size(), 2u);
  EXPECT_EQ(out.writes[0], all);
  EXPECT_LT(out.writes[1].size(), all.size() / 3);
}

TEST_P(CompressingSinkTest, PacketsThatDoNotShrinkGoPlain) {
  Capture out;
  std::string why;
  detail::CompressingSink sink(out, GetParam(), why);
  ASSERT_TRUE(sink.ok()) << why;
  std::mt19937_64 random(7);
  std::string all;
  for (int i = 0; i < 50; ++i) {
    std::string body(100, '\0');
    for (char& c : body) c = static_cast<char>(random());
    all += packet(body);
  }
  sink.write(all);
  EXPECT_EQ(out.all(), all);
}

INSTANTIATE_TEST_SUITE_P(Codecs, CompressingSinkTest,
                         ::testing::Values(TraceCompression::kDeflate, TraceCompression::kZstd),
                         [](const auto& info) {
                           return std::string(detail::CompressingSink::name(info.param));
                         });

}  // namespace
}  // namespace jitscope::testing
