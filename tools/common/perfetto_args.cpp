// PerfettoDecoder: interned data and debug annotations (a TrackEvent's args)
// as JSON members (perfetto_decoder.hpp).
#include "perfetto_state.hpp"

#include <bit>
#include <cstdio>
#include <cstring>

namespace jitscope::tools {
namespace {

namespace pf = detail::pf;

bool has_backslash(std::string_view s) noexcept { return s.find('\\') != std::string_view::npos; }

using proto::Field;
using proto::FieldReader;

const std::string kNoName, kNoNameJson = "\"\"";  // an unknown iid's (lookup)

// s as a JSON string. Most args are short plain ASCII ("0/0", a pass
// name): copied as they are, without the JSON writer's general path
// (escapes, UTF-8 checks, six bytes of room per byte). true when written
// without escapes (its text between the quotes is the string).
bool append_string(std::string* out, std::string_view s) {
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
      return true;
    }
  }
  const std::size_t at = out->size();
  detail::append_json_string(*out, s);
  return !has_backslash(std::string_view(*out).substr(at));
}

// `key` is `word` (of the size the caller checked): with a constant
// size, compared in a few loads, not by a call to memcmp.
template <std::size_t N>
bool is(std::string_view key, const char (&word)[N]) noexcept {
  return std::memcmp(key.data(), word, N - 1) == 0;
}

}  // namespace

std::string PerfettoDecoder::State::limit() const { return size_text(max_bytes); }

void PerfettoDecoder::State::too_large(const char* at, const char* what) const {
  bad(at, std::string(what) + " larger than " + limit());
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
    // A string redefined: args written with the old one are not the same.
    if (!added) seq.generation = ++generations;
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

void PerfettoDecoder::State::append_args(Sequence& seq, std::string* out, ArgsRead* read) {
  if (read != nullptr) read->clear();
  if (annotations.empty()) return;
  // The same annotations as the last args kept, read against the same strings?
  const bool memo_fits = out->empty() && memo.generation == seq.generation;
  if (memo_fits && same_annotations(memo.key)) {
    const std::size_t room_before = out->capacity();
    out->assign(memo.text);
    if (read != nullptr) *read = memo.read;
    if (out->capacity() != room_before) check_memory(annotations.front().data());
    return;
  }
  const bool may_keep = out->empty();
  const std::uint64_t unknown_before = skips.unknown_iids;
  bool first = true;
  for (const std::string_view a : annotations) {
    if (!first) out->push_back(',');
    first = false;
    annotation(seq, a, out, true, 0, read);
  }
  if (!may_keep || skips.unknown_iids != unknown_before || out->size() > kMemoBytes) return;
  std::size_t key_size = 0;
  for (const std::string_view a : annotations) key_size += sizeof(std::uint32_t) + a.size();
  if (key_size > kMemoBytes) return;
  // Room for the largest kept once, so that keeping never allocates again.
  memo.key.reserve(kMemoBytes);
  memo.text.reserve(kMemoBytes);
  check_memory(annotations.front().data());
  memo.key.clear();
  for (const std::string_view a : annotations) {
    const auto size = static_cast<std::uint32_t>(a.size());
    memo.key.append(reinterpret_cast<const char*>(&size), sizeof size);
    memo.key.append(a);
  }
  memo.text.assign(*out);
  if (read != nullptr) memo.read = *read;
  memo.generation = seq.generation;
}

bool PerfettoDecoder::State::same_annotations(std::string_view key) const noexcept {
  std::size_t at = 0;
  for (const std::string_view a : annotations) {
    std::uint32_t size = 0;
    if (key.size() - at < sizeof size + a.size()) return false;
    std::memcpy(&size, key.data() + at, sizeof size);
    at += sizeof size;
    if (size != a.size() || std::memcmp(key.data() + at, a.data(), a.size()) != 0) return false;
    at += a.size();
  }
  return at == key.size();
}

void PerfettoDecoder::State::note_arg(ArgsRead* r, std::string_view key, ArgKind kind,
                                      std::uint64_t value, bool unescaped, const std::string& out,
                                      std::size_t value_at) {
  using Kind = ArgKind;
  using F = ArgsRead::Field;
  // A pointer is written as a string ("0x1f"), and read as one.
  const bool is_string =
      kind == Kind::kString || kind == Kind::kStringIid || kind == Kind::kPointer;
  F field;
  // By length first: most args are compile_id, and most keys are none of these.
  switch (key.size()) {
    case 4:
      if (is(key, "name")) {
        field = F::kName;
      } else if (is(key, "grid")) {
        return r->add(F::kGrid, 0, 1);
      } else {
        return;
      }
      break;
    case 5:
      if (is(key, "bytes")) return r->add(F::kBytes, 0, 1);
      if (!is(key, "frame") || !is_string) return;  // of another type: not read, not counted
      field = F::kFrame;
      break;
    case 6:
      if (is(key, "device")) return r->add(F::kDevice, 0, 1);
      if (is(key, "stream")) return r->add(F::kStream, 0, 1);
      if (is(key, "failed")) return r->add(F::kFailed, 0, kind == Kind::kBool && value != 0);
      return;
    case 8:
      if (is(key, "attached")) return r->add(F::kAttached, 0, kind == Kind::kBool && value != 0);
      if (!is(key, "unit_key") || !is_string) return;
      field = F::kUnitKey;
      break;
    case 10:
      if (is(key, "compile_id")) {
        field = F::kCompileId;
        break;
      }
      if (is(key, "incomplete"))
        return r->add(F::kIncomplete, 0, kind == Kind::kBool && value != 0);
      return;
    case 11:
      if (is(key, "correlation")) {
        if (kind == Kind::kDouble) {
          r->plain = false;  // an int64 or not by its text
          return;
        }
        const bool int64 =
            kind == Kind::kInt || (kind == Kind::kUint && value <= std::uint64_t{INT64_MAX});
        if (int64) r->correlation = static_cast<std::int64_t>(value);
        return r->add(F::kCorrelation, 0, int64);
      }
      if (!is(key, "compiled_by")) return;
      field = F::kCompiledBy;
      break;
    case 14:
      if (!is(key, "compiled_by_id")) return;
      field = F::kCompiledById;
      break;
    default: return;  // EventDecoder reads other args on demand, from the text
  }
  // A string field: its text between the quotes, unless it was escaped
  // (EventDecoder's unescaping is the reference then) or is not a string
  // (which EventDecoder counts as ignored).
  if (!is_string || !unescaped || out.size() > UINT32_MAX) {  // offsets in 32 bits
    r->plain = false;
    return;
  }
  r->add(field, static_cast<std::uint32_t>(value_at + 1),
         static_cast<std::uint32_t>(out.size() - value_at - 2));
}

void PerfettoDecoder::State::annotation(Sequence& seq, std::string_view bytes, std::string* out,
                                        bool named, int depth, ArgsRead* read) {
  if (depth >= kMaxAnnotationDepth) {
    bad(bytes.data(),
        "debug annotations nested deeper than " + std::to_string(kMaxAnnotationDepth) + " levels");
  }
  using Kind = ArgKind;
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
  const std::size_t key_at = out->size();
  if (named) {
    if (name_is_json) {
      out->append(name);
    } else {
      append_string(out, has_name ? name : std::string_view());
    }
    out->push_back(':');
  }
  const std::size_t value_at = out->size();
  bool unescaped = false;  // a string value written as it is (note_arg)
  switch (kind) {
    case Kind::kNull: out->append("null"); break;
    case Kind::kBool: out->append(value != 0 ? "true" : "false"); break;
    case Kind::kUint: detail::append_uint(*out, value); break;
    case Kind::kInt: detail::append_int(*out, static_cast<std::int64_t>(value)); break;
    case Kind::kDouble: detail::append_double(*out, std::bit_cast<double>(value)); break;
    case Kind::kString: unescaped = append_string(out, text); break;
    case Kind::kStringIid: {
      const std::string& json = lookup(seq, Table::kString, value);  // kept escaped
      out->append(json);
      unescaped = read != nullptr && !has_backslash(json);
      break;
    }
    case Kind::kPointer: {
      char buf[24];
      std::snprintf(buf, sizeof buf, "\"0x%llx\"", static_cast<unsigned long long>(value));
      out->append(buf);
      unescaped = true;
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
  if (read != nullptr && named) {
    // The key as EventDecoder sees it: its text between the quotes, as written.
    const std::string_view key(out->data() + key_at + 1, value_at - key_at - 3);
    note_arg(read, key, kind, value, unescaped, *out, value_at);
  }
  check_size(*out, bytes.data(), "an event's args");
  // Only a grown buffer can have passed the bound (all else is counted as it grows).
  if (out->capacity() != room_before) check_memory(bytes.data());
}

}  // namespace jitscope::tools
