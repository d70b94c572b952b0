#include "kforge/common/verdict.h"

#include <gtest/gtest.h>

namespace kforge::common {
namespace {

TEST(VerdictTest, StatusNamesRoundTrip) {
  const VerdictStatus all[] = {
      VerdictStatus::kOk,          VerdictStatus::kCompileError, VerdictStatus::kInvalidSolution,
      VerdictStatus::kLaunchError, VerdictStatus::kMismatch,     VerdictStatus::kTimeout,
      VerdictStatus::kCrash,       VerdictStatus::kNoGpu,        VerdictStatus::kHarnessError};
  const char* names[] = {"ok",    "compile_error", "invalid_solution", "launch_error", "mismatch", "timeout",
                         "crash", "no_gpu",        "harness_error"};
  for (size_t i = 0; i < std::size(all); ++i) {
    EXPECT_EQ(VerdictStatusName(all[i]), names[i]);
    auto parsed = ParseVerdictStatus(names[i]);
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(*parsed, all[i]);
  }
  EXPECT_FALSE(ParseVerdictStatus("passed").ok());
}

TEST(VerdictTest, JsonRoundTrip) {
  Verdict v;
  v.task = "demo/relu";
  v.solution = "-:3";
  v.solution_hash = "sha256:ab";
  v.status = VerdictStatus::kMismatch;
  v.message = "out0: 12 of 4096 elements differ";
  v.seed = 18446744073709551615ull;
  v.compile = {{"ms", 12.5}, {"cached", false}};
  v.memory = {{"footprint_bytes", int64_t{13743928320}}, {"peak_device_bytes", int64_t{20615919616}}};
  nlohmann::json json = v.ToJson();
  EXPECT_EQ(json["memory"]["footprint_bytes"], int64_t{13743928320});
  EXPECT_EQ(json["schema"], "kforge.verdict/1");
  EXPECT_EQ(json["status"], "mismatch");
  auto back = Verdict::FromJson(json);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->ToJson(), json);
  json["schema"] = "kforge.verdict/2";
  EXPECT_FALSE(Verdict::FromJson(json).ok());
}

}  // namespace
}  // namespace kforge::common
