// The flight recorder's window (issue 39): a TraceSink that keeps the
// newest whole pieces of the output (JSON events or Perfetto packets, by
// their Framing) in memory, at most `capacity` bytes, and drops the oldest
// whole as new ones come. Its memory stays flat however long the process
// runs: the pieces sit in chunks of at most chunk_bytes() each, the oldest
// chunk goes whole, and its buffer is kept for the next one.
//
// A piece larger than a chunk takes a chunk of its own; one larger than
// the window is not kept (counted in bytes_dropped), and pushes nothing
// out. Flusher thread only.
//
// In parts (the Perfetto form), the writer says where each chunk starts
// (start_part, at a point where every sequence starts again: the chunks
// from any one on decode alone), and writes go whole into the newest
// chunk. Each chunk carries a preamble: the packets that begin again the
// spans open at its start. Only the oldest chunk's preamble is part of views(): a span open
// across chunks is begun once.
#pragma once

#include "sink/framing.hpp"
#include "sink/trace_sink.hpp"

#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <vector>

namespace jitscope::detail {

class WindowSink final : public TraceSink {
 public:
  static constexpr std::size_t kMaxChunkBytes = 64 * 1024;
  static constexpr std::size_t kMinChunkBytes = 4 * 1024;

  WindowSink(std::size_t capacity, Framing framing) noexcept;
  enum class Chunking : std::uint8_t { kBySize, kByPart };
  WindowSink(std::size_t capacity, Framing framing, Chunking chunking) noexcept;

  // kByPart: what is written next starts a new chunk, after `preamble`.
  void start_part(std::string&& preamble) noexcept;

  void write(std::string_view bytes) noexcept override;
  std::string_view name() const noexcept override { return "the flight recorder's window"; }

  // The pieces held, oldest first, appended to `out` as they were written
  // (kByPart: after the oldest chunk's preamble).
  void append_to(std::string& out) const;
  // The same, as the window's own bytes (valid until its next write).
  void views(std::vector<std::string_view>& out) const;
  // A snapshot's parts: `head`, then views(). By part, the oldest chunk's
  // first packet (its part's first: the clock snapshot of sequence 1,
  // state cleared) goes before `head` too, so that sequence 1's clock
  // snapshots in the file run forward in time (a reader rejects one that
  // goes back; `head` carries none of its own); the part has it again
  // after, clearing the names `head` defined.
  void views_after(std::string_view head, std::vector<std::string_view>& out) const;
  std::size_t held() const noexcept { return held_; }
  std::size_t capacity() const noexcept { return capacity_; }
  std::size_t chunk_bytes() const noexcept { return chunk_bytes_; }
  // kByPart: a part's size, past which the writer starts the next. Its
  // chunk is allocated with room for the event that takes it past (a
  // sixteenth more): a chunk that grew past its room would double.
  std::size_t part_bytes() const noexcept { return chunk_bytes_; }
  // Written and no longer held (gone with the oldest, or never kept).
  std::uint64_t bytes_dropped() const noexcept { return dropped_; }
  // The bytes its buffers hold allocated (chunks and the spare).
  std::size_t allocated() const noexcept;

 private:
  void append(std::string_view& bytes);
  std::size_t chunk_room() const noexcept {
    return chunking_ == Chunking::kByPart ? chunk_bytes_ + chunk_bytes_ / 16 : chunk_bytes_;
  }
  void start_chunk(std::string&& preamble = {});
  void evict() noexcept;

  struct Chunk {
    std::string bytes;     // whole pieces
    std::string preamble;  // kByPart: the spans open at its start, begun again
  };
  std::size_t capacity_;
  std::size_t chunk_bytes_;
  Framing framing_;
  Chunking chunking_ = Chunking::kBySize;
  std::deque<Chunk> chunks_;  // oldest first
  std::string spare_;         // the last chunk let go, for the next
  std::size_t held_ = 0;
  std::uint64_t dropped_ = 0;
};

}  // namespace jitscope::detail
