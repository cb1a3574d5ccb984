#include "format/perfetto/interner.hpp"

#include "base/perfetto_fields.hpp"
#include "base/proto_wire.hpp"
#include "base/utf8.hpp"

#include <algorithm>

namespace jitscope::detail::pfw {

std::uint64_t Interner::intern(Kind kind, std::string_view s) {
  auto& table = tables_[kind];
  if (auto it = table.find(s); it != table.end()) {
    mark(kind, it->second);
    return it->second;
  }
  if (table.size() >= kMaxEntries || bytes_ + s.size() > kMaxBytes) return 0;
  const std::uint64_t iid = table.size() + 1;
  // Room first, doubling: no throw past the emplace.
  auto& entries = entries_[kind];
  if (entries.size() == entries.capacity())
    entries.reserve(std::max<std::size_t>(16, 2 * entries.size()));
  const auto it = table.emplace(std::string(s), iid).first;
  entries.push_back({&it->first, 0});  // a node's key stays put
  bytes_ += s.size();
  mark(kind, iid);
  return iid;
}

void Interner::mark(Kind kind, std::uint64_t iid) {
  Entry& e = entries_[kind][iid - 1];
  if (e.epoch == epoch_) return;
  append_definition(pending, kind, iid, *e.name);
  e.epoch = epoch_;
}

void Interner::restart() noexcept {
  ++epoch_;  // every entry and cache slot is of an earlier one now
  pending.clear();
  taken_ = 0;
}

namespace {

// Calls f(iid) for each debug annotation name id in `bytes`: DebugAnnotation
// messages' fields (`in_annotation`), or a TrackEvent's fields whose
// debug_annotations are such messages. Dict entries and array values are
// annotations too; nesting is bounded as the writer bounds it.
template <typename F>
void scan_names(std::string_view bytes, bool in_annotation, int depth, F&& f) {
  if (depth > 64) return;
  const char* p = bytes.data();
  const char* const end = p + bytes.size();
  bool truncated = false;
  while (p < end) {
    std::uint64_t tag = 0, value = 0;
    if (!wire::read_varint(&p, end, &tag, &truncated)) return;
    const auto field = static_cast<std::uint32_t>(tag >> 3);
    switch (tag & 7) {
      case pf::kVarint:
        if (!wire::read_varint(&p, end, &value, &truncated)) return;
        if (in_annotation && field == pf::annotation::kNameIid) f(value);
        break;
      case pf::kFixed64:
        if (end - p < 8) return;
        p += 8;
        break;
      case pf::kLengthDelimited: {
        if (!wire::read_varint(&p, end, &value, &truncated) ||
            value > static_cast<std::uint64_t>(end - p)) {
          return;
        }
        const std::string_view body(p, static_cast<std::size_t>(value));
        p += value;
        const bool nested = in_annotation ? field == pf::annotation::kDictEntries ||
                                                field == pf::annotation::kArrayValues
                                          : field == pf::event::kDebugAnnotations;
        if (nested) scan_names(body, true, depth + 1, f);
        break;
      }
      case pf::kFixed32:
        if (end - p < 4) return;
        p += 4;
        break;
      default: return;
    }
  }
}

}  // namespace

void Interner::define_annotation_names(std::string_view annotations) {
  scan_names(annotations, false, 0, [&](std::uint64_t iid) {
    if (iid - 1 < entries_[kAnnotation].size()) mark(kAnnotation, iid);
  });
}

void Interner::append_annotation_names(std::string_view annotations, std::string& defs) const {
  scan_names(annotations, false, 0, [&](std::uint64_t iid) {
    if (iid - 1 < entries_[kAnnotation].size()) {
      append_definition(defs, kAnnotation, iid, *entries_[kAnnotation][iid - 1].name);
    }
  });
}

void Interner::append_definition(std::string& out, Kind kind, std::uint64_t iid,
                                 std::string_view s) {
  std::string fixed;
  const std::string_view text = valid_utf8(s, fixed);
  // InternedData.{event_names, event_categories, debug_annotation_names}:
  // {iid, name}, the same two field numbers in all three messages.
  static constexpr std::uint32_t kField[3] = {pf::interned::kEventNames,
                                              pf::interned::kEventCategories,
                                              pf::interned::kDebugAnnotationNames};
  const std::size_t at = wire::begin_nested(out, pf::tag(kField[kind], pf::kLengthDelimited));
  wire::append_varint_field(out, pf::tag(pf::interned::kIid, pf::kVarint), iid);
  wire::append_bytes_field(out, pf::tag(pf::interned::kName, pf::kLengthDelimited), text);
  wire::end_nested(out, at);
}

void Interner::forget_static() noexcept {
  for (auto& kind : cache_) {
    for (Slot& slot : kind) slot = {};
  }
}

void Interner::clear() {
  for (auto& table : tables_) table.clear();
  for (auto& entries : entries_) entries.clear();
  bytes_ = 0;
  pending.clear();
  taken_ = 0;
  forget_static();
}

std::string_view valid_utf8(std::string_view s, std::string& repaired) {
  std::size_t i = 0;
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  for (; i < s.size(); ++i) {
    if (p[i] >= 0x80) {
      const int step = utf8_step(p + i, s.size() - i);
      if (step < 0) break;
      i += static_cast<std::size_t>(step) - 1;
    }
  }
  if (i == s.size()) return s;
  repaired.assign(s.data(), i);
  while (i < s.size()) {
    if (p[i] < 0x80) {
      repaired.push_back(static_cast<char>(p[i++]));
      continue;
    }
    const int step = utf8_step(p + i, s.size() - i);
    if (step > 0) {
      repaired.append(s.data() + i, static_cast<std::size_t>(step));
      i += static_cast<std::size_t>(step);
    } else {
      repaired.append("\xEF\xBF\xBD");  // U+FFFD per maximal invalid subpart
      i += static_cast<std::size_t>(-step);
    }
  }
  return repaired;
}

}  // namespace jitscope::detail::pfw
