// Aggregator: CompileUnit::cache_lookup's instants into CacheLookups.
#include "aggregator.hpp"

#include <simdjson.h>

namespace jitscope::report {

void Aggregator::cache_lookup(const tools::DecodedEvent& ev, tools::EventDecoder& decoder) {
  std::string layer, parts_json, unit;
  std::string_view hit;
  if (!decoder.arg_string(ev, "layer", &layer) || !decoder.arg(ev, "hit", &hit) ||
      !decoder.arg_string(ev, "key_parts", &parts_json)) {
    return;  // another tool's instant of that name
  }
  if (!decoder.arg_string(ev, "unit", &unit) && ev.has_compile_id) unit = ev.compile_id;
  // key_parts: a JSON object of the parts, as text (an arg's value is a
  // scalar). Not one: a key cut short (past the ring's payload limit).
  thread_local simdjson::dom::parser parser;
  simdjson::dom::object object;
  std::vector<CacheKeyPart> key;
  if (parser.parse(parts_json).get_object().get(object) != simdjson::SUCCESS) {
    caches_.add(layer, {}, hit == "true", unit, ev.ts_ns, false);
    return;
  }
  for (const auto field : object) {
    CacheKeyPart p;
    p.name = std::string(field.key);
    std::string_view text;
    if (field.value.get_string().get(text) == simdjson::SUCCESS) {
      p.value = std::string(text);
    } else {
      p.value = simdjson::to_string(field.value);  // another type: as written
    }
    key.push_back(std::move(p));
  }
  caches_.add(layer, std::move(key), hit == "true", unit, ev.ts_ns);
}

}  // namespace jitscope::report
