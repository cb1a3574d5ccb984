// Compressed packets (docs/perfetto-format.md, "Compressed packets"): a
// TracePacket whose compressed_packets (deflate, a zlib stream) or
// zstd_compressed_packets (one or more zstd frames) holds a serialized
// Trace. Its packets are decoded as if they stood in the file there; an
// error inside one names the compressed packet's byte and the inner offset.
#include "perfetto_state.hpp"

#include <cstring>

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

#if JITSCOPE_TOOLS_HAVE_ZLIB
// A zlib stream (Perfetto's deflate) into `out`; "" or what went wrong.
std::string inflate_zlib(std::string_view in, std::size_t max, std::string& out) {
  z_stream zs{};
  if (inflateInit(&zs) != Z_OK) return "cannot start zlib's inflate (out of memory)";
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  zs.avail_in = static_cast<uInt>(in.size());
  std::string why;
  for (;;) {
    if (out.size() - zs.total_out < 1) {
      if (out.size() >= max) {
        why = "inflates past the limit";
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
      why = std::string("is corrupt (zlib: ") + (zs.msg != nullptr ? zs.msg : "error") + ")";
      break;
    }
  }
  out.resize(zs.total_out);
  inflateEnd(&zs);
  return why;
}
#endif

#if JITSCOPE_TOOLS_HAVE_ZSTD
std::string inflate_zstd(std::string_view in, std::size_t max, std::string& out) {
  ZSTD_DStream* ds = ZSTD_createDStream();
  if (ds == nullptr) return "cannot start zstd (out of memory)";
  ZSTD_inBuffer src{in.data(), in.size(), 0};
  std::size_t used = 0;
  std::size_t last = 1;  // 0 once a frame is complete
  std::string why;
  while (src.pos < src.size || last != 0) {
    if (out.size() == used) {
      if (out.size() >= max) {
        why = "inflates past the limit";
        break;
      }
      out.resize(std::min(max, out.size() + kStep));
    }
    ZSTD_outBuffer dst{out.data(), out.size(), used};
    last = ZSTD_decompressStream(ds, &dst, &src);
    used = dst.pos;
    if (ZSTD_isError(last) != 0) {
      why = std::string("is corrupt (zstd: ") + ZSTD_getErrorName(last) + ")";
      break;
    }
    if (src.pos == src.size && last != 0 && dst.pos < dst.size) {
      why = "is cut off (its zstd frame has no end)";
      break;
    }
  }
  out.resize(used);
  ZSTD_freeDStream(ds);
  return why;
}
#endif

}  // namespace

void PerfettoDecoder::State::compressed_packets(std::string_view bytes, bool zstd, const char* at) {
  if (inflating) bad(at, "a compressed packet inside a compressed packet");
  const char* what =
      zstd ? "TracePacket.zstd_compressed_packets" : "TracePacket.compressed_packets";
  std::string out;
  std::string why;
  if (zstd) {
#if JITSCOPE_TOOLS_HAVE_ZSTD
    why = inflate_zstd(bytes, max_bytes, out);
#else
    bad(at, std::string(what) +
                ": the tools were built without zstd (install libzstd-dev and "
                "rebuild)");
#endif
  } else {
#if JITSCOPE_TOOLS_HAVE_ZLIB
    why = inflate_zlib(bytes, max_bytes, out);
#else
    bad(at, std::string(what) +
                ": the tools were built without zlib (install zlib1g-dev and "
                "rebuild)");
#endif
  }
  if (why == "inflates past the limit") why = "inflates to more than " + limit();
  if (!why.empty()) bad(at, std::string(what) + " " + why);
  inflating = true;
  const char* const saved_base = base;
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
    inflating = false;
    base = saved_base;
    if (stopped) throw;
    const auto inner = static_cast<std::size_t>(b.at - out.data());
    bad(at, std::string(what) + ", byte " + std::to_string(inner) + " inflated: " + b.what);
  }
  inflating = false;
  base = saved_base;
}

}  // namespace jitscope::tools
