#include "kforge/export/split.h"

#include <map>

#include <gtest/gtest.h>

namespace kforge::exporter {
namespace {

TEST(SplitTest, ParsesNamedFractions) {
  struct Case {
    const char* text;
    bool ok;
    const char* error;
  };
  const Case cases[] = {
      {"val=0.05", true, ""},
      {"val=0.05,test=0.1", true, ""},
      {"val", false, "is not NAME=FRACTION"},
      {"val=0", false, "in (0, 1)"},
      {"val=1.5", false, "in (0, 1)"},
      {"val=x", false, "in (0, 1)"},
      {"val=0.6,test=0.5", false, "add up to 1 or more"},
      {"val=0.1,val=0.1", false, "given twice"},
      {"val=0.1,validation=0.1", false, "\"validation\" given twice"},
      {"train=0.1", false,
       "\"train=0.1\": train is what the other splits leave; name those, e.g. validation=0.05"},
      {"train=0.5", false, "train is what the other splits leave"},
      {"a/b=0.1", false, "is not NAME=FRACTION"},
      {"", false, "no split"},
  };
  for (const Case& c : cases) {
    StatusOr<SplitSpec> spec = SplitSpec::Parse(c.text);
    EXPECT_EQ(spec.ok(), c.ok) << c.text;
    if (!c.ok) {
      EXPECT_NE(spec.status().message().find(c.error), std::string::npos) << spec.status().message();
    }
  }
  EXPECT_EQ(SplitSpec::Parse("validation=0.05,test=0.1")->Names(),
            (std::vector<std::string>{"train", "validation", "test"}));
}

TEST(SplitTest, ValIsTheHubsValidationSplit) {
  for (const char* alias : {"val", "valid", "dev", "validation"}) {
    StatusOr<SplitSpec> spec = SplitSpec::Parse(std::string(alias) + "=0.05");
    ASSERT_TRUE(spec.ok()) << alias;
    EXPECT_EQ(spec->Names(), (std::vector<std::string>{"train", "validation"})) << alias;
  }
  SplitSpec val = *SplitSpec::Parse("val=0.3"), validation = *SplitSpec::Parse("validation=0.3");
  for (int i = 0; i < 200; ++i) {
    std::string id = "t/" + std::to_string(i);
    EXPECT_EQ(val.SplitOf(id), validation.SplitOf(id)) << "the alias splits exactly as the name";
  }
}

TEST(SplitTest, SplitsByTaskStablyAndInProportion) {
  SplitSpec spec = *SplitSpec::Parse("val=0.1,test=0.2");
  SplitSpec other = *SplitSpec::Parse("val=0.1,test=0.2");
  std::map<std::string, int> counts;
  for (int i = 0; i < 10000; ++i) {
    std::string id = "suite/task_" + std::to_string(i);
    const std::string& split = spec.SplitOf(id);
    EXPECT_EQ(split, other.SplitOf(id)) << "the same id always lands in the same split";
    ++counts[split];
  }
  EXPECT_NEAR(counts["validation"], 1000, 150);
  EXPECT_NEAR(counts["test"], 2000, 200);
  EXPECT_NEAR(counts["train"], 7000, 250);
  EXPECT_EQ(SplitSpec().SplitOf("anything"), "train");
}

TEST(SplitTest, AGrowingValFractionOnlyMovesTasksIntoVal) {
  SplitSpec small = *SplitSpec::Parse("val=0.05"), large = *SplitSpec::Parse("val=0.1");
  for (int i = 0; i < 2000; ++i) {
    std::string id = "t/" + std::to_string(i);
    if (small.SplitOf(id) == "validation") {
      EXPECT_EQ(large.SplitOf(id), "validation") << id;
    }
  }
}

}  // namespace
}  // namespace kforge::exporter
