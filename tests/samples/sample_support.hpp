// Test helpers shared by the samples' end-to-end tests (nvrtc_jit_test,
// mlir_gpu_test): run a sample as a subprocess with its files in a fresh
// folder, and read back its trace and metrics with nlohmann::json.
#pragma once

#include "subprocess.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace sample_support {

namespace fs = std::filesystem;
using nlohmann::json;

inline std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The non-empty lines of `text`.
inline std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) out.push_back(line);
  }
  return out;
}

inline int count_lines_with(const std::string& text, const std::string& needle) {
  int n = 0;
  for (const std::string& line : lines_of(text)) n += line.find(needle) != std::string::npos;
  return n;
}

// A fresh folder `<prefix><name>` for one test, under the build tree.
inline fs::path test_dir(const std::string& prefix, const std::string& name) {
  const char* root = std::getenv("TEST_TMPDIR_FOR_JITSCOPE");
  const fs::path dir =
      fs::path(root != nullptr ? root : fs::temp_directory_path().string()) / (prefix + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

struct SampleRun {
  int exit_code = -1;  // -1: killed or not started
  std::string out, err;
  fs::path trace, metrics;  // a sample's --trace and --metrics
  // For failure messages.
  std::string describe() const {
    return "exit " + std::to_string(exit_code) + "\n--- stdout ---\n" + out + "--- stderr ---\n" +
           err;
  }
};

// A program started in `dir`, its output in `dir/<tag>.*`; finish() waits.
struct Started {
  SampleRun run;
  jitscope::testing::Subprocess process;
  pid_t pid = -1;
};

// Extra environment variables for a program: only these of JITSCOPE_*.
using Env = std::vector<std::pair<std::string, std::string>>;

inline Started start_program(const fs::path& dir, const std::string& tag,
                             const std::vector<std::string>& argv, const Env& env = {}) {
  Started s;
  jitscope::testing::SpawnOptions options;
  // No JITSCOPE_* variable of ours leaks in: a test gives its own in `env`.
  options.drop_env_prefixes = {"JITSCOPE_"};
  options.env = env;
  options.cwd = dir.string();  // the default cache dir lands here
  s.process = jitscope::testing::spawn(argv, (dir / tag).string(), options);
  s.pid = s.process.pid;
  if (s.pid <= 0) s.run.err = s.process.spawn_error;
  return s;
}

inline SampleRun finish(Started& s) {
  if (s.pid <= 0) return s.run;
  s.process.wait();
  s.run.exit_code = s.process.exit_code;
  s.run.out = s.process.out();
  s.run.err = s.process.err();
  return s.run;
}

inline SampleRun run_program(const fs::path& dir, const std::string& tag,
                             const std::vector<std::string>& argv) {
  Started s = start_program(dir, tag, argv);
  return finish(s);
}

// The sample `binary` with --trace dir/<tag>.trace.json, --metrics
// dir/<tag>.metrics.jsonl and `args`.
inline Started start_sample(const std::string& binary, const fs::path& dir, const std::string& tag,
                            const std::vector<std::string>& args, const Env& env = {}) {
  const fs::path trace = dir / (tag + ".trace.json"), metrics = dir / (tag + ".metrics.jsonl");
  std::vector<std::string> argv = {binary, "--trace", trace.string(), "--metrics",
                                   metrics.string()};
  argv.insert(argv.end(), args.begin(), args.end());
  Started s = start_program(dir, tag, argv, env);
  s.run.trace = trace;
  s.run.metrics = metrics;
  return s;
}

// Bad command lines, each with what its message must name.
using BadOptions = std::vector<std::pair<std::vector<std::string>, std::string>>;

// Each of `cases` run by `run(argv)`: exit 2, a message naming its mention,
// no session.
template <class Run>
void expect_each_rejected(const BadOptions& cases, Run run) {
  for (const auto& [argv, mention] : cases) {
    const SampleRun r = run(argv);
    SCOPED_TRACE(argv[0] + (argv.size() > 1 ? " " + argv[1] : ""));
    EXPECT_EQ(r.exit_code, 2) << r.describe();
    EXPECT_NE(r.err.find(mention), std::string::npos) << r.describe();
    EXPECT_FALSE(fs::exists(r.trace)) << "no session for a bad command line";
  }
}

// JSTEST_GPU_REQUIRE=1 (CI on a GPU machine): a GPU test that would skip
// fails instead. Not JITSCOPE_*: the SDK warns about names it does not know.
inline bool require_gpu() {
  const char* v = std::getenv("JSTEST_GPU_REQUIRE");
  return v != nullptr && v[0] != '\0' && std::strcmp(v, "0") != 0;
}

inline json load_trace(const fs::path& path) {
  json t = json::parse(read_text(path));  // throws on a bad file: the test fails
  if (!t.is_array()) throw std::runtime_error(path.string() + " is not a JSON array");
  return t;
}

// Each line of a JSON-lines file (the metrics file), parsed.
inline std::vector<json> read_json_lines(const fs::path& path) {
  std::vector<json> out;
  for (const std::string& line : lines_of(read_text(path))) out.push_back(json::parse(line));
  return out;
}

inline std::string str(const json& o, const char* key) {
  const auto it = o.find(key);
  return it != o.end() && it->is_string() ? it->get<std::string>() : std::string();
}

inline const json& args(const json& e) {
  static const json kEmpty = json::object();
  const auto it = e.find("args");
  return it != e.end() && it->is_object() ? *it : kEmpty;
}

inline bool is_slice(const json& e, const std::string& cat, const std::string& name = {}) {
  return str(e, "ph") == "X" && str(e, "cat") == cat && (name.empty() || str(e, "name") == name);
}

inline std::vector<const json*> slices(const json& trace, const std::string& cat,
                                       const std::string& name = {}) {
  std::vector<const json*> out;
  for (const json& e : trace) {
    if (is_slice(e, cat, name)) out.push_back(&e);
  }
  return out;
}

// The trace's jitscope_session cupti.state ("on", "off", ...; "" if none).
inline std::string cupti_state(const json& trace, const char* field = "state") {
  for (const json& e : trace) {
    if (str(e, "ph") == "M" && str(e, "name") == "jitscope_session") {
      return str(args(e).value("cupti", json::object()), field);
    }
  }
  return {};
}

// A metrics line's caches.disk_cache hits and misses; null without them.
inline const json* disk_cache_counts(const json& line) {
  const auto caches = line.find("caches");
  if (caches == line.end() || !caches->is_object()) return nullptr;
  const auto disk = caches->find("disk_cache");
  return disk == caches->end() ? nullptr : &*disk;
}

// The unit slice of each kernel (args.kernel), failing on duplicates.
// The lookups of cache layer `layer` in a trace (CompileUnit::cache_lookup's
// instants), in trace order: each key's parts, and whether it hit.
struct CacheLookup {
  json parts;
  bool hit = false;
};
inline std::vector<CacheLookup> cache_lookups(const json& trace, const std::string& layer) {
  std::vector<CacheLookup> out;
  for (const json& e : trace) {
    if ((str(e, "ph") != "I" && str(e, "ph") != "i") || str(e, "name") != "cache_lookup") continue;
    if (str(args(e), "layer") != layer) continue;
    out.push_back({json::parse(str(args(e), "key_parts")), args(e).value("hit", false)});
  }
  return out;
}

inline std::map<std::string, const json*> units_by_kernel(const json& trace) {
  std::map<std::string, const json*> out;
  for (const json* u : slices(trace, "compile_unit")) {
    const std::string kernel = str(args(*u), "kernel");
    EXPECT_FALSE(kernel.empty()) << "a compile unit slice without args.kernel: " << u->dump();
    EXPECT_TRUE(out.emplace(kernel, u).second) << "two unit slices for " << kernel;
  }
  return out;
}

}  // namespace sample_support
