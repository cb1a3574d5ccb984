// PerfettoDecoder's memory (perfetto_decoder.hpp, "Bounds"): everything it
// keeps between packets is counted in bytes as it grows (`held`: sequences,
// tracks, interned strings, open slices and the room they keep), and so are
// the buffers of the packet being decoded; past max_memory the read stops
// with one error. Counts alone (sequences, tracks, slices) bound nothing: a
// track of long names, or one that once held many slices, costs what it
// holds, whatever their number.
#include "perfetto_state.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>

namespace jitscope::tools {
namespace {

// The inflate-work bound: compressed packets may inflate to this much, plus
// kInflateRatio bytes per byte of the input read so far. Deflate never
// passes 1032:1, and jitscope's zstd'd traces are nearer 4:1
// (docs/performance.md); a zstd frame of runs passes 30000:1, and each
// inflated byte costs decoding time (ten 22 KB packets took a minute).
constexpr std::uint64_t kInflateFloor = std::uint64_t{64} << 20;
constexpr std::uint64_t kInflateRatio = 1024;

template <class V>
void give_back(V& v, std::size_t keep) noexcept {
  if (v.capacity() * sizeof(typename V::value_type) > keep) V().swap(v);
}

// Drawn once per process: ASLR's placement of this variable and the clock.
const std::uint64_t kSeed =
    reinterpret_cast<std::uintptr_t>(&kSeed) ^
    static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());

}  // namespace

std::size_t PerfettoDecoder::State::Hash::operator()(std::uint64_t v) const noexcept {
  std::uint64_t z = v + kSeed + 0x9e3779b97f4a7c15ull;  // splitmix64's finalizer
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return static_cast<std::size_t>(z ^ (z >> 31));
}

std::string PerfettoDecoder::State::size_text(std::size_t bytes) {
  return bytes % (std::size_t{1} << 20) == 0 ? std::to_string(bytes >> 20) + " MiB"
                                             : std::to_string(bytes) + " bytes";
}

std::size_t PerfettoDecoder::State::in_use() const noexcept {
  return held + outside + inflated + heap(event) + heap(scratch) + heap(cats) + heap(fixed_name) +
         heap(fixed_cat) + heap(numbers) + room(annotations) + room(flows) + room(terminating) +
         room(ids) + heap(memo.key) + heap(memo.text);
}

void PerfettoDecoder::State::hold(std::size_t bytes, const char* at) {
  held += bytes;
  check_memory(at);
}

void PerfettoDecoder::State::check_memory(const char* at, std::size_t more) const {
  if (in_use() + more > max_memory) over_memory(at, more);
}

void PerfettoDecoder::State::over_memory(const char* at, std::size_t more) const {
  const auto mib = [](std::size_t b) { return std::to_string((b + (1 << 20) - 1) >> 20); };
  bad(at, "reading this trace takes more than " + size_text(max_memory) + " of memory (" +
              mib(held) + " MiB for its tracks, sequences, interned strings and open slices, " +
              mib(in_use() - held + more) + " MiB for the packet being read)");
}

void PerfettoDecoder::State::refit_room(std::string& s, std::size_t before, const char* at) {
  if (s.capacity() > 2 * s.size() + 64) std::string(s).swap(s);  // a fresh string: its own size
  const std::size_t after = heap(s);
  if (after > before) {
    hold(after - before, at);
  } else {
    drop(before - after);
  }
}

void PerfettoDecoder::State::trim_room(Track& t, OpenSlice& ended) {
  if (heap(ended.head) + heap(ended.args) > kKeptSliceBytes) {
    drop(heap(ended.head) + heap(ended.args));
    std::string().swap(ended.head);
    std::string().swap(ended.args);
  }
  // The room of a deep nesting goes once the track is back to a quarter of
  // it: amortized, each slice is moved at most once more.
  if (t.open.size() <= kKeptSlices || t.depth > t.open.size() / 4) return;
  const std::size_t keep = std::max(t.depth, kKeptSlices);
  std::size_t freed = room(t.open) + room(t.reads);
  for (std::size_t i = keep; i < t.open.size(); ++i) {
    freed += heap(t.open[i].head) + heap(t.open[i].args);
  }
  t.open.resize(keep);
  t.open.shrink_to_fit();
  if (t.reads.size() > keep) t.reads.resize(keep);
  t.reads.shrink_to_fit();
  drop(freed - room(t.open) - room(t.reads));
}

void PerfettoDecoder::State::settle_buffers() noexcept {
  for (std::string* s : {&event, &scratch, &cats, &fixed_name, &fixed_cat}) {
    if (heap(*s) > kKeptBufferBytes) std::string().swap(*s);
  }
  event_room = std::min(event_room, event.capacity());
  give_back(annotations, kKeptBufferBytes);
  give_back(flows, kKeptBufferBytes);
  give_back(terminating, kKeptBufferBytes);
  give_back(ids, kKeptBufferBytes);
}

std::size_t PerfettoDecoder::State::inflate_limit(std::size_t window, std::string* what) const {
  const std::uint64_t work = kInflateFloor + kInflateRatio * packet_end;
  const std::uint64_t work_left = work > inflated_total ? work - inflated_total : 0;
  const std::size_t used = in_use() + window;
  const std::size_t memory_left = max_memory > used ? max_memory - used : 0;
  std::size_t cap = max_bytes;
  *what = "inflates to more than " + limit();
  if (work_left < cap) {
    cap = static_cast<std::size_t>(work_left);
    *what = "inflates past the bound on inflating (" + size_text(kInflateFloor) + " and " +
            std::to_string(kInflateRatio) + " bytes per byte of the input up to here; " +
            std::to_string(inflated_total) + " inflated before it): a decompression bomb?";
  }
  if (memory_left < cap) {
    cap = memory_left;
    *what = "inflates to more than the memory left (" + size_text(max_memory) + " in all)";
  }
  return cap;
}

}  // namespace jitscope::tools
