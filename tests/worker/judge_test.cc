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

TEST(JudgeOutputsTest, RelativeL2BoundsOutputsWithAScale) {
  common::Tolerance tol;  // 1e-4, 1e-4: the bound is 1e-3
  nlohmann::json checks;
  EXPECT_FALSE(JudgeOutputs({Result(5e-4, 3.0, 1.0)}, tol, checks).has_value());
  auto problem = JudgeOutputs({Result(2e-3, 3.0, 1.0)}, tol, checks);
  ASSERT_TRUE(problem.has_value());
  EXPECT_EQ(*problem, "out0: relative L2 error 0.002000 exceeds 0.001000");
}

// level2/23_Conv3d_GroupNorm_Mean: the mean of group-normalised values is zero up to rounding, so
// a correct candidate's rounding noise differs from the reference's by 100% in relative L2.
TEST(JudgeOutputsTest, AReferenceThatIsZeroWithinAtolIsJudgedByElementsAlone) {
  common::Tolerance tol;
  nlohmann::json checks;
  EXPECT_FALSE(JudgeOutputs({Result(1.157, 3e-9, 1e-9)}, tol, checks).has_value());
  EXPECT_TRUE(checks.contains("degenerate_reference"));
  // An element out of tolerance still fails it.
  EXPECT_TRUE(JudgeOutputs({Result(1.157, 3e-9, 1e-9, 1)}, tol, checks).has_value());
  // Near-constant but not zero (a constant 2.5): the relative L2 bound still applies.
  EXPECT_TRUE(JudgeOutputs({Result(2e-3, 2.5, 1e-6)}, tol, checks).has_value());
}

}  // namespace
}  // namespace kforge::worker
