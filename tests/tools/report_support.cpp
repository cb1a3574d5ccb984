#include "report_support.hpp"

#include "flush/perfetto_wire.hpp"

#include "subprocess.hpp"
#include "trace_support.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>

namespace jitscope::testing::report {

// ---- running a program ----

// Runs argv[0] with stdout/stderr captured and stdin from `in`; kills it
// after `timeout` (a hang is a failure, never a stuck test).
Result run(const std::vector<std::string>& args, const std::string& in,
           std::chrono::seconds timeout) {
  Result r;
  jitscope::testing::SpawnOptions options;
  options.stdin_path = in;
  jitscope::testing::Subprocess p =
      jitscope::testing::spawn(args, temp_path("report_run"), options);
  if (p.pid <= 0) {
    ADD_FAILURE() << p.spawn_error;
    return r;
  }
  p.wait(timeout);
  r.timed_out = p.timed_out;
  r.signaled = p.signal != 0;
  r.signal = p.signal;
  r.code = p.exit_code;
  r.out = p.out();
  r.err = p.err();
  p.remove_outputs();
  return r;
}

Result report(std::vector<std::string> args, const std::string& in) {
  args.insert(args.begin(), JITSCOPE_REPORT);
  return run(args, in);
}

// Runs the report with --format json; the parsed output.
json report_json(std::vector<std::string> args) {
  args.push_back("--format");
  args.push_back("json");
  const Result r = report(args);
  EXPECT_FALSE(r.signaled) << "signal " << r.signal;
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  try {
    return json::parse(r.out);
  } catch (const std::exception& e) {
    ADD_FAILURE() << "report output is not JSON: " << e.what() << "\n" << r.out.substr(0, 500);
    return json::object();
  }
}

std::string write_temp(const std::string& stem, const std::string& content) {
  const std::string path = temp_path(stem);
  std::ofstream(path, std::ios::binary) << content;
  return path;
}

// ---- the independent totals ----

// Time in ns from a ts/dur number: three decimals at most in these traces,
// and small enough that the double is exact to well under 1 ns.
long long ns_of(const json& v) {
  if (v.is_string()) return std::llround(std::stod(v.get<std::string>()) * 1000.0);
  return std::llround(v.get<double>() * 1000.0);
}

std::map<std::string, json> rows(const json& rep, const char* section) {
  std::map<std::string, json> out;
  for (const json& r : rep[section]) out[r["name"].get<std::string>()] = r;
  return out;
}

namespace {

std::string thread_key(const json& e) {
  return e.value("pid", json()).dump() + "/" + e.value("tid", json()).dump();
}

}  // namespace

Totals compute(const json& events) {
  Totals t;
  std::map<std::string, std::vector<Totals::Span>> by_thread;
  std::map<std::string, std::vector<std::pair<json, std::size_t>>> open_b;  // B, its position
  std::map<std::string, bool> x_end_ordered;  // a thread's X slices came in end order
  std::map<std::string, long long> last_x_end;
  std::size_t seq = 0;
  auto add_span = [&](const json& e, const std::string& name, const std::string& cat,
                      long long start, long long dur, const json& args, std::size_t order,
                      bool from_x) {
    ++t.spans;
    const std::string cid =
        args.is_object() && args.contains("compile_id") && args["compile_id"].is_string()
            ? args["compile_id"].get<std::string>()
            : "";
    const bool unit_slice = cat == "compile_unit" && !cid.empty();
    const bool gpu_work = args.is_object() && args.contains("device") && args.contains("stream");
    // A CUDA call CUPTI recorded on a host thread: a row beside the GPU
    // work's, in no host table and in no one's self time.
    const bool call = from_x && !gpu_work &&
                      ((cat == "cuda" && args.is_object() && args.contains("correlation") &&
                        args["correlation"].is_number_integer()) ||
                       cat == "cupti");
    const bool gpu = gpu_work || call;
    const std::string tk = thread_key(e);
    const std::size_t s = seq++;
    if (unit_slice) {
      Totals::Unit& u = t.units[cid];
      if (u.slices == 0) {
        u.start = start;
        u.end = start + dur;
      }
      ++u.slices;
      u.start = std::min(u.start, start);
      u.end = std::max(u.end, start + dur);
      u.threads.insert(tk);
      if (!args.value("attached", false) && dur > u.wall) {
        u.wall = dur;
        u.own_end = start + dur;
      }
    } else {
      Totals::Name& n = (gpu ? t.gpu_names : t.names)[name];
      if (n.count == 0) n.min = n.max = dur;
      ++n.count;
      n.total += dur;
      n.min = std::min(n.min, dur);
      n.max = std::max(n.max, dur);
      if (!cid.empty() && !gpu) {
        Totals::Unit& u = t.units[cid];
        ++u.phases[name].count;
        u.phases[name].total += dur;
        u.threads.insert(tk);
      }
    }
    if (!gpu) t.top.emplace_back(-dur, start, s, name, cid);
    if (call) return;
    by_thread[tk].push_back({start, start + dur, order, from_x, unit_slice ? "" : name,
                             (unit_slice || gpu) ? "" : cid, gpu});
  };
  for (std::size_t i = 0; i < events.size(); ++i) {
    const json& e = events[i];
    ++t.events;
    const std::string ph = e.value("ph", "");
    if (ph == "X" && e.contains("ts")) {
      const long long start = ns_of(e["ts"]), dur = e.contains("dur") ? ns_of(e["dur"]) : 0;
      const std::string tk = thread_key(e);
      if (!x_end_ordered.count(tk)) x_end_ordered[tk] = true;
      if (last_x_end.count(tk) && start + dur < last_x_end[tk]) x_end_ordered[tk] = false;
      last_x_end[tk] = start + dur;
      add_span(e, e.value("name", ""), e.value("cat", ""), start, dur, e.value("args", json()), i,
               true);
    } else if (ph == "B") {
      open_b[thread_key(e)].emplace_back(e, i);
    } else if (ph == "E") {
      auto& stack = open_b[thread_key(e)];
      if (stack.empty()) continue;
      const auto [b, order] = stack.back();
      stack.pop_back();
      json args = b.value("args", json());
      if (!(args.is_object() && args.contains("compile_id"))) args = e.value("args", json());
      add_span(b, b.value("name", ""), b.value("cat", ""), ns_of(b["ts"]),
               ns_of(e["ts"]) - ns_of(b["ts"]), args, order, false);
    }
  }
  // Self times: each thread's spans in start order (parent first on equal
  // starts; identical intervals by writing order: a B/E pair at its B), as a
  // stack. Of two identical X slices on a thread whose X slices came in end
  // order, the later-written is the parent: it gets no self time.
  for (auto& [tk, spans] : by_thread) {
    std::sort(spans.begin(), spans.end(), [](const Totals::Span& a, const Totals::Span& b) {
      return std::tie(a.start, b.end, a.order) < std::tie(b.start, a.end, b.order);
    });
    const bool end_ordered = x_end_ordered.count(tk) && x_end_ordered[tk];
    struct Open {
      const Totals::Span* s;
      long long children;
    };
    std::vector<Open> stack;
    auto close = [&] {
      const Open o = stack.back();
      stack.pop_back();
      const long long self = std::max(0LL, (o.s->end - o.s->start) - o.children);
      if (o.s->name.empty()) return;
      (o.s->gpu ? t.gpu_names : t.names)[o.s->name].self += self;
      if (!o.s->phase_unit.empty()) t.units[o.s->phase_unit].phases[o.s->name].self += self;
    };
    for (const Totals::Span& s : spans) {
      bool outer_twin = false;
      while (!stack.empty()) {
        const Totals::Span& top = *stack.back().s;
        if (top.end <= s.start) {
          close();
        } else if (s.end <= top.end) {
          outer_twin =
              end_ordered && s.from_x && top.from_x && s.start == top.start && s.end == top.end;
          if (!outer_twin) stack.back().children += s.end - s.start;
          break;
        } else {
          close();
        }
      }
      if (!outer_twin) stack.push_back({&s, 0});
    }
    while (!stack.empty()) close();
  }
  std::sort(t.top.begin(), t.top.end());
  return t;
}

// The report's JSON against the totals, exactly.
void expect_matches(const json& rep, const Totals& t, std::size_t top_n) {
  ASSERT_TRUE(rep.contains("compile_times")) << rep.dump().substr(0, 300);
  EXPECT_EQ(rep["header"]["events"].get<unsigned long long>(), t.events);
  EXPECT_EQ(rep["header"]["spans"].get<unsigned long long>(), t.spans);

  // compile_times: every name, in total-descending order, exact ns.
  ASSERT_EQ(rep["compile_times"].size(), t.names.size());
  long long prev_total = std::numeric_limits<long long>::max();
  for (const json& row : rep["compile_times"]) {
    const std::string name = row["name"];
    ASSERT_TRUE(t.names.count(name)) << name;
    const Totals::Name& n = t.names.at(name);
    EXPECT_EQ(row["count"].get<unsigned long long>(), n.count) << name;
    EXPECT_EQ(row["total_ns"].get<long long>(), n.total) << name;
    EXPECT_EQ(row["min_ns"].get<long long>(), n.min) << name;
    EXPECT_EQ(row["max_ns"].get<long long>(), n.max) << name;
    EXPECT_EQ(row["mean_ns"].get<long long>(), n.total / static_cast<long long>(n.count)) << name;
    EXPECT_LE(row["total_ns"].get<long long>(), prev_total);
    prev_total = row["total_ns"].get<long long>();
  }
  // GPU work: its own rows (gpu.names), by name, exact ns.
  if (rep.contains("gpu")) {
    ASSERT_EQ(rep["gpu"]["names"].size(), t.gpu_names.size());
    for (const json& row : rep["gpu"]["names"]) {
      const Totals::Name& n = t.gpu_names.at(row["name"].get<std::string>());
      EXPECT_EQ(row["count"].get<unsigned long long>(), n.count) << row["name"];
      EXPECT_EQ(row["total_ns"].get<long long>(), n.total) << row["name"];
    }
  }
  ASSERT_EQ(rep["phases"].size(), t.names.size());
  for (const json& row : rep["phases"]) {
    const Totals::Name& n = t.names.at(row["name"].get<std::string>());
    EXPECT_EQ(row["count"].get<unsigned long long>(), n.count) << row["name"];
    EXPECT_EQ(row["total_ns"].get<long long>(), n.total) << row["name"];
    EXPECT_EQ(row["self_ns"].get<long long>(), n.self) << row["name"];
  }

  // units: wall time, slices, threads, and per phase count/total/self.
  std::map<std::string, const json*> units;
  for (const json& u : rep["units"]) units[u["compile_id"].get<std::string>()] = &u;
  ASSERT_EQ(units.size(), t.units.size());
  for (const auto& [id, u] : t.units) {
    ASSERT_TRUE(units.count(id)) << id;
    const json& ru = *units.at(id);
    if (u.slices > 0) {
      EXPECT_TRUE(ru["in_trace"].get<bool>()) << id;
      EXPECT_EQ(ru["wall_ns"].get<long long>(), u.wall >= 0 ? u.wall : u.end - u.start) << id;
      EXPECT_EQ(ru["start_ns"].get<long long>(), u.start) << id;
      EXPECT_EQ(ru["end_ns"].get<long long>(), u.end) << id;
    } else {
      EXPECT_FALSE(ru["in_trace"].get<bool>()) << id;
      EXPECT_TRUE(ru["wall_ns"].is_null()) << id;
    }
    EXPECT_EQ(ru["slices"].get<unsigned long long>(), u.slices) << id;
    EXPECT_EQ(ru["threads"].get<unsigned long long>(), u.threads.size()) << id;
    ASSERT_EQ(ru["phases"].size(), u.phases.size()) << id;
    for (const json& p : ru["phases"]) {
      const std::string name = p["name"];
      ASSERT_TRUE(u.phases.count(name)) << id << " " << name;
      EXPECT_EQ(p["count"].get<unsigned long long>(), u.phases.at(name).count) << id << " " << name;
      EXPECT_EQ(p["total_ns"].get<long long>(), u.phases.at(name).total) << id << " " << name;
      EXPECT_EQ(p["self_ns"].get<long long>(), u.phases.at(name).self) << id << " " << name;
    }
  }

  // the slowest spans, slowest first
  const std::size_t n = std::min(top_n, t.top.size());
  ASSERT_EQ(rep["top_spans"].size(), n);
  for (std::size_t i = 0; i < n; ++i) {
    const auto& [neg_dur, ts, seq, name, cid] = t.top[i];
    const json& row = rep["top_spans"][i];
    EXPECT_EQ(row["dur_ns"].get<long long>(), -neg_dur) << i;
    EXPECT_EQ(row["ts_ns"].get<long long>(), ts) << i;
    if (!name.empty()) {
      EXPECT_EQ(row["name"].get<std::string>(), name) << i;
    }
    EXPECT_EQ(row["compile_id"].is_null() ? std::string() : row["compile_id"].get<std::string>(),
              cid)
        << i;
  }
}

json load_events(const std::string& path) {
  if (path.size() > 8 && path.compare(path.size() - 8, 8, ".pftrace") == 0) {
    // The Perfetto form through the test's own decoder, as the JSON form's events.
    jitscope::testing::pfwire::Reader reader;
    reader.read(jitscope::testing::read_file(path));
    for (const std::string& e : reader.errors) ADD_FAILURE() << path << ": " << e;
    json events = reader.json_form();
    // The process's name, as the tools' decoder gives it (the test decoder
    // keeps it on its track).
    for (const auto& [uuid, t] : reader.tracks) {
      if (!t.thread && !t.counter && t.parent == 0 && !t.name.empty()) {
        events.push_back(
            {{"ph", "M"}, {"name", "process_name"}, {"pid", t.pid}, {"args", {{"name", t.name}}}});
      }
    }
    return events;
  }
  json t = jitscope::testing::load_trace(path, /*allow_cut=*/true);
  return t.is_object() ? t["traceEvents"] : t;
}

// ns as a ts/dur token in µs, exact.
std::string us(long long ns) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%lld.%03lld", ns / 1000, ns % 1000);
  return buf;
}

std::string x_event(const char* name, long long start, long long dur, int tid) {
  return std::string(R"({"ph":"X","name":")") + name + R"(","pid":1,"tid":)" + std::to_string(tid) +
         R"(,"ts":)" + us(start) + R"(,"dur":)" + us(dur) + "}";
}

std::string unit_event(const std::string& cid, const std::string& name, long long start,
                       long long dur, int tid, const std::string& args) {
  return R"({"ph":"X","cat":"compile_unit","name":"[)" + cid + "] " + name + R"(","pid":1,"tid":)" +
         std::to_string(tid) + R"(,"ts":)" + us(start) + R"(,"dur":)" + us(dur) +
         R"(,"args":{"compile_id":")" + cid + "\"" + (args.empty() ? "" : "," + args) + "}}";
}

std::string in_pid(std::string event, int pid) {
  const std::string from = R"("pid":1,)";
  return event.replace(event.find(from), from.size(), "\"pid\":" + std::to_string(pid) + ",");
}

std::string unit_span(const std::string& cid, const std::string& name, long long start,
                      long long dur, int tid, const std::string& args) {
  return R"({"ph":"X","name":")" + name + R"(","pid":1,"tid":)" + std::to_string(tid) +
         R"(,"ts":)" + us(start) + R"(,"dur":)" + us(dur) + R"(,"args":{"compile_id":")" + cid +
         "\"" + (args.empty() ? "" : "," + args) + "}}";
}

std::string trace_of(const std::vector<std::string>& events, const std::string& stem) {
  std::string t = "[";
  for (std::size_t i = 0; i < events.size(); ++i) t += (i ? ",\n" : "") + events[i];
  return write_temp(stem, t + "]\n");
}

void expect_error(const Result& r, int code, const std::string& fragment, const std::string& what) {
  EXPECT_FALSE(r.signaled) << what << ": killed by signal " << r.signal;
  EXPECT_FALSE(r.timed_out) << what;
  EXPECT_EQ(r.code, code) << what << ": " << r.err;
  EXPECT_EQ(r.err.rfind("jitscope-report: error: ", 0), 0u) << what << ": " << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << what << ": " << r.err;
  EXPECT_NE(r.err.find(fragment), std::string::npos) << what << ": " << r.err;
  EXPECT_EQ(r.out, "") << what;
}

}  // namespace jitscope::testing::report
