// Compressed packets (docs/perfetto-format.md, "Compressed packets"): a
// TracePacket whose compressed_packets (deflate, a zlib stream) or
// zstd_compressed_packets (one or more zstd frames) holds a serialized
// Trace. Its packets are decoded as if they stood in the file there; an
// error inside one names the compressed packet's byte and the inner offset.
#include "perfetto_state.hpp"

#include <algorithm>
#include <climits>
#include <cstring>
#include <memory>

#if JITSCOPE_TOOLS_HAVE_ZLIB
#include <zlib.h>
#endif
#if JITSCOPE_TOOLS_HAVE_ZSTD
#include <zstd.h>
#endif

namespace jitscope::tools {
namespace pf = detail::pf;

namespace {

// The inflated bytes. Their room grows by doubling, from what a zstd frame
// declares or 1 MiB, to at most the caller's limit, and is never
// zero-filled (a resize would fill it, and double past the limit).
class Inflated {
 public:
  char* data() const noexcept { return data_.get(); }
  std::size_t room() const noexcept { return room_; }
  std::size_t used = 0;

  // More room, at most `max` in all (`hint`: the size expected); false
  // when there is `max` already.
  bool grow(std::size_t max, std::size_t hint = 0) {
    if (room_ >= max) return false;
    const std::size_t n = std::min(max, std::max({room_ + kStep, 2 * room_, hint}));
    std::unique_ptr<char[]> next(new char[n]);
    if (used != 0) std::memcpy(next.get(), data_.get(), used);
    data_ = std::move(next);
    room_ = n;
    return true;
  }

 private:
  static constexpr std::size_t kStep = std::size_t{1} << 20;
  std::unique_ptr<char[]> data_;
  std::size_t room_ = 0;
};

// Each inflater: `in` into `out`, at most `max` bytes; "" or what went
// wrong, to follow the field's name ("is cut off ..."); `over` is the
// message of an output past `max`.

#if JITSCOPE_TOOLS_HAVE_ZLIB
// A zlib stream (Perfetto's deflate) into `out`; "" or what went wrong.
std::string inflate_zlib(std::string_view in, std::size_t max, const std::string& over,
                         Inflated& out) {
  if (in.size() > UINT_MAX) return "is larger than zlib takes in one piece (4 GiB)";
  z_stream zs{};
  if (inflateInit(&zs) != Z_OK) return "cannot start zlib's inflate (out of memory)";
  // Ended however this returns (a growth below may throw).
  const std::unique_ptr<z_stream, int (*)(z_stream*)> end(&zs, inflateEnd);
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  zs.avail_in = static_cast<uInt>(in.size());
  std::string why;
  for (;;) {
    if (out.room() == out.used && !out.grow(max)) {
      why = over;
      break;
    }
    zs.next_out = reinterpret_cast<Bytef*>(out.data() + out.used);
    // avail_out is a uInt: a room over 4 GiB is offered in part.
    zs.avail_out = static_cast<uInt>(std::min<std::size_t>(out.room() - out.used, UINT_MAX));
    const uInt offered = zs.avail_out;
    const int rc = inflate(&zs, Z_NO_FLUSH);
    out.used += offered - zs.avail_out;
    if (rc == Z_STREAM_END) {
      if (zs.avail_in != 0) why = "has bytes after its zlib stream";
      break;
    }
    if (rc == Z_BUF_ERROR && zs.avail_in == 0) {
      why = "is cut off (its zlib stream has no end)";
      break;
    }
    if (rc != Z_OK && rc != Z_BUF_ERROR) {
      why =
          std::string("cannot be inflated (zlib: ") + (zs.msg != nullptr ? zs.msg : "error") + ")";
      break;
    }
  }
  return why;
}
#endif

#if JITSCOPE_TOOLS_HAVE_ZSTD
std::string inflate_zstd(std::string_view in, std::size_t max, int window_log,
                         const std::string& over, Inflated& out) {
  const std::unique_ptr<ZSTD_DStream, std::size_t (*)(ZSTD_DStream*)> owned(ZSTD_createDStream(),
                                                                            ZSTD_freeDStream);
  ZSTD_DStream* ds = owned.get();
  if (ds == nullptr) return "cannot start zstd (out of memory)";
  ZSTD_DCtx_setParameter(ds, ZSTD_d_windowLogMax, window_log);
  // The first frame's size, when its header says (the SDK's do): one room
  // of that size, not a doubling from 1 MiB.
  const unsigned long long declared = ZSTD_getFrameContentSize(in.data(), in.size());
  const std::size_t hint = declared < max ? static_cast<std::size_t>(declared) : 0;
  ZSTD_inBuffer src{in.data(), in.size(), 0};
  std::size_t last = 1;  // 0 once a frame is complete
  std::string why;
  while (src.pos < src.size || last != 0) {
    if (out.room() == out.used && !out.grow(max, hint)) {
      why = over;
      break;
    }
    ZSTD_outBuffer dst{out.data(), out.room(), out.used};
    last = ZSTD_decompressStream(ds, &dst, &src);
    out.used = dst.pos;
    if (ZSTD_isError(last) != 0) {
      // Corrupt, or a window over the bound: zstd's words say which.
      why = std::string("cannot be inflated (zstd: ") + ZSTD_getErrorName(last) + ")";
      break;
    }
    if (src.pos == src.size && last != 0 && dst.pos < dst.size) {
      why = "is cut off (its zstd frame has no end)";
      break;
    }
  }
  return why;
}
#endif

}  // namespace

void PerfettoDecoder::State::compressed_packets([[maybe_unused]] std::string_view bytes, bool zstd,
                                                const char* at) {
  if (inflating) bad(at, "a compressed packet inside a compressed packet");
  const char* what =
      zstd ? "TracePacket.zstd_compressed_packets" : "TracePacket.compressed_packets";
  Inflated out;
  std::string why, over;
  [[maybe_unused]] const auto missing = [&](const char* library, const char* package) {
    bad(at, std::string(what) + ": the tools were built without " + library + " (install " +
                package + " and rebuild)");
  };
  if (zstd) {
#if JITSCOPE_TOOLS_HAVE_ZSTD
    // A frame's window is memory zstd takes before any output: no larger
    // than what the packet may inflate to, between zstd's minimum (1 KiB)
    // and its default limit (128 MiB); counted while it inflates.
    int window_log = 10;
    while (window_log < 27 && (std::size_t{1} << window_log) < inflate_limit(0, &over)) {
      ++window_log;
    }
    const std::size_t window = std::size_t{1} << window_log;
    check_memory(at, window);
    why = inflate_zstd(bytes, inflate_limit(window, &over), window_log, over, out);
#else
    missing("zstd", "libzstd-dev");
#endif
  } else {
#if JITSCOPE_TOOLS_HAVE_ZLIB
    const std::size_t max = inflate_limit(0, &over);
    why = inflate_zlib(bytes, max, over, out);
#else
    missing("zlib", "zlib1g-dev");
#endif
  }
  inflated_total += out.used;
  if (!why.empty()) bad(at, std::string(what) + " " + why);
  // Restored however the packets' decoding ends (an error, an exception).
  struct Restore {
    State& s;
    const char* base;
    ~Restore() {
      s.inflating = false;
      s.inflated = 0;
      s.base = base;
    }
  } restore{*this, base};
  inflating = true;
  inflated = chunk(out.room());
  try {
    proto::FieldReader r(std::string_view(out.data(), out.used));
    proto::Field f;
    while (r.next(&f)) {
      if (f.number != pf::trace::kPacket) continue;  // another Trace field: skipped
      want(f, pf::kLengthDelimited, "Trace.packet");
      base = f.bytes.data();
      packet(f.bytes);
      if (stopped) break;
    }
    check(r);
  } catch (PerfettoBad& b) {
    if (stopped) throw;
    const auto inner = static_cast<std::size_t>(b.at - out.data());
    bad(at, std::string(what) + ", byte " + std::to_string(inner) + " inflated: " + b.what);
  }
}

}  // namespace jitscope::tools
