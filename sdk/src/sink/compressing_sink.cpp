#include "sink/compressing_sink.hpp"

#include "base/immortal.hpp"
#include "base/log.hpp"
#include "base/perfetto_fields.hpp"
#include "base/proto_wire.hpp"

#include <dlfcn.h>

#include <mutex>

namespace jitscope::detail {

// The few entry points of libzstd and zlib the sink calls, declared here
// from their stable C ABIs: the SDK builds without either library's headers
// and loads one only when a session asks for it.
struct Codec {
  // zstd
  void* (*zstd_create)() = nullptr;
  std::size_t (*zstd_free)(void*) = nullptr;
  std::size_t (*zstd_compress)(void*, void*, std::size_t, const void*, std::size_t, int) = nullptr;
  unsigned (*zstd_is_error)(std::size_t) = nullptr;
  std::size_t (*zstd_bound)(std::size_t) = nullptr;
  // zlib
  int (*z_compress2)(unsigned char*, unsigned long*, const unsigned char*, unsigned long,
                     int) = nullptr;
  unsigned long (*z_bound)(unsigned long) = nullptr;

  std::size_t bound(std::size_t n) const noexcept {
    return zstd_bound != nullptr ? zstd_bound(n) : static_cast<std::size_t>(z_bound(n));
  }
  // `in` compressed into [out, out + cap): its size, 0 on failure.
  std::size_t compress(void* context, int level, std::string_view in, char* out,
                       std::size_t cap) const noexcept {
    if (zstd_compress != nullptr) {
      const std::size_t n = zstd_compress(context, out, cap, in.data(), in.size(), level);
      return zstd_is_error(n) != 0 ? 0 : n;
    }
    unsigned long n = cap;
    return z_compress2(reinterpret_cast<unsigned char*>(out), &n,
                       reinterpret_cast<const unsigned char*>(in.data()), in.size(), level) == 0
               ? static_cast<std::size_t>(n)
               : 0;
  }
};

namespace {

template <typename F>
bool resolve(void* library, const char* symbol, F& f, std::string& why) {
  f = reinterpret_cast<F>(::dlsym(library, symbol));
  if (f == nullptr) why = std::string("it has no ") + symbol;
  return f != nullptr;
}

// What loading a codec found: kept for the process (immortal: a session
// may start from an atexit handler or a static destructor).
struct Loaded {
  std::mutex mutex;
  Codec codecs[2];
  bool tried[2] = {};
  std::string reasons[2];
};

// Loaded once per process, on the first session that asks; never unloaded.
const Codec* load_codec(TraceCompression kind, std::string& why) {
  Loaded& loaded = immortal<Loaded>();
  const bool zstd = kind == TraceCompression::kZstd;
  const int i = zstd ? 1 : 0;
  std::lock_guard<std::mutex> lock(loaded.mutex);
  if (!loaded.tried[i]) {
    loaded.tried[i] = true;
    const char* soname = zstd ? "libzstd.so.1" : "libz.so.1";
    void* library = ::dlopen(soname, RTLD_NOW | RTLD_LOCAL);
    std::string reason;
    Codec c;
    if (library == nullptr) {
      const char* e = ::dlerror();
      reason = std::string("cannot load ") + soname + " (" + (e != nullptr ? e : "") + ")";
    } else if (zstd ? resolve(library, "ZSTD_createCCtx", c.zstd_create, reason) &&
                          resolve(library, "ZSTD_freeCCtx", c.zstd_free, reason) &&
                          resolve(library, "ZSTD_compressCCtx", c.zstd_compress, reason) &&
                          resolve(library, "ZSTD_isError", c.zstd_is_error, reason) &&
                          resolve(library, "ZSTD_compressBound", c.zstd_bound, reason)
                    : resolve(library, "compress2", c.z_compress2, reason) &&
                          resolve(library, "compressBound", c.z_bound, reason)) {
      loaded.codecs[i] = c;
    } else {
      reason = std::string(soname) + ": " + reason;
    }
    loaded.reasons[i] = reason;
  }
  if (!loaded.reasons[i].empty()) {
    why = loaded.reasons[i];
    return nullptr;
  }
  return &loaded.codecs[i];
}

}  // namespace

const char* CompressingSink::name(TraceCompression kind) noexcept {
  switch (kind) {
    case TraceCompression::kDeflate: return "deflate";
    case TraceCompression::kZstd: return "zstd";
    case TraceCompression::kNone: break;
  }
  return "none";
}

CompressingSink::CompressingSink(TraceSink& out, TraceCompression kind, std::string& why)
    : out_(out) {
  const Codec* codec = load_codec(kind, why);
  if (codec == nullptr) return;
  tag_ = pf::tag(kind == TraceCompression::kZstd ? pf::packet::kZstdCompressedPackets
                                                 : pf::packet::kCompressedPackets,
                 pf::kLengthDelimited);
  scratch_.resize(codec->bound(kChunkBytes));  // may throw: nothing to free yet
  if (codec->zstd_create != nullptr) {
    context_ = codec->zstd_create();
    if (context_ == nullptr) {
      why = "ZSTD_createCCtx failed";
      return;
    }
  }
  codec_ = codec;
}

CompressingSink::~CompressingSink() {
  if (context_ != nullptr) (void)codec_->zstd_free(context_);
}

void CompressingSink::write(std::string_view packets) noexcept {
  pass_on(packets, &TraceSink::write);
}

void CompressingSink::write_closing(std::string_view packets) noexcept {
  pass_on(packets, &TraceSink::write_closing);
}

void CompressingSink::pass_on(std::string_view packets,
                              void (TraceSink::*to)(std::string_view) noexcept) noexcept {
  bytes_in_ += packets.size();
  (out_.*to)(stage(packets) ? std::string_view(staged_) : packets);
}

bool CompressingSink::stage(std::string_view packets) noexcept {
  if (codec_ == nullptr || codec_failed_ || crash_cycle_ || plain_head_ || out_.failed()) {
    return false;
  }
  try {
    staged_.clear();
    std::size_t chunk = 0;  // where the packets of the chunk being gathered begin
    std::size_t at = 0;
    while (at < packets.size()) {
      const std::size_t end = wire::field_end(packets, at);
      if (end == 0) break;  // not a whole packet: the rest goes plain
      if (end - chunk > kChunkBytes) {
        if (at > chunk) stage_chunk(packets.substr(chunk, at - chunk));
        chunk = at;
        if (end - at > kChunkBytes) {  // a packet bigger than a chunk: plain
          staged_.append(packets.substr(at, end - at));
          chunk = end;
        }
      }
      at = end;
    }
    if (at > chunk) stage_chunk(packets.substr(chunk, at - chunk));
    staged_.append(packets.substr(at));
    return true;
  } catch (...) {  // out of memory: this write goes plain
    return false;
  }
}

void CompressingSink::stage_chunk(std::string_view chunk) {
  if (!codec_failed_) {
    const std::size_t n =
        codec_->compress(context_, kLevel, chunk, scratch_.data(), scratch_.size());
    if (n == 0) {
      codec_failed_ = true;
      log_line("compressing the trace failed; the rest of it is written uncompressed");
    } else {
      const std::size_t inner = wire::field_size(tag_, n);
      const std::size_t whole =
          wire::field_size(pf::tag(pf::trace::kPacket, pf::kLengthDelimited), inner);
      if (whole < chunk.size()) {
        const std::size_t at = staged_.size();
        staged_.resize(at + whole);
        char* p = staged_.data() + at;
        p = wire::put_varint(p, pf::tag(pf::trace::kPacket, pf::kLengthDelimited));
        p = wire::put_varint(p, inner);
        p = wire::put_varint(p, tag_);
        p = wire::put_varint(p, n);
        wire::put_bytes(p, std::string_view(scratch_.data(), n));
        return;
      }
    }
  }
  staged_.append(chunk);  // did not shrink (or the codec failed): plain
}

}  // namespace jitscope::detail
