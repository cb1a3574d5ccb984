// TraceReader on gzip'd input (issue 19 item 5), gzip made here with zlib:
// the same events, offsets, fields, end state and repair warnings as the
// plain text at every chunk size (so every inflate boundary is crossed);
// gzip known by its magic bytes, not its name; concatenated members (split
// at every byte, empty ones too); stdin through a pipe fed a byte at a
// time; a gzip'd trace cut inside its last event read as the plain cut one;
// every cut-off length of a gzip stream and each kind of corruption (a bad
// block, CRC-32, length, method, header, trailing garbage) as its exact
// error; a 200 MB gzip'd trace read in bounded memory (the peak RSS of a
// child that reads it, from wait4).
// Not covered here: the tools' output for gzip input (gzip_input_test.cpp);
// a build without zlib (its error is checked by hand: docs/tools.md).
#include <trace_reader.hpp>

#include "gzip_support.hpp"
#include "trace_reader_support.hpp"
#include "trace_support.hpp"

#include <gtest/gtest.h>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

namespace {

using jitscope::testing::gzip_member;
using jitscope::testing::read_with;
using jitscope::testing::ReaderOutput;
using jitscope::testing::temp_path;
using jitscope::tools::TraceReader;

std::string write(const std::string& stem, const std::string& bytes) {
  const std::string path = temp_path(stem);
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

void expect_same(const ReaderOutput& got, const ReaderOutput& want, const std::string& what) {
  EXPECT_EQ(got.ok, want.ok) << what << ": " << got.error;
  EXPECT_EQ(got.events, want.events) << what;
  EXPECT_EQ(got.fields, want.fields) << what;
  EXPECT_EQ(got.unterminated, want.unterminated) << what;
  EXPECT_EQ(got.warnings, want.warnings) << what;
}

// The error without its "<path>: " prefix.
std::string error_of(const ReaderOutput& r, const std::string& path) {
  return r.error.rfind(path + ": ", 0) == 0 ? r.error.substr(path.size() + 2) : r.error;
}

const std::string kEvents =
    "{\"name\":\"compile\",\"ph\":\"X\",\"ts\":1.5,\"dur\":20,\"pid\":1,\"tid\":1},\n"
    "{\"name\":\"parse\",\"ph\":\"X\",\"ts\":2,\"dur\":3.25,\"pid\":1,\"tid\":1,\"args\":{\"k\":[1,"
    "{\"x\":\"]}\"}]}},\n"
    "{\"name\":\"bad \xFF utf8\",\"ph\":\"i\",\"ts\":4,\"pid\":1,\"tid\":2,\"s\":\"t\"},\n"
    "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":2,\"args\":{\"name\":\"w\"}}";

// Inputs of every shape the reader knows, good and repaired.
const std::vector<std::pair<std::string, std::string>> kInputs = {
    {"array", "[" + kEvents + "]\n"},
    {"bom and trailing comma", "\xEF\xBB\xBF[" + kEvents + ",\n]"},
    {"object form", "{\"otherData\":{\"v\":1},\"traceEvents\":[" + kEvents + "],\"x\":[2]}"},
    {"unterminated", "[" + kEvents + ",\n"},
    {"cut inside its last event", "[" + kEvents + ",\n{\"name\":\"cut\",\"ph\":\"X\",\"ts\":"},
    {"not a trace", "hello"},
    {"garbage after the end", "[" + kEvents + "] x"},
};

TEST(TraceReaderGzip, SameAsPlainAtEveryChunkSize) {
  for (const auto& [what, text] : kInputs) {
    SCOPED_TRACE(what);
    const std::string plain = write("gz_plain", text);
    const std::string gz = write("gz_copy", gzip_member(text));
    const ReaderOutput want = read_with(plain, TraceReader::kDefaultChunkSize);
    std::vector<std::size_t> chunks = {TraceReader::kDefaultChunkSize, 4096};
    for (std::size_t c = 1; c <= 64; ++c) chunks.push_back(c);
    for (std::size_t chunk : chunks) {
      const ReaderOutput got = read_with(gz, chunk);
      expect_same(got, want, what + " at chunk " + std::to_string(chunk));
      EXPECT_EQ(error_of(got, gz), error_of(want, plain)) << "chunk " << chunk;
    }
  }
}

TEST(TraceReaderGzip, CutInsideItsLastEventIsThePlainCutTrace) {
  const std::string text = "[" + kEvents + ",\n{\"name\":\"cut\",\"ph\":\"X\",\"ts\":";
  const std::string gz = write("gz_cut", gzip_member(text));
  const ReaderOutput r = read_with(gz, TraceReader::kDefaultChunkSize);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_TRUE(r.unterminated);
  EXPECT_EQ(r.events.size(), 4u);
  const std::size_t at = 1 + kEvents.size() + 2;
  EXPECT_EQ(r.warnings,
            (std::vector<std::string>{
                "1 event cut off by the end of the input (its " + std::to_string(text.size() - at) +
                    " bytes from byte " + std::to_string(at) + " dropped)",
                "1 invalid UTF-8 sequences in 1 events (replaced by U+FFFD)"}));
}

TEST(TraceReaderGzip, KnownByItsMagicBytesNotItsName) {
  const std::string text = "[" + kEvents + "]";
  // temp_path names end in .json: a gzip'd one is still gzip.
  const std::string gz_named_json = write("gz_named", gzip_member(text));
  const std::string plain_named_gz = write("plain_named", text) + ".gz";
  std::ofstream(plain_named_gz, std::ios::binary) << text;
  TraceReader reader;
  std::string error;
  std::size_t events = 0;
  auto count = [&](const jitscope::tools::RawEvent&) { return ++events > 0; };
  ASSERT_TRUE(reader.read(gz_named_json, count, nullptr, &error)) << error;
  EXPECT_TRUE(reader.gzip());
  EXPECT_EQ(reader.bytes_read(), text.size());  // the text, not the file
  EXPECT_EQ(events, 4u);
  events = 0;
  ASSERT_TRUE(reader.read(plain_named_gz, count, nullptr, &error)) << error;
  EXPECT_FALSE(reader.gzip());
  EXPECT_EQ(events, 4u);
  // One byte of the magic is not gzip: the plain text "\x1f" is not a trace.
  const std::string one = write("gz_one", "\x1f");
  EXPECT_FALSE(reader.read(one, count, nullptr, &error));
  EXPECT_EQ(error, one + ": byte 0: not a trace: expected '[' or '{', found byte 0x1F");
}

TEST(TraceReaderGzip, ConcatenatedMembersAreOneText) {
  const std::string text = "{\"traceEvents\":[" + kEvents + "]}";
  const std::string plain = write("gz_members_plain", text);
  const ReaderOutput want = read_with(plain, TraceReader::kDefaultChunkSize);
  ASSERT_TRUE(want.ok) << want.error;
  // Two members split at every byte (the first or the second empty at the
  // ends): `cat a.gz b.gz`.
  for (std::size_t at = 0; at <= text.size(); ++at) {
    const std::string gz =
        write("gz_members", gzip_member(text.substr(0, at)) + gzip_member(text.substr(at), 1));
    for (std::size_t chunk : {std::size_t{1}, std::size_t{7}, TraceReader::kDefaultChunkSize}) {
      expect_same(read_with(gz, chunk), want,
                  "split at " + std::to_string(at) + ", chunk " + std::to_string(chunk));
    }
  }
  // pigz-like: a member per 16 bytes, and an empty member in the middle.
  std::string many;
  for (std::size_t at = 0; at < text.size(); at += 16) {
    many += gzip_member(text.substr(at, 16), 9);
    if (at == 32) many += gzip_member("");
  }
  const std::string gz = write("gz_many", many);
  for (std::size_t chunk = 1; chunk <= 32; ++chunk)
    expect_same(read_with(gz, chunk), want, "16-byte members, chunk " + std::to_string(chunk));
}

TEST(TraceReaderGzip, StdinThroughAPipeAByteAtATime) {
  const std::string text = "[" + kEvents + "]";
  const std::string gz = gzip_member(text);
  const ReaderOutput want = read_with(write("gz_stdin_plain", text), 1);
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const int saved = ::dup(0);
  ASSERT_GE(saved, 0);
  ASSERT_EQ(::dup2(fds[0], 0), 0);
  ::close(fds[0]);
  std::thread writer([&] {
    for (char c : gz) {
      if (::write(fds[1], &c, 1) != 1) break;
      std::this_thread::yield();
    }
    ::close(fds[1]);
  });
  const ReaderOutput got = read_with("-", TraceReader::kDefaultChunkSize);
  writer.join();
  ::dup2(saved, 0);
  ::close(saved);
  expect_same(got, want, "stdin");
}

TEST(TraceReaderGzip, EmptyGzipIsAnEmptyInput) {
  const std::string gz = write("gz_empty", gzip_member(""));
  const ReaderOutput r = read_with(gz, TraceReader::kDefaultChunkSize);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(error_of(r, gz), "byte 0: empty input: not a trace");
}

// Every length of a gzip stream short of its end (its header, its deflate
// data, its CRC-32 and length trailer) is one error, the same at every
// chunk size: there is no partial member on success.
TEST(TraceReaderGzip, ACutOffStreamIsAnError) {
  const std::string text = "[" + kEvents + "]";
  const std::string full = gzip_member(text);
  for (std::size_t k = 2; k < full.size(); ++k) {
    SCOPED_TRACE("cut at " + std::to_string(k));
    const std::string gz = write("gz_cutoff", full.substr(0, k));
    const std::string want_end = ": the gzip stream is cut off at compressed byte " +
                                 std::to_string(k) + " (member 1 has no end)";
    for (std::size_t chunk : {std::size_t{1}, TraceReader::kDefaultChunkSize}) {
      const ReaderOutput r = read_with(gz, chunk);
      EXPECT_FALSE(r.ok);
      const std::string e = error_of(r, gz);
      EXPECT_EQ(e.rfind("byte ", 0), 0u) << e;
      ASSERT_GE(e.size(), want_end.size()) << e;
      EXPECT_EQ(e.substr(e.size() - want_end.size()), want_end) << e;
    }
  }
  // The second member cut: its number is said; the text before it was read.
  const std::string two = gzip_member(text.substr(0, 40)) + gzip_member(text.substr(40));
  const std::string gz = write("gz_cutoff2", two.substr(0, two.size() - 3));
  const ReaderOutput r = read_with(gz, TraceReader::kDefaultChunkSize);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(error_of(r, gz), "byte " + std::to_string(text.size()) +
                                 ": the gzip stream is cut off at compressed byte " +
                                 std::to_string(two.size() - 3) + " (member 2 has no end)");
}

TEST(TraceReaderGzip, CorruptGzipIsAnError) {
  const std::string text = "[" + kEvents + "]";
  const std::string good = gzip_member(text);
  const std::size_t n = good.size();
  struct Case {
    std::string what, bytes, error;  // error: after "<path>: "
  };
  auto with = [&](std::size_t at, char c) {
    std::string b = good;
    b[at] = c;
    return b;
  };
  const std::string tsize = std::to_string(text.size());
  const std::vector<Case> cases = {
      {"CRC-32", with(n - 8, static_cast<char>(good[n - 8] ^ 1)),
       "byte " + tsize + ": corrupt gzip data at compressed byte " + std::to_string(n - 4) +
           ": incorrect data check"},
      {"length", with(n - 1, static_cast<char>(good[n - 1] ^ 1)),
       "byte " + tsize + ": corrupt gzip data at compressed byte " + std::to_string(n) +
           ": incorrect length check"},
      {"method", with(2, 9),
       "byte 0: corrupt gzip data at compressed byte 4: unknown compression method"},
      {"garbage after the member", good + "xyz",
       "byte " + tsize + ": data after gzip member 1 is not gzip (compressed byte " +
           std::to_string(n) + ")"},
      {"zero padding after the member", good + std::string(4, '\0'),
       "byte " + tsize + ": data after gzip member 1 is not gzip (compressed byte " +
           std::to_string(n) + ")"},
      {"half a magic after the member", good + "\x1f\x8c",
       "byte " + tsize + ": corrupt gzip data at compressed byte " + std::to_string(n + 2) +
           ": incorrect header check"},
      {"a bad block type", good.substr(0, 10) + "\x07" + good.substr(11),
       "byte 0: corrupt gzip data at compressed byte 11: invalid block type"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    const std::string gz = write("gz_corrupt", c.bytes);
    for (std::size_t chunk : {std::size_t{1}, TraceReader::kDefaultChunkSize}) {
      const ReaderOutput r = read_with(gz, chunk);
      EXPECT_FALSE(r.ok);
      EXPECT_EQ(error_of(r, gz), c.error) << "chunk " << chunk;
    }
  }
  // Any byte of the deflate data changed: an error, or (a bit the decoder
  // never looks at) the very same events; never other events. The error
  // may be the JSON's: garbage inflated before the member's CRC-32 (checked
  // at its end) can break the JSON first.
  const ReaderOutput want = read_with(write("gz_corrupt_plain", text), 4096);
  int errors = 0;
  for (std::size_t at = 10; at < n - 8; ++at) {
    const std::string gz = write("gz_flip", with(at, static_cast<char>(good[at] ^ 0x10)));
    const ReaderOutput r = read_with(gz, 4096);
    if (r.ok) {
      expect_same(r, want, "flip at " + std::to_string(at));
    } else {
      ++errors;
    }
  }
  EXPECT_GT(errors, static_cast<int>(n - 18) * 9 / 10);
}

// ~200 MB of events gzip'd (written as a stream here), read by a child
// process: its peak RSS (wait4) stays near one 16 MiB chunk, far under
// the text's size. Inflating the whole file in memory would take > 200 MB.
TEST(TraceReaderGzip, BigGzipReadInBoundedMemory) {
  const std::string path = temp_path("gz_big");
  constexpr std::uint64_t kTarget = 200'000'000;
  std::uint64_t text_bytes = 0, events = 0;
  {
    jitscope::testing::GzipFileWriter out(path, 1);
    std::string piece;
    char line[256];
    out.write("[");
    text_bytes = 1;
    while (text_bytes < kTarget) {
      piece.clear();
      for (int k = 0; k < 4096; ++k, ++events) {
        const int len = std::snprintf(
            line, sizeof line,
            "%s{\"name\":\"pass:%llu\",\"cat\":\"pass\",\"ph\":\"X\",\"ts\":%llu.%03llu,"
            "\"dur\":1.250,\"pid\":7,\"tid\":%llu,\"args\":{\"compile_id\":\"0/%llu\"}}",
            events == 0 ? "" : ",\n", static_cast<unsigned long long>(events % 97),
            static_cast<unsigned long long>(events * 3),
            static_cast<unsigned long long>(events % 1000),
            static_cast<unsigned long long>(events % 8),
            static_cast<unsigned long long>(events >> 12));
        piece.append(line, static_cast<std::size_t>(len));
      }
      out.write(piece);
      text_bytes += piece.size();
    }
    out.write("]\n");
    text_bytes += 2;
  }
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::close(fds[0]);
    TraceReader reader;
    std::string error;
    std::uint64_t seen = 0;
    const bool ok = reader.read(
        path, [&](const jitscope::tools::RawEvent&) { return ++seen > 0; }, nullptr, &error);
    const std::uint64_t result[3] = {ok ? 1u : 0u, seen, reader.bytes_read()};
    const bool sent = ::write(fds[1], result, sizeof result) == static_cast<ssize_t>(sizeof result);
    ::_exit(sent ? 0 : 1);
  }
  ::close(fds[1]);
  std::uint64_t result[3] = {0, 0, 0};
  const bool got = ::read(fds[0], result, sizeof result) == static_cast<ssize_t>(sizeof result);
  ::close(fds[0]);
  int status = 0;
  struct rusage ru {};
  ASSERT_EQ(::wait4(pid, &status, 0, &ru), pid);
  std::remove(path.c_str());
  ASSERT_TRUE(got);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_EQ(result[0], 1u) << "the read failed";
  EXPECT_EQ(result[1], events);
  EXPECT_EQ(result[2], text_bytes);
  const long peak_mib = ru.ru_maxrss / 1024;  // ru_maxrss is in KiB
  std::printf("gzip'd %.0f MB of text: child peak RSS %ld MiB\n", text_bytes / 1e6, peak_mib);
#if defined(__SANITIZE_THREAD__)
  // ThreadSanitizer's shadow memory multiplies the RSS of any process (136
  // MiB seen here): the bound is checked in the other builds (dev, ASan).
  std::printf("ThreadSanitizer build: the RSS bound is not checked\n");
#else
#if defined(__SANITIZE_ADDRESS__)
  // ASan's quarantine keeps the buffers the reader frees as its reads
  // double resident (64 MiB seen before the 2026-11-29 buffer change, 68
  // after it; the dev build reads this in 39).
  constexpr long kBoundMib = 96;
#else
  constexpr long kBoundMib = 64;
#endif
  EXPECT_LT(peak_mib, kBoundMib) << "reading " << text_bytes << " bytes of gzip'd text";
#endif
}

}  // namespace
