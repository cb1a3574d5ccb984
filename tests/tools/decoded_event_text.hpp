// Every field of a DecodedEvent as one line of text, string views by their
// content (args by args_json()), for tests and fuzzers that hold two ways
// of decoding an event to the same result (perfetto_fields_test,
// fuzz_perfetto).
#pragma once

#include <event_decoder.hpp>

#include <string>
#include <string_view>

namespace jitscope::testing {

inline std::string decoded_event_text(const tools::DecodedEvent& e) {
  auto id = [](bool has, const tools::TraceId& t) {
    return !has          ? std::string("-")
           : t.is_string ? "s:" + std::string(t.text)
                         : std::to_string(t.number);
  };
  std::string s;
  for (std::string_view v :
       {e.ph, e.name, e.cat, e.id, e.bind_id, e.bp, e.scope, e.compile_id, e.arg_name,
        e.compiled_by, e.compiled_by_id, e.unit_key, e.frame, e.args_json()}) {
    s += std::string(v) + "|";
  }
  s += id(e.has_pid, e.pid) + "|" + id(e.has_tid, e.tid) + "|";
  s += (e.has_ts ? std::to_string(e.ts_ns) : "-") + "|" +
       (e.has_dur ? std::to_string(e.dur_ns) : "-");
  // The value even without has_correlation: what a failed read left (simdjson's get).
  s += "|" + std::string(e.has_correlation ? "" : "-") + std::to_string(e.correlation) + "|";
  for (bool b : {e.has_args, e.has_compile_id, e.has_device, e.has_stream, e.has_grid, e.has_bytes,
                 e.attached, e.failed, e.incomplete}) {
    s += b ? '1' : '0';
  }
  return s + "|@" + std::to_string(e.offset);
}

}  // namespace jitscope::testing
