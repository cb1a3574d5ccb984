// Test helpers: unique temp paths, strict trace loading with nlohmann::json,
// and per-thread views of the events.
#pragma once

#include <jitscope/jitscope.hpp>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace jitscope::testing {

// A fresh path: a file left there by an earlier run whose process had the
// same pid is removed first (the SDK would take it for this process's trace
// from before an exec, keep it and write beside it: the test would then
// read the old file).
inline std::string temp_path(const std::string& stem) {
  static std::atomic<int> counter{0};
  // The start time too: a pid comes back in later runs, and the files the
  // SDK derives from a path (numbered snapshots, rotations, workers' traces)
  // would meet an earlier run's, which this unlink does not remove.
  static const std::string run = std::to_string(
      std::chrono::system_clock::now().time_since_epoch().count() % 1'000'000'000'000);
  const char* dir = std::getenv("TEST_TMPDIR_FOR_JITSCOPE");
  std::string base = dir != nullptr ? dir : "/tmp";
  std::string path = base + "/" + stem + "." + std::to_string(::getpid()) + "." + run + "." +
                     std::to_string(counter.fetch_add(1)) + ".json";
  ::unlink(path.c_str());
  return path;
}

// A fresh, empty folder of its own (a file replaced in it is seen for what
// it is).
inline std::string temp_dir(const std::string& stem) {
  const std::string dir = temp_path(stem) + ".d";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The lines of `text`, without their '\n' (no empty last one).
inline std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::size_t at = 0;
  while (at < text.size()) {
    const std::size_t nl = text.find('\n', at);
    lines.push_back(text.substr(at, nl == std::string::npos ? std::string::npos : nl - at));
    at = nl == std::string::npos ? text.size() : nl + 1;
  }
  return lines;
}

// Each line of a JSON-lines file (a metrics file), parsed. A line that is
// not JSON (an empty one too) throws: the test fails.
inline std::vector<nlohmann::json> read_json_lines(const std::string& path) {
  std::vector<nlohmann::json> out;
  for (const std::string& line : lines_of(read_file(path)))
    out.push_back(nlohmann::json::parse(line));
  return out;
}

// `text`'s lines that start with `prefix` ("jitscope:"), and how many.
inline std::vector<std::string> lines_starting(const std::string& text, const std::string& prefix) {
  std::vector<std::string> out;
  for (const std::string& line : lines_of(text)) {
    if (line.rfind(prefix, 0) == 0) out.push_back(line);
  }
  return out;
}
inline int count_lines_starting(const std::string& text, const std::string& prefix) {
  return static_cast<int>(lines_starting(text, prefix).size());
}

// Parses a trace strictly. A cut-off file may lack the closing "]"; with
// `allow_cut` that (and only that) is repaired first.
inline nlohmann::json load_trace(const std::string& path, bool allow_cut = false) {
  std::string text = read_file(path);
  if (allow_cut) {
    while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
    if (!text.empty() && text.back() != ']') text += "]";
  }
  return nlohmann::json::parse(text);  // throws on anything malformed
}

inline std::vector<nlohmann::json> events_with_ph(const nlohmann::json& trace,
                                                  const std::string& ph) {
  std::vector<nlohmann::json> out;
  for (const auto& e : trace) {
    if (e.value("ph", "") == ph) out.push_back(e);
  }
  return out;
}

// The trace's complete slices ("X") named `name`.
inline std::vector<nlohmann::json> spans_named(const nlohmann::json& trace,
                                               const std::string& name) {
  std::vector<nlohmann::json> out;
  for (const auto& e : events_with_ph(trace, "X")) {
    if (e.value("name", "") == name) out.push_back(e);
  }
  return out;
}

inline const nlohmann::json* metadata(const nlohmann::json& trace, const std::string& name) {
  for (const auto& e : trace) {
    if (e.value("ph", "") == "M" && e.value("name", "") == name) return &e;
  }
  return nullptr;
}

// tid -> thread_name (last one written).
inline std::map<long, std::string> thread_names(const nlohmann::json& trace) {
  std::map<long, std::string> names;
  for (const auto& e : trace) {
    if (e.value("ph", "") == "M" && e.value("name", "") == "thread_name") {
      names[e["tid"].get<long>()] = e["args"]["name"].get<std::string>();
    }
  }
  return names;
}

// Time in ns from a ts/dur number written with three decimals.
inline long long to_ns(const nlohmann::json& us) { return std::llround(us.get<double>() * 1000.0); }

// A session started for one test and always stopped.
class ScopedSession {
 public:
  explicit ScopedSession(Config cfg) : path_(cfg.output_path) { status_ = start(cfg); }
  ~ScopedSession() { (void)stop(); }
  const Status& status() const { return status_; }
  SessionStats finish() {
    SessionStats stats;
    Status st = stop(&stats);
    EXPECT_TRUE(st.ok()) << st.message();
    return stats;
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  Status status_;
};

// Everything written to fd 2 while alive; read with text().
class StderrCapture {
 public:
  StderrCapture() {
    char path[] = "/tmp/jitscope_stderr.XXXXXX";
    file_ = ::mkstemp(path);
    if (file_ >= 0) ::unlink(path);
    saved_ = ::dup(STDERR_FILENO);
    if (file_ >= 0 && saved_ >= 0) ::dup2(file_, STDERR_FILENO);
  }
  ~StderrCapture() {
    restore();
    if (file_ >= 0) ::close(file_);
  }
  std::string text() {
    restore();
    std::string out;
    if (file_ < 0) return out;
    char buf[4096];
    ssize_t n = 0;
    off_t at = 0;
    while ((n = ::pread(file_, buf, sizeof(buf), at)) > 0) {
      out.append(buf, static_cast<std::size_t>(n));
      at += n;
    }
    return out;
  }

 private:
  void restore() {
    if (saved_ >= 0) {
      ::dup2(saved_, STDERR_FILENO);
      ::close(saved_);
      saved_ = -1;
    }
  }
  int file_ = -1;
  int saved_ = -1;
};

inline Config test_config(const std::string& stem) {
  Config cfg;
  cfg.output_path = temp_path(stem);
  cfg.flush_interval = std::chrono::milliseconds(5);
  cfg.cupti = CuptiMode::kOff;  // tests of GPU activity turn it on themselves
  return cfg;
}

// test_config's session writing `path` in `format`.
inline Config trace_config(const std::string& path, TraceFormat format) {
  Config cfg = test_config(path);
  cfg.output_path = path;
  cfg.format = format;
  return cfg;
}

// A trace a real session wrote, with one span "work": its path.
inline std::string write_one_span_trace(const std::string& stem) {
  Config cfg = test_config(stem);
  ScopedSession session(cfg);
  EXPECT_TRUE(session.status().ok());
  Span span("work");
  span.end();
  return cfg.output_path;
}

}  // namespace jitscope::testing
