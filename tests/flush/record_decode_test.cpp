// The trace writer fed records that break the producer's rules stays
// bounded (and counts them as decode errors). The producer records at most
// kMaxRecordedDepth open spans per thread; more Begins than that with no
// End between them mean Ends were lost, and the writer keeps the depth it
// can have rather than growing its stack with each one.
#include "flush/record_support.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace jitscope::detail {
namespace {

using nlohmann::json;

TEST(RecordDecode, BeginsDeeperThanAThreadRecordsReplaceTheInnermostAndTheDepthStaysBounded) {
  std::vector<Record> records;
  const std::size_t begins = kMaxRecordedDepth + 40;
  for (std::size_t i = 0; i < begins; ++i) {
    records.push_back(record(RecordKind::kBegin, 1'000 + i, "deep", 0));
  }
  std::size_t spans = 0;
  // Closed as at a stop: every span the writer still holds is written.
  for (const json& e : json::parse(write_json_trace(records, 10'000))) spans += e["ph"] == "X";
  EXPECT_EQ(spans, kMaxRecordedDepth) << "the Begins past the limit replace the innermost";
}

}  // namespace
}  // namespace jitscope::detail
