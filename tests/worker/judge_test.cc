// How the worker judges a candidate's outputs against the reference's, from compare results alone.
#include <gtest/gtest.h>

#include "worker/judge.h"

namespace kforge::worker {
namespace {

reference::CompareResult Result(double rel_l2, double ref_max_abs, double ref_std, int64_t mismatches = 0) {
  reference::CompareResult r;
  r.name = "out0";
  r.numel = 128;
  r.mismatches = mismatches;
  r.first_mismatch = mismatches ? 3 : -1;
  r.rel_l2_err = rel_l2;
  r.ref_max_abs = ref_max_abs;
  r.ref_std = ref_std;
  return r;
}

OutputRules Rules(std::set<std::string> noise = {}) {
  OutputRules rules;  // tolerance 1e-4, 1e-4: the bound is 1e-3
  rules.noise_outputs = std::move(noise);
  return rules;
}

TEST(JudgeOutputsTest, RelativeL2BoundsOutputsWithAScale) {
  common::Checks checks;
  EXPECT_FALSE(CheckOutputs({Result(5e-4, 3.0, 1.0)}, Rules(), checks).has_value());
  auto problem = CheckOutputs({Result(2e-3, 3.0, 1.0)}, Rules(), checks);
  ASSERT_TRUE(problem.has_value());
  EXPECT_EQ(*problem, "out0: relative L2 error 0.002000 exceeds 0.001000");
}

// level1/23_Softmax over 393216 classes: every probability is below atol (max 4e-6), yet they have
// a scale; all zeros differ from them by 100% in relative L2 and must fail.
TEST(JudgeOutputsTest, SmallValuesWithAScaleAreHeldToTheBound) {
  common::Checks checks;
  auto problem = CheckOutputs({Result(1.0, 4e-6, 1e-6)}, Rules(), checks);
  ASSERT_TRUE(problem.has_value());
  EXPECT_NE(problem->find("relative L2 error 1.000000"), std::string::npos);
  EXPECT_FALSE(checks.elements_only.has_value());
}

// level2/23_Conv3d_GroupNorm_Mean: the mean of group-normalised values is zero up to rounding, so
// a correct candidate's rounding noise differs from the reference's by 100% in relative L2. The
// import measured that output to be noise; only then do its elements alone decide.
TEST(JudgeOutputsTest, AnOutputMeasuredToBeNoiseIsJudgedByElementsAlone) {
  common::Checks checks;
  EXPECT_FALSE(CheckOutputs({Result(1.157, 3e-9, 1e-9)}, Rules({"out0"}), checks).has_value());
  EXPECT_TRUE(checks.degenerate_reference.has_value());
  EXPECT_EQ(checks.elements_only, "out0 is rounding noise; judged by elements alone");
  // An element out of tolerance still fails it.
  EXPECT_TRUE(CheckOutputs({Result(1.157, 3e-9, 1e-9, 1)}, Rules({"out0"}), checks).has_value());
  // Not measured as noise: the same figures fail.
  EXPECT_TRUE(CheckOutputs({Result(1.157, 3e-9, 1e-9)}, Rules(), checks).has_value());
  // Near-constant but not zero (a constant 2.5): the relative L2 bound still applies.
  EXPECT_TRUE(CheckOutputs({Result(2e-3, 2.5, 1e-6)}, Rules({"out1"}), checks).has_value());
}

TEST(JudgeOutputsTest, AnExactlyZeroReferenceIsJudgedByElementsAlone) {
  common::Checks checks;
  EXPECT_FALSE(CheckOutputs({Result(1e30, 0.0, 0.0)}, Rules(), checks).has_value());
  EXPECT_EQ(checks.elements_only, "out0 is zero; judged by elements alone");
}

TEST(JudgeRulesTest, NoiseOutputsComeFromTheTasksConditioning) {
  common::Task task;
  task.outputs = {{"out0"}, {"out1"}};
  task.tolerance = {2e-4, 3e-4};
  task.conditioning.emplace();
  task.conditioning->outputs["out1"].noise = true;
  task.conditioning->outputs["out0"].noise = false;
  OutputRules rules = OutputRules::For(task);
  EXPECT_EQ(rules.noise_outputs, std::set<std::string>{"out1"});
  EXPECT_EQ(rules.tol.rtol, 3e-4);
}

}  // namespace
}  // namespace kforge::worker
