#include "kforge/cuda/launch_plan.h"

#include <gtest/gtest.h>
#include <cstdint>

namespace kforge::cuda {
namespace {

using common::DType;

PlanEnv TestEnv() {
  PlanEnv env;
  env.symbols = {{"N", 1000}};
  env.tensors["x"] = {DType::kFloat32, {1000}, false};
  env.tensors["conv.weight"] = {DType::kFloat16, {8, 3}, false};
  env.tensors["out0"] = {DType::kFloat32, {1000}, true};
  env.tensors["idx"] = {DType::kInt32, {10}, true};
  return env;
}

common::Solution Parse(const std::string& plan, const std::string& scratch = "[]") {
  std::string text = R"J({"source": "", "launches": )J" + plan + R"J(, "scratch": )J" + scratch + "}";
  auto solution = common::ParseSolutionText(text, "sol");
  EXPECT_TRUE(solution.ok()) << solution.status().ToString();
  return *solution;
}

TEST(LaunchPlanTest, ResolvesKernelStep) {
  PlanEnv env = TestEnv();
  common::Solution s =
      Parse(R"J([{"memset": "out0"}, {"kernel": "k", "grid": ["cdiv(N, 256)", "size(conv.weight, 0)"],
      "block": [256], "shared_bytes": "4 * 256", "args": ["x", "out0", "i32:N", "u64:numel(x)", "f32:0.5", "f64:-2"]}])J");
  auto plan = ResolvePlan(s, env, LaunchLimits{});
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  ASSERT_EQ(plan->steps.size(), 2u);
  EXPECT_EQ(plan->steps[0].memset_bytes, 4000u);
  EXPECT_EQ(plan->steps[0].memset_byte, 0);
  const ResolvedStep& k = plan->steps[1];
  EXPECT_EQ(k.grid.x, 4u);
  EXPECT_EQ(k.grid.y, 8u);
  EXPECT_EQ(k.block.x, 256u);
  EXPECT_EQ(k.shared_bytes, 1024u);
  ASSERT_EQ(k.args.size(), 6u);
  EXPECT_EQ(k.args[0].tensor, "x");
  EXPECT_EQ(k.args[0].size, 8u);
  EXPECT_EQ(k.args[2].bits, 1000u);
  EXPECT_EQ(k.args[2].size, 4u);
  EXPECT_EQ(k.args[3].bits, 1000u);
  EXPECT_EQ(k.args[3].size, 8u);
  EXPECT_EQ(k.args[4].bits, 0x3f000000u);
  EXPECT_EQ(k.args[5].bits, 0xc000000000000000ull);
}

TEST(LaunchPlanTest, RejectsWithStepPath) {
  struct Case {
    std::string plan;
    std::string message;
  };
  const Case cases[] = {
      {R"J([{"kernel": "k", "grid": [1], "block": [2048], "args": []}])J",
       "launches[0].block[0]: 2048 is outside 1..1024"},
      {R"J([{"kernel": "k", "grid": [1], "block": [32, 32, 2], "args": []}])J",
       "launches[0].block: 2048 threads per block, over 1024"},
      {R"J([{"kernel": "k", "grid": [0], "block": [1], "args": []}])J", "launches[0].grid[0]: 0 is outside"},
      {R"J([{"kernel": "k", "grid": [1, 70000], "block": [1], "args": []}])J",
       "launches[0].grid[1]: 70000 is outside 1..65535"},
      {R"J([{"kernel": "k", "grid": ["N / (N - 1000)"], "block": [1], "args": []}])J",
       "launches[0].grid[0]: in \"N / (N - 1000)\""},
      {R"J([{"kernel": "k", "grid": [1], "block": [1], "shared_bytes": 1000000, "args": []}])J",
       "launches[0].shared_bytes: 1000000 is outside"},
      {R"J([{"kernel": "k", "grid": [1], "block": [1], "args": ["y"]}])J",
       "launches[0].args[0]: unknown tensor \"y\""},
      {R"J([{"kernel": "k", "grid": [1], "block": [1], "args": ["i32:5000000000"]}])J",
       "launches[0].args[0]: 5000000000 does not fit"},
      {R"J([{"kernel": "k", "grid": [1], "block": [1], "args": ["u32:-1"]}])J",
       "launches[0].args[0]: -1 does not fit"},
      {R"J([{"memset": "x"}])J", "launches[0].memset: \"x\" is read-only"},
      {R"J([{"memset": "nope"}])J", "launches[0].memset: unknown tensor \"nope\""},
      {R"J([{"memset": "out0", "value": 1.5}])J", "launches[0].value: memset fills bytes"},
  };
  for (const Case& c : cases) {
    auto plan = ResolvePlan(Parse(c.plan), TestEnv(), LaunchLimits{});
    ASSERT_FALSE(plan.ok()) << c.plan;
    EXPECT_NE(plan.status().message().find(c.message), std::string::npos)
        << "got: " << plan.status().message() << "\nwant: " << c.message;
  }
}

TEST(LaunchPlanTest, MemsetValuesThatRepeatABytePass) {
  struct Case {
    std::string target;
    double value;
    uint8_t byte;
  };
  const Case cases[] = {{"out0", 0, 0}, {"idx", -1, 0xff}, {"idx", 0, 0}};
  for (const Case& c : cases) {
    auto plan = ResolvePlan(
        Parse(R"J([{"memset": ")J" + c.target + R"J(", "value": )J" + std::to_string(c.value) + "}]"),
        TestEnv(), LaunchLimits{});
    ASSERT_TRUE(plan.ok()) << plan.status().ToString();
    EXPECT_EQ(plan->steps[0].memset_byte, c.byte);
  }
  EXPECT_FALSE(ResolvePlan(Parse(R"J([{"memset": "idx", "value": 3}])J"), TestEnv(), LaunchLimits{}).ok());
}

TEST(LaunchPlanTest, ScratchIsSizedAndCapped) {
  PlanEnv env = TestEnv();
  common::Solution s =
      Parse(R"J([{"memset": "tmp"}])J", R"J([{"name": "tmp", "dtype": "float64", "shape": ["N", 2]}])J");
  ASSERT_TRUE(AddScratch(s, LaunchLimits{}, env).ok());
  EXPECT_EQ(env.tensors.at("tmp").bytes(), 16000u);
  EXPECT_TRUE(env.tensors.at("tmp").writable);
  auto plan = ResolvePlan(s, env, LaunchLimits{});
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->steps[0].memset_bytes, 16000u);

  PlanEnv env2 = TestEnv();
  common::Solution huge = Parse(R"J([{"memset": "tmp"}])J",
                                R"J([{"name": "tmp", "dtype": "float32", "shape": [1073741824, 2]}])J");
  Status status = AddScratch(huge, LaunchLimits{}, env2);
  EXPECT_NE(status.message().find("scratch[0]: larger than the scratch limit"), std::string::npos)
      << status.message();
  PlanEnv env3 = TestEnv();
  common::Solution clash =
      Parse(R"J([{"memset": "x"}])J", R"J([{"name": "x", "dtype": "float32", "shape": [1]}])J");
  EXPECT_NE(AddScratch(clash, LaunchLimits{}, env3).message().find("already a task tensor"),
            std::string::npos);
}

}  // namespace
}  // namespace kforge::cuda
