#include "sink/window_sink.hpp"

#include "base/log.hpp"

#include <algorithm>
#include <utility>

namespace jitscope::detail {

// Chunks of a sixteenth of the window (within the bounds): the oldest
// events go in steps of about 6 % of the window, and a chunk's slack is
// small next to it.
WindowSink::WindowSink(std::size_t capacity, Framing framing) noexcept
    : capacity_(capacity),
      chunk_bytes_(std::clamp(capacity / 16, kMinChunkBytes, kMaxChunkBytes)),
      framing_(framing) {}

void WindowSink::write(std::string_view bytes) noexcept {
  try {
    append(bytes);  // consumes what it keeps
  } catch (...) {
    // Out of memory: what was not kept yet is lost; the window goes on.
    dropped_ += bytes.size();
    log_unique("the flight recorder's window is out of memory: some events are not kept");
  }
  evict();
}

void WindowSink::append(std::string_view& bytes) {
  while (!bytes.empty()) {
    if (chunks_.empty() || chunks_.back().size() >= chunk_bytes_) start_chunk();
    std::string& back = chunks_.back();
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

void WindowSink::start_chunk() {
  std::string chunk = std::move(spare_);
  spare_ = std::string();
  chunk.clear();
  chunk.reserve(chunk_bytes_);
  chunks_.push_back(std::move(chunk));
}

void WindowSink::evict() noexcept {
  while (held_ > capacity_ && !chunks_.empty()) {
    std::string oldest = std::move(chunks_.front());
    chunks_.pop_front();
    held_ -= oldest.size();
    dropped_ += oldest.size();
    // A chunk grown past its size by one big piece is freed, not kept.
    if (oldest.capacity() <= chunk_bytes_ && spare_.capacity() < chunk_bytes_)
      spare_ = std::move(oldest);
  }
}

void WindowSink::views(std::vector<std::string_view>& out) const {
  for (const std::string& chunk : chunks_) {
    if (!chunk.empty()) out.emplace_back(chunk);
  }
}

void WindowSink::append_to(std::string& out) const {
  out.reserve(out.size() + held_);
  for (const std::string& chunk : chunks_) out.append(chunk);
}

std::size_t WindowSink::allocated() const noexcept {
  std::size_t n = spare_.capacity();
  for (const std::string& chunk : chunks_) n += chunk.capacity();
  return n;
}

}  // namespace jitscope::detail
