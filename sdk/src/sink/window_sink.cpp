#include "sink/window_sink.hpp"

#include "base/log.hpp"
#include "base/proto_wire.hpp"

#include <algorithm>
#include <utility>

namespace jitscope::detail {

// Chunks of a sixteenth of the window (within the bounds): the oldest
// events go in steps of about 6 % of the window, and a chunk's slack is
// small next to it.
WindowSink::WindowSink(std::size_t capacity, Framing framing) noexcept
    : WindowSink(capacity, framing, Chunking::kBySize) {}

WindowSink::WindowSink(std::size_t capacity, Framing framing, Chunking chunking) noexcept
    : capacity_(capacity),
      chunk_bytes_(std::clamp(capacity / 16, kMinChunkBytes, kMaxChunkBytes)),
      framing_(framing),
      chunking_(chunking) {}

void WindowSink::start_part(std::string&& preamble) noexcept {
  const std::size_t size = preamble.size();
  try {
    start_chunk(std::move(preamble));
    held_ += size;
  } catch (...) {
    // Out of memory: the part goes on in the chunk before; its spans open
    // at the start are not begun again there (a snapshot may miss them).
    dropped_ += size;
    log_unique("the flight recorder's window is out of memory: some events are not kept");
  }
  evict();
}

void WindowSink::write(std::string_view bytes) noexcept {
  try {
    if (chunking_ == Chunking::kByPart) {
      // Whole into the part's chunk: its packets lean on each other.
      if (chunks_.empty()) start_chunk();
      std::string& back = chunks_.back().bytes;
      if (back.size() + bytes.size() > back.capacity()) {
        // Past its room: grown to the size it needs, not doubled (a
        // doubled chunk would hold twice its bytes' memory until it goes).
        std::string grown;
        grown.reserve(back.size() + bytes.size());
        grown.append(back);
        back.swap(grown);
      }
      back.append(bytes);
      held_ += bytes.size();
      bytes = {};
    } else {
      append(bytes);  // consumes what it keeps
    }
  } catch (...) {
    // Out of memory: what was not kept yet is lost; the window goes on.
    dropped_ += bytes.size();
    log_unique("the flight recorder's window is out of memory: some events are not kept");
  }
  evict();
}

void WindowSink::append(std::string_view& bytes) {
  while (!bytes.empty()) {
    if (chunks_.empty() || chunks_.back().bytes.size() >= chunk_bytes_) start_chunk();
    std::string& back = chunks_.back().bytes;
    const std::size_t room = chunk_bytes_ - back.size();
    std::size_t take = bytes.size();
    if (take > room) {
      take = last_whole(bytes, room, framing_);
      if (take == 0) {
        if (!back.empty()) {  // the next piece starts the next chunk
          start_chunk();
          continue;
        }
        take = first_whole(bytes, framing_);  // bigger than a chunk: a chunk of its own
        if (take > capacity_) {
          // Bigger than the whole window: not kept, so it cannot push out
          // everything older.
          dropped_ += take;
          bytes.remove_prefix(take);
          continue;
        }
      }
    }
    back.append(bytes.data(), take);
    held_ += take;
    bytes.remove_prefix(take);
  }
}

void WindowSink::start_chunk(std::string&& preamble) {
  Chunk chunk{std::move(spare_), std::move(preamble)};
  spare_ = std::string();
  chunk.bytes.clear();
  chunk.bytes.reserve(chunk_room());
  chunks_.push_back(std::move(chunk));
}

void WindowSink::evict() noexcept {
  // By part, the newest chunk is the part being written: it stays.
  const std::size_t keep = chunking_ == Chunking::kByPart ? 1 : 0;
  while (held_ > capacity_ && chunks_.size() > keep) {
    Chunk oldest = std::move(chunks_.front());
    chunks_.pop_front();
    const std::size_t size = oldest.bytes.size() + oldest.preamble.size();
    held_ -= size;
    dropped_ += size;
    // A chunk grown past its size by one big piece is freed, not kept.
    if (oldest.bytes.capacity() <= chunk_room() && spare_.capacity() < chunk_room())
      spare_ = std::move(oldest.bytes);
  }
}

void WindowSink::views(std::vector<std::string_view>& out) const {
  if (!chunks_.empty() && !chunks_.front().preamble.empty()) {
    out.emplace_back(chunks_.front().preamble);
  }
  for (const Chunk& chunk : chunks_) {
    if (!chunk.bytes.empty()) out.emplace_back(chunk.bytes);
  }
}

void WindowSink::views_after(std::string_view head, std::vector<std::string_view>& out) const {
  if (chunking_ != Chunking::kByPart || chunks_.empty()) {
    out.emplace_back(head);
    views(out);
    return;
  }
  // The oldest part's first packet, then the head; the part then has it
  // again, clearing sequence 1's state, which the head's own names took,
  // for the part's packets (same instant: time still runs forward).
  const std::string_view oldest = chunks_.front().bytes;
  out.emplace_back(oldest.substr(0, wire::field_end(oldest, 0)));  // 0: none whole
  out.emplace_back(head);
  views(out);
}

void WindowSink::append_to(std::string& out) const {
  std::vector<std::string_view> parts;
  views(parts);
  out.reserve(out.size() + held_);
  for (const std::string_view part : parts) out.append(part);
}

std::size_t WindowSink::allocated() const noexcept {
  std::size_t n = spare_.capacity();
  for (const Chunk& chunk : chunks_) n += chunk.bytes.capacity() + chunk.preamble.capacity();
  return n;
}

}  // namespace jitscope::detail
