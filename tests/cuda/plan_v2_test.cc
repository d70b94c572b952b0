// Plan v2 steps, resolved without a GPU: library ops against the allowlist, typed fills, and views that
// stay inside their base tensor; solutions with them round-trip as kforge.solution/2.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <iterator>
#include <string>

#include "kforge/common/library_ops.h"
#include "kforge/cuda/launch_plan.h"

namespace kforge::cuda {
namespace {

using common::DType;

PlanEnv TestEnv() {
  PlanEnv env;
  env.symbols = {{"T", 4}, {"IN", 8}, {"OUT", 6}};
  env.tensors["x"] = {DType::kFloat32, {4, 8}, false};
  env.tensors["fc.weight"] = {DType::kFloat32, {6, 8}, false};
  env.tensors["fc.bias"] = {DType::kFloat32, {6}, false};
  env.tensors["out0"] = {DType::kFloat32, {4, 6}, true};
  return env;
}

StatusOr<ResolvedPlan> Resolve(const std::string& launches, LaunchLimits limits = {}) {
  std::string text = R"J({"source": "", "launches": )J" + launches + "}";
  auto solution = common::ParseSolutionText(text, "sol");
  if (!solution.ok()) return solution.status();
  return ResolvePlan(*solution, TestEnv(), limits);
}

TEST(PlanV2Test, OpFillAndViewResolve) {
  auto plan = Resolve(R"J([
    {"op": "linear", "args": ["x", "fc.weight", "fc.bias"], "out": "out0"},
    {"fill": "out0", "value": "-inf"},
    {"view": "row1", "of": "out0", "offset": "OUT", "shape": ["OUT"]},
    {"op": "softmax", "args": ["row1"], "out": "row1", "attrs": {"dim": 0}}])J");
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  ASSERT_EQ(plan->steps.size(), 4u);
  EXPECT_TRUE(plan->has_library_steps);
  const ResolvedStep& op = plan->steps[0];
  EXPECT_EQ(op.op, "linear");
  ASSERT_EQ(op.op_args.size(), 3u);
  EXPECT_EQ(op.op_args[1].tensor, "fc.weight");
  EXPECT_EQ(op.op_args[1].shape, (std::vector<int64_t>{6, 8}));
  EXPECT_EQ(op.target.tensor, "out0");
  EXPECT_TRUE(std::isinf(plan->steps[1].fill_value) && plan->steps[1].fill_value < 0);
  EXPECT_EQ(plan->steps[2].view.base, "out0");
  EXPECT_EQ(plan->steps[2].view.byte_offset, 24u);
  EXPECT_EQ(plan->steps[3].target.shape, (std::vector<int64_t>{6}));
}

TEST(PlanV2Test, BadStepsAreRefusedWithTheirPath) {
  struct Case {
    std::string launches;
    std::string message;
  };
  const Case cases[] = {
      {R"J([{"op": "system", "args": ["x"], "out": "out0"}])J",
       "launches[0].op: \"system\" is not a library op"},
      {R"J([{"op": "linear", "args": ["x"], "out": "out0"}])J", "linear takes 2 to 3 tensors, got 1"},
      {R"J([{"op": "linear", "args": ["x", "w"], "out": "out0"}])J",
       "launches[0].args[1]: unknown tensor \"w\""},
      {R"J([{"op": "relu", "args": ["out0"], "out": "x"}])J", "launches[0].out: \"x\" is read-only"},
      {R"J([{"op": "softmax", "args": ["x"], "out": "out0", "attrs": {"axis": 1}}])J", "softmax takes dim"},
      {R"J([{"op": "softmax", "args": ["x"], "out": "out0", "attrs": {"dim": "1"}}])J",
       "attrs.dim: wrong kind"},
      {R"J([{"fill": "x", "value": 1}])J", "launches[0].fill: \"x\" is read-only"},
      {R"J([{"fill": "out0", "value": "lots"}])J", "launches[0].value: expected a number"},
      {R"J([{"view": "v", "of": "x", "offset": 30, "shape": [3]}])J", "lie outside \"x\""},
      {R"J([{"view": "v", "of": "x", "offset": -1, "shape": [3]}])J", "launches[0].offset: negative"},
      {R"J([{"view": "x", "of": "out0", "shape": [3]}])J", "\"x\" already names a tensor"},
      {R"J([{"view": "v", "of": "out0", "offset": 1, "shape": [2], "dtype": "float64"}])J", "not aligned"},
      {R"J([{"view": "v", "of": "x", "shape": [2]}, {"fill": "v", "value": 0}])J",
       "launches[1].fill: \"v\" is read-only"},
  };
  for (const Case& c : cases) {
    auto plan = Resolve(c.launches);
    ASSERT_FALSE(plan.ok()) << c.launches;
    EXPECT_NE(plan.status().message().find(c.message), std::string::npos)
        << c.launches << "\n  got: " << plan.status().message();
  }
}

TEST(PlanV2Test, ItemArgumentsReadOneElementOfTheRightSize) {
  auto plan = Resolve(
      R"J([{"kernel": "k", "grid": [1], "block": [1], "args": ["item:out0", "item:fc.bias[OUT - 1]"]}])J");
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  const ResolvedArg& first = plan->steps[0].args[0];
  EXPECT_EQ(first.item_tensor, "out0");
  EXPECT_EQ(first.item_offset, 0u);
  EXPECT_EQ(first.size, 4u);
  EXPECT_EQ(plan->steps[0].args[1].item_offset, 20u);
  auto outside = Resolve(R"J([{"kernel": "k", "grid": [1], "block": [1], "args": ["item:fc.bias[OUT]"]}])J");
  ASSERT_FALSE(outside.ok());
  EXPECT_NE(outside.status().message().find("launches[0].args[0]: element 6 is outside \"fc.bias\""),
            std::string::npos)
      << outside.status().message();
  auto solution = common::ParseSolutionText(
      R"J({"source": "", "launches": [{"kernel": "k", "grid": [1], "block": [1], "args": ["item:x[3]", "item:x"]}]})J",
      "s");
  ASSERT_TRUE(solution.ok());
  nlohmann::json json = common::SolutionToJson(*solution);
  EXPECT_EQ(json["schema"], "kforge.solution/2");
  EXPECT_EQ(json["launches"][0]["args"], nlohmann::json({"item:x[3]", "item:x"}));
  EXPECT_FALSE(
      common::ParseSolutionText(
          R"J({"source": "", "launches": [{"kernel": "k", "grid": [1], "block": [1], "args": ["item:x[3"]}]})J",
          "s")
          .ok());
}

TEST(PlanV2Test, AllowOpsNoneRefusesOpsButNotViews) {
  LaunchLimits none;
  none.op_policy = common::OpPolicy::kNone;
  auto op = Resolve(R"J([{"op": "relu", "args": ["x"], "out": "out0"}])J", none);
  ASSERT_FALSE(op.ok());
  EXPECT_NE(op.status().message().find("--allow-ops none"), std::string::npos);
  EXPECT_TRUE(Resolve(R"J([{"view": "v", "of": "x", "shape": [2, 8]}])J", none).ok());
}

TEST(PlanV2Test, AtenOperatorsNeedAllowOpsAll) {
  const std::string launches = R"J([{"op": "aten::max_pool2d", "args": ["x"], "out": "out0",
                                      "attrs": {"kernel_size": [2, 2], "ceil_mode": false}}])J";
  auto library = Resolve(launches);
  ASSERT_FALSE(library.ok());
  EXPECT_NE(
      library.status().message().find("launches[0].op: aten::max_pool2d is outside kforge's allowlist of "
                                      "library ops; it needs --allow-ops all"),
      std::string::npos)
      << library.status().message();
  LaunchLimits all;
  all.op_policy = common::OpPolicy::kAll;
  EXPECT_TRUE(Resolve(launches, all).ok());
  // Names and attributes are checked before anything runs.
  for (const char* bad : {R"J([{"op": "aten::Max_Pool", "args": ["x"], "out": "out0"}])J",
                          R"J([{"op": "aten::relu; rm", "args": ["x"], "out": "out0"}])J",
                          R"J([{"op": "aten::relu", "args": ["x"], "out": "out0", "attrs": {"a b": 1}}])J",
                          R"J([{"op": "aten::relu", "args": ["x"], "out": "out0", "attrs": {"p": "str"}}])J"})
    EXPECT_FALSE(Resolve(bad, all).ok()) << bad;
  EXPECT_EQ(common::kOpPolicyNames.Parse("all"), common::OpPolicy::kAll);
  EXPECT_FALSE(common::kOpPolicyNames.Parse("everything").has_value());
}

TEST(PlanV2Test, SolutionsWithV2StepsRoundTripAsSchemaTwo) {
  std::string text = R"J({"source": "s", "launches": [{"fill": "out0", "value": "nan"},
      {"view": "v", "of": "x", "offset": "IN", "shape": [8], "dtype": "int32"},
      {"op": "sum", "args": ["x"], "out": "out0", "attrs": {"dim": [1], "keepdim": false}}]})J";
  auto solution = common::ParseSolutionText(text, "sol");
  ASSERT_TRUE(solution.ok()) << solution.status().message();
  nlohmann::json json = common::SolutionToJson(*solution);
  EXPECT_EQ(json["schema"], "kforge.solution/2");
  EXPECT_EQ(json["launches"][0]["value"], "nan");
  auto again = common::SolutionFromJson(json, "again");
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ(common::SolutionToJson(*again), json);
  auto v1 = common::ParseSolutionText(R"J({"source": "s", "launches": [{"memset": "out0"}]})J", "v1");
  ASSERT_TRUE(v1.ok());
  EXPECT_EQ(common::SolutionToJson(*v1)["schema"], "kforge.solution/1")
      << "v1 plans keep their schema and hash";
}

TEST(PlanV2Test, EveryLibraryOpIsDescribedAndDocumented) {
  std::ifstream in(std::string(KFORGE_SOURCE_DIR) + "/docs/formats.md");
  std::string docs((std::istreambuf_iterator<char>(in)), {});
  for (const common::LibraryOp& op : common::LibraryOps()) {
    EXPECT_FALSE(op.what.empty()) << op.name;
    EXPECT_EQ(common::FindLibraryOp(op.name), &op);
    EXPECT_NE(docs.find("| `" + std::string(op.name) + "` | " + std::string(op.what) + " |"),
              std::string::npos)
        << op.name << " is not in docs/formats.md's table of library ops";
  }
}

}  // namespace
}  // namespace kforge::cuda
