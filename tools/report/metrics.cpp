#include "metrics.hpp"

#include "base/json_writer.hpp"
#include "base/record_keys.hpp"

#include <simdjson.h>
#include <input_file.hpp>
#include <line_reader.hpp>

namespace jitscope::report {
namespace {

// A number of µs (an integer or a double) as ns; false if it is not a
// number or its ns do not fit in int64.
bool us_to_ns(simdjson::dom::element e, std::int64_t* ns) {
  std::int64_t i = 0;
  if (e.get_int64().get(i) == simdjson::SUCCESS) return !__builtin_mul_overflow(i, 1000, ns);
  double d = 0;
  if (e.get_double().get(d) == simdjson::SUCCESS) {
    const double v = d * 1000.0 + (d < 0 ? -0.5 : 0.5);
    // [-2^63, 2^63) as doubles: anything outside (or NaN) does not fit.
    if (!(v >= -9223372036854775808.0 && v < 9223372036854775808.0)) return false;
    *ns = static_cast<std::int64_t>(v);
    return true;
  }
  return false;
}

std::string string_or_empty(simdjson::dom::object o, std::string_view key) {
  std::string_view s;
  if (o[key].get_string().get(s) == simdjson::SUCCESS) return std::string(s);
  return {};
}

// The fields jitscope writes in a compile record (base/record_keys.hpp,
// with "record" of a GPU line and the *_us phase columns); any other is the
// user's context.
bool jitscope_field(std::string_view key) {
  return detail::is_record_key(key) || key == "record" ||
         (key.size() > 3 && key.substr(key.size() - 3) == "_us");
}

// The value as compact JSON; past kMaxFieldJson bytes, a JSON string of its start and "…".
std::string field_json(simdjson::dom::element value) {
  std::string json = simdjson::minify(value);
  if (json.size() <= UnitMetrics::kMaxFieldJson) return json;
  json.resize(UnitMetrics::kMaxFieldJson);
  json += "…";
  std::string quoted;
  detail::append_json_string(quoted, json);  // a cut UTF-8 sequence becomes U+FFFD
  return quoted;
}

// The record's "artifacts": entries without a string path are skipped.
void read_artifacts(simdjson::dom::element value, std::vector<Artifact>* out) {
  simdjson::dom::array list;
  if (value.get_array().get(list) != simdjson::SUCCESS) return;
  for (simdjson::dom::element e : list) {
    simdjson::dom::object a;
    std::string_view path;
    if (e.get_object().get(a) != simdjson::SUCCESS ||
        a["path"].get_string().get(path) != simdjson::SUCCESS)
      continue;
    Artifact art;
    art.path = std::string(path);
    art.kind = string_or_empty(a, "kind");
    art.fnv1a = string_or_empty(a, "fnv1a");
    if (a["bytes"].get_int64().get(art.bytes) != simdjson::SUCCESS) art.bytes = 0;
    out->push_back(std::move(art));
  }
}

}  // namespace

bool read_metrics(const std::string& path, MetricsFile* out, std::string* error) {
  // Through InputFile, as a trace is: a file or stdin ("-"), plain or gzip.
  tools::InputFile in;
  if (!in.open(path, error)) return false;
  tools::LineReader lines(in);
  simdjson::dom::parser parser;
  std::string line;
  std::uint64_t n = 0;
  auto fail = [&](const std::string& what) {
    *error = in.label() + ": line " + std::to_string(n) + ": " + what;
    return false;
  };
  std::string read_error;
  while (lines.next(&line, &read_error)) {
    ++n;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    ++out->lines;
    simdjson::dom::element doc;
    if (auto e = parser.parse(line).get(doc); e != simdjson::SUCCESS) {
      return fail(std::string("not valid JSON: ") + simdjson::error_message(e));
    }
    simdjson::dom::object obj;
    if (doc.get_object().get(obj) != simdjson::SUCCESS) return fail("not a JSON object");
    simdjson::dom::element id_el;
    if (obj["compile_id"].get(id_el) != simdjson::SUCCESS) return fail("no \"compile_id\"");
    std::string_view record;
    const bool has_kind = obj["record"].get_string().get(record) == simdjson::SUCCESS;
    const bool gpu = has_kind && record == "gpu";
    // A tuning session's record (docs/autotuning.md): no unit's, and not the
    // runtime's; the trace's autotune events are what the report sums.
    if (has_kind && record == "autotune") {
      ++out->autotune_records;
      continue;
    }
    if (id_el.is_null()) {
      if (gpu) return fail("a \"gpu\" record with a null compile_id");
      ++out->runtime_records;
      std::int64_t ns = 0;
      if (simdjson::dom::element d;
          obj["duration_us"].get(d) == simdjson::SUCCESS && us_to_ns(d, &ns)) {
        out->runtime_duration_ns = sat_add(out->runtime_duration_ns, ns);
      }
      continue;
    }
    std::string_view id;
    if (id_el.get_string().get(id) != simdjson::SUCCESS || id.empty()) {
      return fail("\"compile_id\" is not a non-empty string or null");
    }
    UnitMetrics& m = out->units[std::string(id)];
    if (gpu) {
      simdjson::dom::object g;
      if (obj["gpu"].get_object().get(g) != simdjson::SUCCESS)
        return fail("\"gpu\" is not an object");
      m.has_gpu = true;
      m.gpu.clear();
      for (auto [key, value] : g) {
        std::int64_t v = 0;
        if (value.get_int64().get(v) == simdjson::SUCCESS) m.gpu.emplace_back(std::string(key), v);
      }
      if (m.name.empty()) m.name = string_or_empty(obj, "name");
      if (m.unit_key.empty()) m.unit_key = string_or_empty(obj, "unit_key");
      if (m.frame.empty()) m.frame = string_or_empty(obj, "frame");
      continue;
    }
    m.has_record = true;
    m.name = string_or_empty(obj, "name");
    m.fail_type = string_or_empty(obj, "fail_type");
    m.fail_reason = string_or_empty(obj, "fail_reason");
    m.recompile_reason = string_or_empty(obj, "recompile_reason");
    m.unit_key = string_or_empty(obj, "unit_key");
    m.frame = string_or_empty(obj, "frame");
    m.columns_ns.clear();
    m.caches.clear();
    m.artifacts.clear();
    m.fields.clear();
    m.cache_hits = m.cache_misses = 0;
    for (auto [key, value] : obj) {
      // Fields the members above hold as they were are not kept twice.
      const bool held =
          (value.is_string() &&
           (key == "compile_id" || key == "name" || key == "fail_type" || key == "fail_reason" ||
            key == "recompile_reason" || key == "unit_key" || key == "frame")) ||
          key == "duration_us" || key == "artifacts";
      const std::size_t columns_before = m.columns_ns.size();
      if (key == "artifacts") {
        read_artifacts(value, &m.artifacts);
      } else if (key == "duration_us") {
        std::int64_t ns = 0;
        if (!us_to_ns(value, &ns))
          return fail("\"duration_us\" is not a number of µs that fits in int64 ns");
        m.duration_ns = ns;
      } else if (key.size() > 3 && key.substr(key.size() - 3) == "_us" && key != "start_time_us" &&
                 key != "end_time_us") {
        std::int64_t ns = 0;
        if (us_to_ns(value, &ns))
          m.columns_ns.emplace_back(std::string(key.substr(0, key.size() - 3)), ns);
      } else if (key == "caches") {
        simdjson::dom::object caches;
        if (value.get_object().get(caches) != simdjson::SUCCESS)
          return fail("\"caches\" is not an object");
        for (auto [cache, counts] : caches) {
          CacheRow row;
          row.cache = std::string(cache);
          if (counts["hits"].get_int64().get(row.hits) != simdjson::SUCCESS) row.hits = 0;
          if (counts["misses"].get_int64().get(row.misses) != simdjson::SUCCESS) row.misses = 0;
          m.cache_hits = sat_add(m.cache_hits, row.hits);
          m.cache_misses = sat_add(m.cache_misses, row.misses);
          m.caches.push_back(std::move(row));
        }
      }
      if (!held && m.columns_ns.size() == columns_before) {  // not a column now in columns_ns
        m.fields.push_back(RecordField{std::string(key), field_json(value), !jitscope_field(key)});
      }
    }
  }
  if (!read_error.empty()) {
    *error = in.label() + ": " + read_error;
    return false;
  }
  return true;
}

}  // namespace jitscope::report
