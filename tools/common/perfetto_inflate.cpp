// Compressed packets (docs/perfetto-format.md, "Compressed packets"): a
// TracePacket whose compressed_packets (deflate, a zlib stream) or
// zstd_compressed_packets (one or more zstd frames) holds a serialized
// Trace. Its packets are decoded as if they stood in the file there; an
// error inside one names the compressed packet's byte and the inner offset.
#include "perfetto_state.hpp"

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

// The output grows in steps of this much, up to the decoder's max_bytes.
constexpr std::size_t kStep = std::size_t{1} << 20;

// Each inflater: `in` into `out`, at most `max` bytes; "" or what went
// wrong, to follow the field's name ("is cut off ..."); `over` names the
// bound in the message of an output past it.

#if JITSCOPE_TOOLS_HAVE_ZLIB
// A zlib stream (Perfetto's deflate) into `out`; "" or what went wrong.
std::string inflate_zlib(std::string_view in, std::size_t max, const std::string& over,
                         std::string& out) {
  if (in.size() > UINT_MAX) return "is larger than zlib takes in one piece (4 GiB)";
  z_stream zs{};
  if (inflateInit(&zs) != Z_OK) return "cannot start zlib's inflate (out of memory)";
  // Ended however this returns (a resize below may throw).
  const std::unique_ptr<z_stream, int (*)(z_stream*)> end(&zs, inflateEnd);
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  zs.avail_in = static_cast<uInt>(in.size());
  std::string why;
  for (;;) {
    if (out.size() - zs.total_out < 1) {
      if (out.size() >= max) {
        why = "inflates to more than " + over;
        break;
      }
      out.resize(std::min(max, out.size() + kStep));
    }
    zs.next_out = reinterpret_cast<Bytef*>(out.data() + zs.total_out);
    zs.avail_out = static_cast<uInt>(out.size() - zs.total_out);
    const int rc = inflate(&zs, Z_NO_FLUSH);
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
  out.resize(zs.total_out);
  return why;
}
#endif

#if JITSCOPE_TOOLS_HAVE_ZSTD
std::string inflate_zstd(std::string_view in, std::size_t max, const std::string& over,
                         std::string& out) {
  const std::unique_ptr<ZSTD_DStream, std::size_t (*)(ZSTD_DStream*)> owned(ZSTD_createDStream(),
                                                                            ZSTD_freeDStream);
  ZSTD_DStream* ds = owned.get();
  if (ds == nullptr) return "cannot start zstd (out of memory)";
  // A frame's window is memory zstd takes before any output: no larger than
  // the bound on what the packet may inflate to, between zstd's minimum
  // (1 KiB) and its default limit (128 MiB).
  int window_log = 10;
  while (window_log < 27 && (std::size_t{1} << window_log) < max) ++window_log;
  ZSTD_DCtx_setParameter(ds, ZSTD_d_windowLogMax, window_log);
  ZSTD_inBuffer src{in.data(), in.size(), 0};
  std::size_t used = 0;
  std::size_t last = 1;  // 0 once a frame is complete
  std::string why;
  while (src.pos < src.size || last != 0) {
    if (out.size() == used) {
      if (out.size() >= max) {
        why = "inflates to more than " + over;
        break;
      }
      out.resize(std::min(max, out.size() + kStep));
    }
    ZSTD_outBuffer dst{out.data(), out.size(), used};
    last = ZSTD_decompressStream(ds, &dst, &src);
    used = dst.pos;
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
  out.resize(used);
  return why;
}
#endif

}  // namespace

void PerfettoDecoder::State::compressed_packets([[maybe_unused]] std::string_view bytes, bool zstd,
                                                const char* at) {
  if (inflating) bad(at, "a compressed packet inside a compressed packet");
  const char* what =
      zstd ? "TracePacket.zstd_compressed_packets" : "TracePacket.compressed_packets";
  std::string out;
  std::string why;
  [[maybe_unused]] const auto missing = [&](const char* library, const char* package) {
    bad(at, std::string(what) + ": the tools were built without " + library + " (install " +
                package + " and rebuild)");
  };
  if (zstd) {
#if JITSCOPE_TOOLS_HAVE_ZSTD
    why = inflate_zstd(bytes, max_bytes, limit(), out);
#else
    missing("zstd", "libzstd-dev");
#endif
  } else {
#if JITSCOPE_TOOLS_HAVE_ZLIB
    why = inflate_zlib(bytes, max_bytes, limit(), out);
#else
    missing("zlib", "zlib1g-dev");
#endif
  }
  if (!why.empty()) bad(at, std::string(what) + " " + why);
  // Restored however the packets' decoding ends (an error, an exception).
  struct Restore {
    State& s;
    const char* base;
    ~Restore() {
      s.inflating = false;
      s.base = base;
    }
  } restore{*this, base};
  inflating = true;
  try {
    proto::FieldReader r(out);
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
