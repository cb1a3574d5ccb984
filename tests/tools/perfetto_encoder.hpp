// A protobuf encoder for the tools' tests: Perfetto traces built by hand
// (fields written with base/proto_wire.hpp, numbered by
// base/perfetto_fields.hpp), apart from the SDK's trace writer, so the
// reader is checked against the schema's numbers and not against the
// writer's habits.
//
//   namespace e = jitscope::testing::pfenc;
//   e::Msg p;
//   p.varint(pf::packet::kTrustedPacketSequenceId, 1).msg(pf::packet::kTrackEvent, ev);
//   const std::string trace = e::trace({p, q});
#pragma once

#include "base/perfetto_fields.hpp"
#include "base/proto_wire.hpp"

#include <bit>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

namespace jitscope::testing::pfenc {

namespace pf = jitscope::detail::pf;
namespace wire = jitscope::detail::wire;

class Msg {
 public:
  Msg& varint(std::uint32_t field, std::uint64_t v) {
    wire::append_varint_field(s_, pf::tag(field, pf::kVarint), v);
    return *this;
  }
  Msg& fixed64(std::uint32_t field, std::uint64_t v) {
    wire::append_fixed64_field(s_, pf::tag(field, pf::kFixed64), v);
    return *this;
  }
  Msg& fixed32(std::uint32_t field, std::uint32_t v) {
    wire::append_varint(s_, pf::tag(field, pf::kFixed32));
    for (int i = 0; i < 4; ++i) s_.push_back(static_cast<char>(v >> (8 * i)));
    return *this;
  }
  Msg& dbl(std::uint32_t field, double v) {
    return fixed64(field, std::bit_cast<std::uint64_t>(v));
  }
  Msg& bytes(std::uint32_t field, std::string_view b) {
    wire::append_bytes_field(s_, pf::tag(field, pf::kLengthDelimited), b);
    return *this;
  }
  Msg& msg(std::uint32_t field, const Msg& m) { return bytes(field, m.str()); }
  Msg& raw(std::string_view b) {
    s_.append(b);
    return *this;
  }
  const std::string& str() const { return s_; }

 private:
  std::string s_;
};

// The Trace: each packet as field 1.
inline std::string trace(const std::vector<Msg>& packets) {
  Msg t;
  for (const Msg& p : packets) t.msg(pf::trace::kPacket, p);
  return t.str();
}

// ---- pieces ----

inline Msg process_track(std::uint64_t uuid, std::int64_t pid, std::string_view name) {
  Msg proc;
  proc.varint(pf::track::kProcessPid, static_cast<std::uint64_t>(pid));
  if (!name.empty()) proc.bytes(pf::track::kProcessName, name);
  return Msg().varint(pf::track::kUuid, uuid).msg(pf::track::kProcess, proc);
}
inline Msg thread_track(std::uint64_t uuid, std::uint64_t parent, std::int64_t pid,
                        std::int64_t tid, std::string_view name) {
  Msg th;
  th.varint(pf::track::kThreadPid, static_cast<std::uint64_t>(pid))
      .varint(pf::track::kThreadTid, static_cast<std::uint64_t>(tid));
  if (!name.empty()) th.bytes(pf::track::kThreadName, name);
  return Msg()
      .varint(pf::track::kUuid, uuid)
      .varint(pf::track::kParentUuid, parent)
      .msg(pf::track::kThread, th);
}
inline Msg named_track(std::uint64_t uuid, std::uint64_t parent, std::string_view name,
                       bool counter = false) {
  Msg t;
  t.varint(pf::track::kUuid, uuid)
      .bytes(pf::track::kName, name)
      .varint(pf::track::kParentUuid, parent);
  if (counter) t.msg(pf::track::kCounter, Msg());
  return t;
}

// Debug annotations: named by string (iid 0) or by interned id.
inline Msg arg_int(std::string_view name, std::int64_t v) {
  return Msg()
      .bytes(pf::annotation::kName, name)
      .varint(pf::annotation::kIntValue, static_cast<std::uint64_t>(v));
}
inline Msg arg_uint(std::string_view name, std::uint64_t v) {
  return Msg().bytes(pf::annotation::kName, name).varint(pf::annotation::kUintValue, v);
}
inline Msg arg_double(std::string_view name, double v) {
  return Msg().bytes(pf::annotation::kName, name).dbl(pf::annotation::kDoubleValue, v);
}
inline Msg arg_bool(std::string_view name, bool v) {
  return Msg().bytes(pf::annotation::kName, name).varint(pf::annotation::kBoolValue, v ? 1 : 0);
}
inline Msg arg_string(std::string_view name, std::string_view v) {
  return Msg().bytes(pf::annotation::kName, name).bytes(pf::annotation::kStringValue, v);
}
inline Msg arg_dict(std::string_view name, std::initializer_list<Msg> entries) {
  Msg m;
  if (!name.empty()) m.bytes(pf::annotation::kName, name);
  for (const Msg& e : entries) m.msg(pf::annotation::kDictEntries, e);
  return m;
}
inline Msg arg_array(std::string_view name, std::initializer_list<Msg> values) {
  Msg m;
  if (!name.empty()) m.bytes(pf::annotation::kName, name);
  for (const Msg& v : values) m.msg(pf::annotation::kArrayValues, v);
  return m;
}

// InternedData with one entry of `kind` (interned::kEventNames, ...).
inline Msg& intern(Msg& interned, std::uint32_t kind, std::uint64_t iid, std::string_view name) {
  return interned.msg(kind, Msg().varint(pf::interned::kIid, iid).bytes(pf::interned::kName, name));
}

}  // namespace jitscope::testing::pfenc
