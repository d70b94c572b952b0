#include "kforge/cuda/plan_env.h"

#include <gtest/gtest.h>

namespace kforge::cuda {
namespace {

common::Task AxpbyLikeTask() {
  common::Task task;
  task.id = "test/axpby";
  task.symbols = {{"N", 1000}};
  task.constants = {{"alpha", 2.5}, {"block", 256}};
  task.inputs = {{"x", common::DType::kFloat32, {"N"}, {}}};
  task.params = {{"fc.weight", common::DType::kFloat16, {"N", "2"}, {}}};
  task.outputs = {{"out0", common::DType::kFloat32, {"N"}, {}}};
  task.variants = {{"default", {{"N", 1000}}}, {"odd", {{"N", 77}}}};
  return task;
}

TEST(PlanEnvTest, ResolvesShapesPerVariantAndKeepsIntegralConstants) {
  common::Task task = AxpbyLikeTask();
  auto env = PlanEnvFor(task, task.variants[1]);
  ASSERT_TRUE(env.ok()) << env.status().ToString();
  EXPECT_EQ(env->symbols.at("N"), 77);
  EXPECT_EQ(env->symbols.at("block"), 256);
  EXPECT_EQ(env->symbols.count("alpha"), 0u);  // not an integer: unusable in shape expressions
  EXPECT_EQ(env->tensors.at("x").shape, std::vector<int64_t>{77});
  EXPECT_FALSE(env->tensors.at("x").writable);
  EXPECT_EQ(env->tensors.at("fc.weight").shape, (std::vector<int64_t>{77, 2}));
  EXPECT_EQ(env->tensors.at("fc.weight").bytes(), 77u * 2 * 2);
  EXPECT_TRUE(env->tensors.at("out0").writable);
}

// Constants past int64 are not symbols (their cast was undefined behaviour); the largest that fits is.
TEST(PlanEnvTest, HugeConstantsAreNotSymbols) {
  common::Task task = AxpbyLikeTask();
  task.constants = {{"big", 1e300}, {"edge", 9223372036854775808.0}, {"low", -9223372036854775808.0}};
  auto env = PlanEnvFor(task, task.variants[0]);
  ASSERT_TRUE(env.ok()) << env.status().ToString();
  EXPECT_EQ(env->symbols.count("big"), 0u);
  EXPECT_EQ(env->symbols.count("edge"), 0u);
  EXPECT_EQ(env->symbols.at("low"), INT64_MIN);
}

TEST(PlanEnvTest, BadShapeIsAnError) {
  common::Task task = AxpbyLikeTask();
  task.inputs[0].shape = {"M"};
  EXPECT_FALSE(PlanEnvFor(task, task.variants[0]).ok());
}

}  // namespace
}  // namespace kforge::cuda
