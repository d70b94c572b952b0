// Records of tasks the import found unjudgeable are never training data nor counted by report, and
// the field survives a round trip through the record's JSON.
#include <gtest/gtest.h>

#include "export/episode.h"
#include "export/record_builder.h"
#include "kforge/export/filters.h"

namespace kforge::exporter {
namespace {

TEST(UnjudgeableTest, ARecordOfAnUnjudgeableTaskIsLeftOutAndNotCounted) {
  testing::RecordSpec spec;  // correct, 1.5x
  dataset::Trajectory t = testing::MakeRecord(spec);
  EXPECT_FALSE(Unjudged(t));
  EXPECT_EQ(Reject(t, Filters{}), std::nullopt);

  t.task.unjudgeable = "degenerate";
  EXPECT_TRUE(Unjudged(t)) << "a correct kernel on a degenerate task proves nothing";
  EXPECT_EQ(Reject(t, Filters{}), std::optional<std::string_view>("unjudgeable_task"));
  Episode e = Summarize(t);
  EXPECT_TRUE(e.unjudged);

  auto back = dataset::TrajectoryFromJson(dataset::ToJson(t), "record");
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->task.unjudgeable, "degenerate");
  t.task.unjudgeable.clear();
  EXPECT_FALSE(dataset::ToJson(t)["task"].contains("unjudgeable")) << "written only when set";
}

}  // namespace
}  // namespace kforge::exporter
