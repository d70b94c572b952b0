#include "kforge/common/plan_split.h"

#include <gtest/gtest.h>

namespace kforge::common {
namespace {

using nlohmann::json;

TEST(PlanSplitTest, MakeComputesTheFractionOfLibraryOps) {
  EXPECT_EQ(MakePlanSplit(3.0, 1.0), (PlanSplit{3.0, 1.0, 0.25}));
  EXPECT_EQ(MakePlanSplit(0.0, 0.0), (PlanSplit{0.0, 0.0, 0.0})) << "nothing timed, no division by zero";
}

TEST(PlanSplitTest, RoundTripsItsThreeNumbersByteForByte) {
  const std::string line = R"({"kernels_ms":0.09999999999999998,"ops_fraction":0.9,"ops_ms":0.9})";
  auto split = PlanSplitFromJson(json::parse(line), "plan_split");
  ASSERT_TRUE(split.ok()) << split.status().message();
  ASSERT_TRUE(split->has_value());
  EXPECT_EQ(**split, (PlanSplit{0.09999999999999998, 0.9, 0.9}));
  EXPECT_EQ(PlanSplitToJson(**split).dump(), line);
}

TEST(PlanSplitTest, NullIsNoSplit) {
  auto split = PlanSplitFromJson(json(nullptr), "plan_split");
  ASSERT_TRUE(split.ok());
  EXPECT_FALSE(split->has_value());
}

TEST(PlanSplitTest, ErrorsNameTheField) {
  struct Case {
    json value;
    std::string error;
  };
  const Case cases[] = {
      {json::array(), "timing.plan_split: expected an object or null"},
      {{{"kernels_ms", 1.0}, {"ops_ms", 1.0}}, "timing.plan_split.ops_fraction: expected a number"},
      {{{"kernels_ms", "1"}, {"ops_ms", 1.0}, {"ops_fraction", 0.5}},
       "timing.plan_split.kernels_ms: expected a number"},
  };
  for (const Case& c : cases) {
    auto split = PlanSplitFromJson(c.value, "timing.plan_split");
    ASSERT_FALSE(split.ok()) << c.value.dump();
    EXPECT_EQ(split.status().message(), c.error);
  }
}

}  // namespace
}  // namespace kforge::common
