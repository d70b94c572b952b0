// Which inputs each trial of a check draws (docs/worker.md, "Trials").
#include "worker/trial_plan.h"

#include <gtest/gtest.h>

namespace kforge::worker {
namespace {

TEST(TrialPlanTest, WithoutDomainsTrialsCycleThroughTheDistributions) {
  for (int t = 0; t < 5; ++t) {
    TrialDraw d = TrialDrawFor(0, t, 5, 0);
    EXPECT_EQ(d.dist, t % 3);
    EXPECT_EQ(d.domain, -1);
  }
  EXPECT_EQ(TrialDrawFor(1, 0, 5, 0).domain, -1);  // another variant: its task's own init
}

TEST(TrialPlanTest, DomainsTakeTheLastTrialsAndEveryOtherVariant) {
  EXPECT_EQ(TrialDrawFor(0, 0, 5, 1).domain, -1);
  EXPECT_EQ(TrialDrawFor(0, 3, 5, 1).domain, -1);
  TrialDraw last = TrialDrawFor(0, 4, 5, 1);
  EXPECT_EQ(last.domain, 0);
  EXPECT_EQ(last.dist, 0);
  EXPECT_EQ(TrialDrawFor(0, 3, 5, 2).domain, 0);
  EXPECT_EQ(TrialDrawFor(0, 4, 5, 2).domain, 1);
  EXPECT_EQ(TrialDrawFor(1, 0, 5, 2).domain, 0);
  // One trial: it keeps the task's own init.
  EXPECT_EQ(TrialDrawFor(0, 0, 1, 1).domain, -1);
}

TEST(TrialPlanTest, ADomainReplacesOnlyTheInitsItNames) {
  common::Task task;
  task.inputs = {{"x"}, {"y"}};
  task.inputs[1].init.dist = common::InitSpec::Dist::kRand;
  common::InputDomain domain{"signed", {}};
  domain.inputs["x"].dist = common::InitSpec::Dist::kUniform;
  domain.inputs["x"].low = -1.5;
  domain.inputs["x"].high = 2.5;
  common::Task drawn = WithDomain(task, domain);
  EXPECT_EQ(drawn.inputs[0].init.dist, common::InitSpec::Dist::kUniform);
  EXPECT_DOUBLE_EQ(drawn.inputs[0].init.low, -1.5);
  EXPECT_EQ(drawn.inputs[1].init.dist, common::InitSpec::Dist::kRand);
}

}  // namespace
}  // namespace kforge::worker
