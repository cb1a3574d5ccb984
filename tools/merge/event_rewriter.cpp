#include "event_rewriter.hpp"

#include "base/json_writer.hpp"  // sdk/src: the one escaping writer
#include "base/spawn_flow.hpp"   // sdk/src: which flow ids join two inputs
#include "json_scan.hpp"         // tools/common: trim_json_ws

#include <algorithm>
#include <charconv>

namespace jitscope::tools::merge {
namespace ondemand = simdjson::ondemand;
namespace {

std::string at(const std::string& path, std::uint64_t offset, std::string_view what) {
  return path + ": byte " + std::to_string(offset) + ": " + std::string(what);
}

// Flow and async events: their ids are global in the trace-event format, so
// each input's are renumbered apart. Object events (O/N/D) are per process.
bool has_global_id(std::string_view ph) {
  return ph.size() == 1 && std::string_view("stfbenSTpF").find(ph[0]) != std::string_view::npos;
}

bool to_int(std::string_view token, std::int64_t* v) {
  const auto [ptr, ec] = std::from_chars(token.data(), token.data() + token.size(), *v);
  return ec == std::errc() && ptr == token.data() + token.size();
}

// A scalar's raw token without the white space simdjson leaves after it.
std::string_view token_of(ondemand::value v) { return trim_json_ws(v.raw_json_token()); }

// The same, but empty for an object or array (an id no writer uses): the raw token of a
// container is only its opening bracket, and a splice over it would break the event.
std::string_view scalar_token_of(ondemand::value v) {
  ondemand::json_type type;
  if (v.type().get(type) != simdjson::SUCCESS || type == ondemand::json_type::object ||
      type == ondemand::json_type::array) {
    return {};
  }
  return token_of(v);
}

// The string value of `v`, unescaped, or empty when it is not a string.
std::string_view string_of(ondemand::value v) {
  std::string_view s;
  if (v.get_string().get(s) != simdjson::SUCCESS) return {};
  return s;
}

}  // namespace

void append_signed_us(std::string* out, std::int64_t ns) {
  if (ns < 0) {
    out->push_back('-');
    detail::append_us(*out, static_cast<std::uint64_t>(-(ns + 1)) + 1);
  } else {
    detail::append_us(*out, static_cast<std::uint64_t>(ns));
  }
}

// ---- pass 1 ----

bool InputScanner::add(const RawEvent& event, std::string* error) {
  ++scan_->events;
  // On Demand reads only what it is asked for: check the whole event once
  // here, so that pass 2 never copies a broken value into the merged file.
  simdjson::dom::element checked;
  if (const auto e = validator_.parse(event.json.data(), event.json.size(), false).get(checked)) {
    *error = at(scan_->path, event.offset,
                std::string("an event that is not valid JSON: ") + simdjson::error_message(e));
    return false;
  }
  ondemand::document doc;
  ondemand::object obj;
  simdjson::error_code e = parser_
                               .iterate(event.json.data(), event.json.size(),
                                        event.json.size() + simdjson::SIMDJSON_PADDING)
                               .get(doc);
  if (!e) e = doc.get_object().get(obj);
  if (e) {
    *error = at(scan_->path, event.offset,
                std::string("an event that is not a JSON object: ") + simdjson::error_message(e));
    return false;
  }
  std::string_view ph, name, pid, args;
  for (auto result : obj) {
    ondemand::field field;
    if (std::move(result).get(field)) {
      *error = at(scan_->path, event.offset, "malformed event");
      return false;
    }
    ondemand::value value = field.value();
    if (field.key() == "ph") {
      ph = string_of(value);
    } else if (field.key() == "name") {
      name = string_of(value);
      if (name == "jitscope_merge") scan_->merged = true;
    } else if (field.key() == "pid") {
      ondemand::json_type type;
      if (value.type().get(type) || type == ondemand::json_type::object ||
          type == ondemand::json_type::array) {
        *error = at(scan_->path, event.offset, "pid is not a number or a string");
        return false;
      }
      pid = token_of(value);
    } else if (field.key() == "args") {
      ondemand::object a;
      if (value.get_object().get(a) == simdjson::SUCCESS &&
          a.raw_json().get(args) != simdjson::SUCCESS) {
        args = {};
      }
    }
  }
  // get_string() views live in the parser's string buffer, valid until the
  // next iterate(); copy what outlives this event.
  if (!pid.empty()) scan_->pids.emplace(pid);
  if (ph != "M" || args.empty()) return true;
  const char* buffer_end = event.json.data() + event.json.size() + simdjson::SIMDJSON_PADDING;
  if (name == "jitscope_session") {
    // A session we cannot read leaves the input unplaceable (plan() says
    // why), not unreadable.
    if (read_session(args, buffer_end) && !to_int(pid, &scan_->session_pid)) {
      scan_->has_session = false;
      scan_->session_problem = "its jitscope_session event has no integer pid";
    }
    return true;
  }
  if (name != "process_name" && name != "jitscope_child") return true;
  ondemand::document adoc;
  ondemand::object aobj;
  if (args_parser_
          .iterate(args.data(), args.size(), static_cast<std::size_t>(buffer_end - args.data()))
          .get(adoc) ||
      adoc.get_object().get(aobj)) {
    return true;  // args we cannot read: the event passes through unlabelled
  }
  if (name == "process_name") {
    std::string_view n;
    if (aobj["name"].get_string().get(n) == simdjson::SUCCESS && !pid.empty()) {
      scan_->process_names[std::string(pid)] = std::string(n);
    }
    return true;
  }
  ChildTrace child;
  for (auto result : aobj) {
    ondemand::field field;
    if (std::move(result).get(field)) return true;
    if (field.key() == "pid") {
      if (field.value().get_int64().get(child.pid) != simdjson::SUCCESS) child.pid = 0;
    } else if (field.key() == "trace") {
      child.trace = std::string(string_of(field.value()));
    } else if (field.key() == "label") {
      child.label = std::string(string_of(field.value()));
    }
  }
  if (!child.trace.empty()) scan_->children.push_back(std::move(child));
  return true;
}

bool InputScanner::read_session(std::string_view args, const char* buffer_end) {
  ondemand::document adoc;
  ondemand::object aobj;
  scan_->has_session = false;
  if (args_parser_
          .iterate(args.data(), args.size(), static_cast<std::size_t>(buffer_end - args.data()))
          .get(adoc) ||
      adoc.get_object().get(aobj)) {
    scan_->session_problem = "its jitscope_session metadata is not an object";
    return false;
  }
  bool has_unix = false, has_mono = false;
  for (auto result : aobj) {
    ondemand::field field;
    if (std::move(result).get(field)) break;
    if (field.key() == "session_start_unix_ns") {
      has_unix = field.value().get_int64().get(scan_->start_unix_ns) == simdjson::SUCCESS;
    } else if (field.key() == "session_start_monotonic_ns") {
      has_mono = field.value().get_int64().get(scan_->start_monotonic_ns) == simdjson::SUCCESS;
    } else if (field.key() == "host") {
      scan_->host = std::string(string_of(field.value()));
    } else if (field.key() == "boot_id") {
      scan_->boot_id = std::string(string_of(field.value()));
    }
  }
  if (!has_unix || !has_mono) {
    scan_->session_problem =
        "its jitscope_session metadata lacks session_start_unix_ns or session_start_monotonic_ns "
        "(written by jitscope 0.1.0 and later)";
    return false;
  }
  if (std::int64_t offset = 0;
      __builtin_sub_overflow(scan_->start_unix_ns, scan_->start_monotonic_ns, &offset)) {
    scan_->session_problem = "its jitscope_session start times are out of range";
    return false;
  }
  scan_->has_session = true;
  scan_->session_problem.clear();
  return true;
}

void InputScanner::add_top_level(const TopLevelField& field) {
  if (field.key != "beginningOfTime") return;
  std::int64_t ns = 0;
  if (parse_us_to_ns(field.raw_json, &ns)) scan_->beginning_of_time_ns = ns;
}

// ---- pass 2 ----

namespace {

// An end of an arrow between processes, a spawn's or a task's
// (base/spawn_flow.hpp): its id is the same in both processes' traces, and
// must stay so to join them; the ids given to the others count from 1, far
// below its range.
bool spawn_arrow_end(std::string_view ph, std::string_view cat, std::string_view name,
                     std::string_view id) {
  const bool spawn = name == detail::kSpawnFlowName;
  if ((ph != "s" && ph != "f") || cat != detail::kSpawnFlowCategory ||
      (!spawn && name != detail::kTaskFlowName)) {
    return false;
  }
  std::uint64_t n = 0;
  const auto [end, ec] = std::from_chars(id.data(), id.data() + id.size(), n);
  return ec == std::errc() && end == id.data() + id.size() &&
         (spawn ? detail::is_spawn_flow(n) : detail::is_task_flow(n));
}

}  // namespace

std::int64_t EventRewriter::flow_id(std::string_view token) {
  const auto [it, added] = flow_ids_.try_emplace(std::string(token), *next_flow_id_);
  if (added) ++*next_flow_id_;
  return it->second;
}

bool EventRewriter::rewrite(const RawEvent& event, std::string* out, std::string* error) {
  const std::string_view json = event.json;
  ondemand::document doc;
  ondemand::object obj;
  if (parser_.iterate(json.data(), json.size(), json.size() + simdjson::SIMDJSON_PADDING)
          .get(doc) ||
      doc.get_object().get(obj)) {
    *error = at(scan_.path, event.offset, "an event that is not a JSON object");
    return false;
  }
  splices_.clear();
  auto where = [&](std::string_view token) {
    return static_cast<std::size_t>(token.data() - json.data());
  };
  std::string_view ph, name, cat, pid, ts, id, bind_id, global_id, args_name;
  for (auto result : obj) {
    ondemand::field field;
    if (std::move(result).get(field)) {
      *error = at(scan_.path, event.offset, "malformed event");
      return false;
    }
    ondemand::value value = field.value();
    const auto key = field.key();
    if (key == "ph") {
      ph = string_of(value);
    } else if (key == "name") {
      name = string_of(value);
    } else if (key == "cat") {
      cat = string_of(value);
    } else if (key == "pid") {
      pid = token_of(value);
    } else if (key == "ts") {
      ts = token_of(value);
    } else if (key == "id") {
      id = scalar_token_of(value);
    } else if (key == "bind_id") {
      bind_id = scalar_token_of(value);
    } else if (key == "id2") {
      ondemand::object id2;
      if (value.get_object().get(id2) == simdjson::SUCCESS) {
        ondemand::value g;
        if (id2["global"].get(g) == simdjson::SUCCESS) global_id = scalar_token_of(g);
      }
    } else if (key == "args") {
      ondemand::object a;
      if (value.get_object().get(a) == simdjson::SUCCESS) {
        ondemand::value n;
        if (a["name"].get(n) == simdjson::SUCCESS) {
          ondemand::json_type type;
          if (n.type().get(type) == simdjson::SUCCESS && type == ondemand::json_type::string) {
            args_name = token_of(n);
          }
        }
      }
    }
  }
  // ph and name are views into the parser's buffer: compare them before any
  // further parsing.
  const bool process_name = ph == "M" && name == "process_name";
  const bool global_ids = has_global_id(ph);

  if (!pid.empty()) {
    const auto mapped = plan_.pid_map.find(std::string(pid));
    if (mapped != plan_.pid_map.end()) {
      splices_.push_back({where(pid), pid.size(), std::to_string(mapped->second)});
    }
  }
  if (!ts.empty() && plan_.shift_ns != 0) {
    std::int64_t ns = 0;
    if (!parse_us_to_ns(ts, &ns)) {
      *error = at(scan_.path, event.offset, "ts is not a number");
      return false;
    }
    std::int64_t shifted = 0;
    if (__builtin_add_overflow(ns, plan_.shift_ns, &shifted)) {
      *error =
          at(scan_.path, event.offset, "ts out of range once shifted onto the merged timeline");
      return false;
    }
    std::string text;
    append_signed_us(&text, shifted);
    splices_.push_back({where(ts), ts.size(), std::move(text)});
  }
  if (!id.empty() && global_ids && !spawn_arrow_end(ph, cat, name, id))
    splices_.push_back({where(id), id.size(), std::to_string(flow_id(id))});
  if (!bind_id.empty()) {
    splices_.push_back({where(bind_id), bind_id.size(), std::to_string(flow_id(bind_id))});
  }
  if (!global_id.empty()) {
    splices_.push_back({where(global_id), global_id.size(), std::to_string(flow_id(global_id))});
  }
  if (process_name && !args_name.empty() && !pid.empty()) {
    std::string text;
    detail::append_json_string(text, merged_process_name(scan_, plan_, std::string(pid)));
    splices_.push_back({where(args_name), args_name.size(), std::move(text)});
  }
  std::sort(splices_.begin(), splices_.end(),
            [](const Splice& a, const Splice& b) { return a.at < b.at; });
  std::size_t copied = 0;
  for (const Splice& s : splices_) {
    if (s.at < copied) continue;  // a duplicate key: the first one wins
    out->append(json.substr(copied, s.at - copied));
    out->append(s.text);
    copied = s.at + s.length;
  }
  out->append(json.substr(copied));
  return true;
}

std::vector<std::string> EventRewriter::missing_process_names() const {
  std::vector<std::string> events;
  for (const auto& [token, new_pid] : plan_.pid_map) {
    if (scan_.process_names.count(token) != 0) continue;
    std::string event;
    detail::JsonWriter w(event);
    w.begin_object();
    w.member("ph", "M");
    w.member("name", "process_name");
    w.member("pid", new_pid);
    w.member("tid", 0);
    w.key("args");
    w.begin_object();
    w.member("name", std::string_view(merged_process_name(scan_, plan_, token)));
    w.end_object();
    w.end_object();
    events.push_back(std::move(event));
  }
  return events;
}

std::string merge_metadata(const std::vector<InputScan>& scans, const MergePlan& plan) {
  std::string out;
  jitscope::detail::JsonWriter w(out);
  w.begin_object();
  w.member("ph", "M");
  w.member("name", "jitscope_merge");
  const InputPlan& ref = plan.inputs[static_cast<std::size_t>(plan.reference)];
  w.member("pid", ref.pid_map.empty() ? std::int64_t{0} : ref.pid_map.begin()->second);
  w.member("tid", 0);
  w.key("args");
  w.begin_object();
  w.member("reference", std::string_view(scans[static_cast<std::size_t>(plan.reference)].path));
  w.key("inputs");
  w.begin_array();
  for (std::size_t i = 0; i < scans.size(); ++i) {
    const InputPlan& p = plan.inputs[i];
    w.begin_object();
    w.member("rank", p.rank);
    w.member("path", std::string_view(scans[i].path));
    w.member("host", std::string_view(scans[i].host));
    w.member("alignment", alignment_name(p.alignment));
    w.member("shift_ns", p.shift_ns);
    w.member("events", scans[i].events);
    w.key("pids");
    w.begin_object();
    for (const auto& [token, pid] : p.pid_map) w.member(token, pid);
    w.end_object();
    w.end_object();
  }
  w.end_array();
  w.end_object();
  w.end_object();
  return out;
}

}  // namespace jitscope::tools::merge
