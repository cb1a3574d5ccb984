// PerfettoDecoder: interned data and debug annotations (a TrackEvent's args)
// as JSON members (perfetto_decoder.hpp).
#include "perfetto_state.hpp"

#include <bit>
#include <cstdio>
#include <cstring>

namespace jitscope::tools {
namespace {

namespace pf = detail::pf;
using proto::Field;
using proto::FieldReader;

const std::string kNoName, kNoNameJson = "\"\"";  // an unknown iid's (lookup)

// s as a JSON string. Most args are short plain ASCII ("0/0", a pass
// name): copied as they are, without the JSON writer's general path
// (escapes, UTF-8 checks, six bytes of room per byte).
void append_string(std::string* out, std::string_view s) {
  if (s.size() <= 64) {
    bool plain = true;
    for (const char c : s) {
      const auto u = static_cast<unsigned char>(c);
      plain &= u >= 0x20 && u < 0x80 && u != '"' && u != '\\';
    }
    if (plain) {  // one resize (push_back and append each check the room)
      const std::size_t at = out->size();
      out->resize(at + s.size() + 2);
      char* d = out->data() + at;
      d[0] = '"';
      if (!s.empty()) std::memcpy(d + 1, s.data(), s.size());
      d[s.size() + 1] = '"';
      return;
    }
  }
  detail::append_json_string(*out, s);
}

}  // namespace

std::string PerfettoDecoder::State::limit() const { return size_text(max_bytes); }

void PerfettoDecoder::State::check_size(const std::string& s, const char* at,
                                        const char* what) const {
  if (s.size() > max_bytes) bad(at, std::string(what) + " larger than " + limit());
}

void PerfettoDecoder::State::interned_data(Sequence& seq, std::string_view bytes) {
  FieldReader r(bytes);
  Field f;
  while (r.next(&f)) {
    Table kind;
    switch (f.number) {
      case pf::interned::kEventCategories: kind = Table::kCategory; break;
      case pf::interned::kEventNames: kind = Table::kName; break;
      case pf::interned::kDebugAnnotationNames: kind = Table::kArgName; break;
      case pf::interned::kDebugAnnotationStringValues: kind = Table::kString; break;
      default: continue;  // interned data of other kinds (callstacks, ...): not used
    }
    want(f, pf::kLengthDelimited, "an InternedData entry");
    std::uint64_t iid = 0;
    std::string_view name;
    FieldReader e(f.bytes);
    Field g;
    while (e.next(&g)) {
      if (g.number == pf::interned::kIid) {
        want(g, pf::kVarint, "an interned iid");
        iid = g.value;
      } else if (g.number == pf::interned::kName) {
        want(g, pf::kLengthDelimited, "an interned name");
        name = g.bytes;
      }
    }
    check(e);
    const std::size_t before_table = buckets(seq.interned.bucket_count());
    const auto [it, added] = seq.interned.try_emplace(Iid{iid, kind});
    // A rehash's new bucket array, counted as the table's (not in the
    // interned-strings bound, which counts what the file defines).
    const std::size_t grown = buckets(seq.interned.bucket_count()) - before_table;
    seq.table += grown;
    hold(grown, f.start);
    const std::size_t before = added ? 0 : entry(sizeof(Strings::value_type), it->second);
    // A fresh string: its room is its size (assign would keep a longer
    // name's room), so that the count below is what the table holds.
    // Annotation names and string values are only ever written as JSON
    // strings: kept so, escaped once here rather than at every use.
    if (kind == Table::kArgName || kind == Table::kString) {
      scratch.clear();
      detail::append_json_string(scratch, name);
      check_memory(f.start);
      std::string(scratch).swap(it->second);
    } else {
      std::string(name).swap(it->second);
    }
    const std::size_t after = entry(sizeof(Strings::value_type), it->second);
    seq.interned_bytes = seq.interned_bytes - before + after;
    interned_bytes = interned_bytes - before + after;
    if (interned_bytes > max_bytes) bad(f.start, "interned strings of more than " + limit());
    if (after >= before) {
      hold(after - before, f.start);
    } else {
      drop(before - after);
    }
  }
  check(r);
}

const std::string& PerfettoDecoder::State::lookup(Sequence& seq, Table kind, std::uint64_t iid) {
  Recent& r = seq.recent[static_cast<std::size_t>(kind) * kRecentPerKind + iid % kRecentPerKind];
  if (r.text != nullptr && r.iid == iid) return *r.text;
  const auto it = seq.interned.find(Iid{iid, kind});
  if (it != seq.interned.end()) {
    r.iid = iid;
    r.text = &it->second;
    return it->second;
  }
  ++skips.unknown_iids;
  return kind == Table::kArgName || kind == Table::kString ? kNoNameJson : kNoName;
}

void PerfettoDecoder::State::append_args(Sequence& seq, std::string* out) {
  bool first = true;
  for (const std::string_view a : annotations) {
    if (!first) out->push_back(',');
    first = false;
    annotation(seq, a, out, true, 0);
  }
}

void PerfettoDecoder::State::annotation(Sequence& seq, std::string_view bytes, std::string* out,
                                        bool named, int depth) {
  if (depth >= kMaxAnnotationDepth) {
    bad(bytes.data(),
        "debug annotations nested deeper than " + std::to_string(kMaxAnnotationDepth) + " levels");
  }
  enum class Kind {
    kNull,
    kBool,
    kUint,
    kInt,
    kDouble,
    kString,
    kStringIid,
    kPointer,
    kDict,
    kArray
  };
  const std::size_t room_before = out->capacity();
  Kind kind = Kind::kNull;
  std::uint64_t value = 0;
  std::string_view text, name;
  bool has_name = false, name_is_json = false;  // an interned name is kept as a JSON string
  FieldReader r(bytes);
  Field f;
  while (r.next(&f)) {
    switch (f.number) {
      case pf::annotation::kNameIid:
        want(f, pf::kVarint, "DebugAnnotation.name_iid");
        name = lookup(seq, Table::kArgName, f.value);
        has_name = name_is_json = true;
        break;
      case pf::annotation::kName:
        want(f, pf::kLengthDelimited, "DebugAnnotation.name");
        name = f.bytes;
        has_name = true;
        name_is_json = false;
        break;
      case pf::annotation::kBoolValue:
      case pf::annotation::kUintValue:
      case pf::annotation::kIntValue:
      case pf::annotation::kPointerValue:
      case pf::annotation::kStringValueIid:
        want(f, pf::kVarint, "a DebugAnnotation value");
        value = f.value;
        kind = f.number == pf::annotation::kBoolValue      ? Kind::kBool
               : f.number == pf::annotation::kUintValue    ? Kind::kUint
               : f.number == pf::annotation::kIntValue     ? Kind::kInt
               : f.number == pf::annotation::kPointerValue ? Kind::kPointer
                                                           : Kind::kStringIid;
        break;
      case pf::annotation::kDoubleValue:
        want(f, pf::kFixed64, "DebugAnnotation.double_value");
        value = f.value;
        kind = Kind::kDouble;
        break;
      case pf::annotation::kStringValue:
      case pf::annotation::kLegacyJsonValue:  // JSON text from the writer: kept as a string
        want(f, pf::kLengthDelimited, "a DebugAnnotation string");
        text = f.bytes;
        kind = Kind::kString;
        break;
      case pf::annotation::kDictEntries:
        want(f, pf::kLengthDelimited, "DebugAnnotation.dict_entries");
        kind = Kind::kDict;
        break;
      case pf::annotation::kArrayValues:
        want(f, pf::kLengthDelimited, "DebugAnnotation.array_values");
        if (kind != Kind::kDict) kind = Kind::kArray;
        break;
      default: break;
    }
  }
  check(r);
  if (named) {
    if (name_is_json) {
      out->append(name);
    } else {
      append_string(out, has_name ? name : std::string_view());
    }
    out->push_back(':');
  }
  switch (kind) {
    case Kind::kNull: out->append("null"); break;
    case Kind::kBool: out->append(value != 0 ? "true" : "false"); break;
    case Kind::kUint: detail::append_uint(*out, value); break;
    case Kind::kInt: detail::append_int(*out, static_cast<std::int64_t>(value)); break;
    case Kind::kDouble: detail::append_double(*out, std::bit_cast<double>(value)); break;
    case Kind::kString: append_string(out, text); break;
    case Kind::kStringIid: out->append(lookup(seq, Table::kString, value)); break;
    case Kind::kPointer: {
      char buf[24];
      std::snprintf(buf, sizeof buf, "\"0x%llx\"", static_cast<unsigned long long>(value));
      out->append(buf);
      break;
    }
    case Kind::kDict:
    case Kind::kArray: {
      const bool dict = kind == Kind::kDict;
      const std::uint32_t field =
          dict ? pf::annotation::kDictEntries : pf::annotation::kArrayValues;
      out->push_back(dict ? '{' : '[');
      bool first = true;
      FieldReader e(bytes);
      while (e.next(&f)) {
        if (f.number != field) continue;
        if (!first) out->push_back(',');
        first = false;
        annotation(seq, f.bytes, out, dict, depth + 1);
      }
      out->push_back(dict ? '}' : ']');
      break;
    }
  }
  check_size(*out, bytes.data(), "an event's args");
  // Only a grown buffer can have passed the bound (all else is counted as it grows).
  if (out->capacity() != room_before) check_memory(bytes.data());
}

}  // namespace jitscope::tools
