// The Perfetto form's compression (Config::compression, docs/perfetto-format.md
// "Compressed packets"): a sink between the trace writer and the file that
// puts the writer's packets into compressed packets, each holding whole
// packets of at most kChunkBytes before compression.
//
// Every write still hands the file whole packets, so a full disk or a crash
// cuts the file at a packet as before: a compressed packet is one packet.
// The codec is loaded with dlopen at construction, so a session that does
// not compress loads nothing and the SDK links neither library. What stays
// uncompressed, a valid part of the same trace: a packet too big for a
// chunk, a chunk that does not shrink, everything in a crash cycle (the
// process is going down and a host thread may hold malloc's lock: nothing
// is allocated then), and everything once the codec has failed.
#pragma once

#include "sink/trace_sink.hpp"

#include <jitscope/jitscope.hpp>

#include <cstddef>
#include <string>
#include <string_view>

namespace jitscope::detail {

struct Codec;

class CompressingSink final : public TraceSink {
 public:
  // Packets of a chunk before compression: its compressed packet stays far
  // below Perfetto's 512 KB for each.
  static constexpr std::size_t kChunkBytes = std::size_t{256} << 10;

  // Loads `kind`'s codec; `ok()` false and `why` set if it cannot (the sink
  // then writes plain packets).
  CompressingSink(TraceSink& out, TraceCompression kind, std::string& why);
  ~CompressingSink() override;
  CompressingSink(const CompressingSink&) = delete;
  CompressingSink& operator=(const CompressingSink&) = delete;

  bool ok() const noexcept { return codec_ != nullptr; }
  // The codec's name in the trace's metadata ("deflate", "zstd").
  static const char* name(TraceCompression kind) noexcept;
  // True while the flusher writes a crash: everything goes out plain.
  void set_crash_cycle(bool on) noexcept { crash_cycle_ = on; }
  // True while the trace's head is written: it stays plain, so that an
  // exec'd image of this process finds its owner in it (file_sink.hpp).
  void set_plain_head(bool on) noexcept { plain_head_ = on; }
  // Bytes handed in, before compression (the file's are the sink's below).
  std::uint64_t bytes_in() const noexcept { return bytes_in_; }

  void write(std::string_view packets) noexcept override;
  void write_closing(std::string_view packets) noexcept override;
  bool failed() const noexcept override { return out_.failed(); }
  bool can_rotate() const noexcept override { return out_.can_rotate(); }
  bool next_file() noexcept override { return out_.next_file(); }
  std::string_view name() const noexcept override { return out_.name(); }

 private:
  // write() and write_closing(): staged_ or, where stage() says no, the
  // packets as they came, to `out_.*to`.
  void pass_on(std::string_view packets, void (TraceSink::*to)(std::string_view) noexcept) noexcept;
  // The packets as compressed packets (or plain where above), into staged_;
  // false: none staged, the caller writes them as they are.
  bool stage(std::string_view packets) noexcept;
  // One chunk of whole packets as one compressed packet, or plain where it
  // does not shrink. Throws std::bad_alloc (stage() then says no).
  void stage_chunk(std::string_view chunk);

  TraceSink& out_;
  const Codec* codec_ = nullptr;
  void* context_ = nullptr;  // zstd's ZSTD_CCtx; deflate needs none
  // zstd's level 1 and zlib's Z_BEST_SPEED: the flusher's pace first; a
  // trace's packets repeat so much that both still shrink them 3 to 15
  // times (docs/performance.md; zstd's negative levels were faster but
  // left 13 bytes a span against 10).
  static constexpr int kLevel = 1;
  std::uint32_t tag_ = 0;  // the compressed packet's field tag
  std::string scratch_;    // one chunk compressed
  std::string staged_;     // the packets of one write, as they go to the file
  std::uint64_t bytes_in_ = 0;
  bool crash_cycle_ = false;
  bool plain_head_ = false;
  bool codec_failed_ = false;
};

}  // namespace jitscope::detail
