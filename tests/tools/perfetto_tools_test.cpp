// perfetto_tools_test: jitscope-report and jitscope-merge (run as
// subprocesses) on Perfetto's protobuf form: the report of a .pftrace is the
// report of the same events written as JSON (table and --format json), gzip'd
// or not; merging two .pftrace inputs with the same pid, tid and flow ids
// keeps their processes and arrows apart; a JSON and a protobuf input merge.
// Not covered here: the reader's mapping event by event
// (perfetto_reader_test.cpp); traces the SDK writes as .pftrace (an end to
// end test once the writer lands).
#include "perfetto_trace_builder.hpp"
#include "report_support.hpp"
#include "trace_support.hpp"

#include <trace_reader.hpp>

#if JITSCOPE_TEST_HAVE_ZLIB
#include "gzip_support.hpp"
#endif

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

namespace {

using namespace jitscope::testing::pfenc;
namespace rep = jitscope::testing::report;
using nlohmann::json;
namespace ev = pf::event;

std::string write_file(const std::string& stem, const std::string& bytes) {
  const std::string path = jitscope::testing::temp_path(stem);
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

// The JSON writer's file for `events`.
std::string json_trace(const std::vector<std::string>& events) {
  std::string out = "[\n";
  for (std::size_t i = 0; i < events.size(); ++i) out += (i == 0 ? "" : ",\n") + events[i];
  return out + "\n]\n";
}

// every_kind() and a compile unit with a phase in it, as the report sees them.
std::vector<Step> report_trace() {
  std::vector<Step> s = every_kind();
  auto unit_arg = [] { return arg_string("compile_id", "0/0"); };
  s.push_back({event_at(2, 10,
                        typed(ev::kSliceBegin)
                            .bytes(ev::kName, "model")
                            .bytes(ev::kCategories, "compile_unit")
                            .msg(ev::kDebugAnnotations, unit_arg())),
               {}});
  s.push_back({event_at(2, 20,
                        typed(ev::kSliceBegin)
                            .bytes(ev::kName, "lower")
                            .bytes(ev::kCategories, "phase")
                            .msg(ev::kDebugAnnotations, unit_arg())),
               {}});
  s.push_back(
      {event_at(2, 3000, typed(ev::kSliceEnd)),
       {R"({"ph":"X","cat":"phase","name":"lower","ts":2001.170,"dur":3.000,"pid":42,"tid":7,"args":{"compile_id":"0/0"}})"}});
  s.push_back(
      {event_at(2, 40, typed(ev::kSliceEnd)),
       {R"({"ph":"X","cat":"compile_unit","name":"model","ts":2001.150,"dur":3.060,"pid":42,"tid":7,"args":{"compile_id":"0/0"}})"}});
  return s;
}

// The report's output with the input's name and size taken out.
std::string without_input(std::string text, const std::string& path) {
  for (std::size_t at; (at = text.find(path)) != std::string::npos;)
    text.replace(at, path.size(), "TRACE");
  text = std::regex_replace(text, std::regex("\"bytes\":[0-9]+,"), "");  // --format json
  std::string out;
  for (const std::string& line : jitscope::testing::lines_of(text)) {
    if (line.find("bytes") != std::string::npos && line.find("warning") == std::string::npos)
      continue;
    out += line + "\n";
  }
  return out;
}

TEST(PerfettoTools, ReportOfAPftraceIsTheReportOfItsJsonForm) {
  const auto steps = report_trace();
  const std::string json_path = write_file("pf_json", json_trace(events_of(steps, steps.size())));
  std::vector<std::string> inputs{write_file("pf_proto", trace_of(steps))};
#if JITSCOPE_TEST_HAVE_ZLIB
  inputs.push_back(write_file("pf_proto_gz", jitscope::testing::gzip_member(trace_of(steps))));
#endif
  for (const char* format : {"table", "json", "csv"}) {
    SCOPED_TRACE(format);
    const rep::Result want = rep::report({json_path, "--format", format});
    ASSERT_EQ(want.code, 0) << want.err;
    ASSERT_NE(want.out.find("model"), std::string::npos);
    for (const std::string& pf_path : inputs) {
      const rep::Result got = rep::report({pf_path, "--format", format});
      ASSERT_EQ(got.code, 0) << got.err;
      EXPECT_EQ(got.err, want.err);
      EXPECT_EQ(without_input(got.out, pf_path), without_input(want.out, json_path));
    }
  }
  // The JSON format's header, field by field: all but input and bytes.
  json want = rep::report_json({json_path});
  json got = rep::report_json({inputs[0]});
  for (json* j : {&want, &got}) {
    (*j)["header"].erase("input");
    (*j)["header"].erase("bytes");
  }
  EXPECT_EQ(got, want);
  EXPECT_EQ(got["header"]["events"], events_of(steps, steps.size()).size());
}

TEST(PerfettoTools, ReportSaysWhatACutPftraceLost) {
  const auto steps = report_trace();
  std::string bytes = trace_of(steps);
  bytes.resize(bytes.size() - 3);  // inside the last packet: the unit's END
  const std::string path = write_file("pf_cut", bytes);
  const json r = rep::report_json({path});
  const json& warnings = r["header"]["warnings"];
  ASSERT_EQ(warnings.size(), 2u) << warnings.dump();
  EXPECT_NE(warnings[0].get<std::string>().find("1 packet cut off by the end of the input"),
            std::string::npos);
  EXPECT_EQ(warnings[1], "1 slice begun and never ended (dropped)");
}

// A jitscope process with a launch (flow 77) and its kernel, the session
// metadata merge needs to place it.
std::string merge_input(const std::string& host) {
  std::vector<Msg> p{process_head(), descriptor(process_track(1, 42, "app")),
                     descriptor(thread_track(2, 1, 42, 7, "main")),
                     descriptor(process_track(10, 10000042, "GPU 0")),
                     descriptor(thread_track(11, 10, 10000042, 13, "stream 13"))};
  p.push_back(event_at(
      1, 1'000'000,
      typed(ev::kInstant)
          .varint(ev::kTrackUuid, 1)
          .bytes(ev::kCategories, pf::kMetadataCategory)
          .bytes(ev::kName, "jitscope_session")
          .msg(ev::kDebugAnnotations, arg_string("host", host))
          .msg(ev::kDebugAnnotations, arg_string("boot_id", "boot-1"))
          .msg(ev::kDebugAnnotations, arg_int("session_start_unix_ns", 1'700'000'000'000'000'000))
          .msg(ev::kDebugAnnotations, arg_int("session_start_monotonic_ns", 1'000'000))));
  p.push_back(event_at(1, 2'000'000,
                       typed(ev::kSliceBegin)
                           .varint(ev::kTrackUuid, 2)
                           .bytes(ev::kName, "cuLaunchKernel")
                           .bytes(ev::kCategories, "cuda_api")
                           .fixed64(ev::kFlowIds, 77)));
  p.push_back(event_at(1, 2'000'500, typed(ev::kSliceEnd).varint(ev::kTrackUuid, 2)));
  p.push_back(event_at(1, 2'001'000,
                       typed(ev::kSliceBegin)
                           .varint(ev::kTrackUuid, 11)
                           .bytes(ev::kName, "kernel")
                           .bytes(ev::kCategories, "gpu")
                           .fixed64(ev::kTerminatingFlowIds, 77)));
  p.push_back(event_at(1, 2'003'000, typed(ev::kSliceEnd).varint(ev::kTrackUuid, 11)));
  return trace(p);
}

// pid -> process name, and flow id -> the pids of its "s" and "f".
struct Merged {
  std::map<long long, std::string> names;
  std::map<long long, std::pair<long long, long long>> flows;
};

Merged merged(const std::string& path) {
  Merged m;
  for (const json& e : jitscope::testing::load_trace(path)) {
    const std::string ph = e.value("ph", "");
    if (ph == "M" && e.value("name", "") == "process_name") {
      m.names[e["pid"].get<long long>()] = e["args"]["name"].get<std::string>();
    } else if (ph == "s") {
      m.flows[e["id"].get<long long>()].first = e["pid"].get<long long>();
    } else if (ph == "f") {
      m.flows[e["id"].get<long long>()].second = e["pid"].get<long long>();
    }
  }
  return m;
}

TEST(PerfettoTools, MergeKeepsTwoPftracesWithTheSamePidsAndFlowIdsApart) {
  const std::string a = write_file("pf_merge_a", merge_input("host-a"));
  const std::string b = write_file("pf_merge_b", merge_input("host-b"));
  const std::string out = jitscope::testing::temp_path("pf_merged");
  const rep::Result r = rep::run({JITSCOPE_MERGE, "-q", "-o", out, a, b});
  ASSERT_EQ(r.code, 0) << r.err;
  const Merged m = merged(out);
  // Two hosts and two GPU processes, each pair with its own pids.
  ASSERT_EQ(m.names.size(), 4u);
  std::set<std::string> labels;
  for (const auto& [pid, name] : m.names) labels.insert(name);
  EXPECT_EQ(labels.size(), 4u);
  // Two arrows with distinct ids, each from its own host to its own GPU.
  ASSERT_EQ(m.flows.size(), 2u);
  std::set<long long> hosts, gpus;
  for (const auto& [id, ends] : m.flows) {
    hosts.insert(ends.first);
    gpus.insert(ends.second);
    EXPECT_EQ(ends.second % 10000000, ends.first % 10000000) << "flow " << id;
  }
  EXPECT_EQ(hosts.size(), 2u);
  EXPECT_EQ(gpus.size(), 2u);

  // A JSON input beside a protobuf one: the JSON form of the same trace.
  std::string json_events;
  {
    jitscope::tools::TraceReader reader;
    std::vector<std::string> events;
    const auto keep = [&](const jitscope::tools::RawEvent& e) {
      events.emplace_back(e.json);
      return true;
    };
    ASSERT_TRUE(reader.read(a, keep, nullptr, nullptr));
    json_events = json_trace(events);
  }
  const std::string j = write_file("pf_merge_json", json_events);
  const std::string out2 = jitscope::testing::temp_path("pf_merged2");
  const rep::Result r2 = rep::run({JITSCOPE_MERGE, "-q", "-o", out2, j, b});
  ASSERT_EQ(r2.code, 0) << r2.err;
  const Merged m2 = merged(out2);
  EXPECT_EQ(m2.names.size(), 4u);
  EXPECT_EQ(m2.flows.size(), 2u);
}

}  // namespace
