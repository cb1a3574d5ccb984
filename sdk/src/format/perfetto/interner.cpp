#include "format/perfetto/interner.hpp"

#include "base/perfetto_fields.hpp"
#include "base/proto_wire.hpp"
#include "base/utf8.hpp"

namespace jitscope::detail::pfw {

std::uint64_t Interner::intern(Kind kind, std::string_view s) {
  auto& table = tables_[kind];
  if (auto it = table.find(s); it != table.end()) return it->second;
  if (table.size() >= kMaxEntries || bytes_ + s.size() > kMaxBytes) return 0;
  const std::uint64_t iid = table.size() + 1;
  table.emplace(std::string(s), iid);
  bytes_ += s.size();
  define(kind, iid, s);
  return iid;
}

void Interner::define_all() {
  pending.clear();
  taken_ = 0;
  for (unsigned kind = 0; kind < 3; ++kind) {
    for (const auto& [s, iid] : tables_[kind]) define(static_cast<Kind>(kind), iid, s);
  }
}

void Interner::define(Kind kind, std::uint64_t iid, std::string_view s) {
  std::string fixed;
  const std::string_view text = valid_utf8(s, fixed);
  // InternedData.{event_names, event_categories, debug_annotation_names}:
  // {iid, name}, the same two field numbers in all three messages.
  static constexpr std::uint32_t kField[3] = {pf::interned::kEventNames,
                                              pf::interned::kEventCategories,
                                              pf::interned::kDebugAnnotationNames};
  const std::size_t at = wire::begin_nested(pending, pf::tag(kField[kind], pf::kLengthDelimited));
  wire::append_varint_field(pending, pf::tag(pf::interned::kIid, pf::kVarint), iid);
  wire::append_bytes_field(pending, pf::tag(pf::interned::kName, pf::kLengthDelimited), text);
  wire::end_nested(pending, at);
}

void Interner::forget_static() noexcept {
  for (auto& kind : cache_) {
    for (Slot& slot : kind) slot = {};
  }
}

void Interner::clear() {
  for (auto& table : tables_) table.clear();
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
