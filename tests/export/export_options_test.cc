// CheckExportOptions: the checks across export's options, without the command line.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "kforge/export/exporter.h"

namespace kforge::exporter {
namespace {

TEST(ExportOptionsTest, DefaultsAndConsistentOptionsPass) {
  EXPECT_TRUE(CheckExportOptions(ExportOptions()).ok());
  ExportOptions o;
  o.file_format = FileFormat::kParquet;
  o.selection.balance = Balance::kTag;
  o.selection.balance_cap = 10;
  EXPECT_TRUE(CheckExportOptions(o).ok());
}

TEST(ExportOptionsTest, EachContradictionNamesItsFlag) {
  struct Case {
    const char* name;
    std::function<void(ExportOptions&)> change;
    std::string expect;
  };
  const std::vector<Case> cases = {
      {"parquet trajectories",
       [](ExportOptions& o) {
         o.format = Format::kTrajectory;
         o.file_format = FileFormat::kParquet;
       },
       "--file-format parquet takes messages, pairs, turns or preference rows, not trajectory"},
      {"balance cap alone", [](ExportOptions& o) { o.selection.balance_cap = 5; },
       "--balance-cap needs --balance level|tag"},
      {"preference near-dup",
       [](ExportOptions& o) {
         o.format = Format::kPreference;
         o.selection.near_dup = 0.9;
         o.selection.balance = Balance::kLevel;
       },
       "--near-dup selects records; --format preference pairs attempts (--per-task caps the pairs of a "
       "task)"},
      {"preference balance",
       [](ExportOptions& o) {
         o.format = Format::kPreference;
         o.selection.balance = Balance::kLevel;
       },
       "--balance selects records; --format preference pairs attempts (--per-task caps the pairs of a task)"},
      {"kernelbench split",
       [](ExportOptions& o) {
         o.format = Format::kKernelBench;
         o.split = *SplitSpec::Parse("validation=0.1");
       },
       "--split applies to the JSON lines formats, not kernelbench"},
  };
  for (const Case& c : cases) {
    ExportOptions o;
    c.change(o);
    Status s = CheckExportOptions(o);
    ASSERT_FALSE(s.ok()) << c.name;
    EXPECT_EQ(s.message(), c.expect) << c.name;
  }
}

}  // namespace
}  // namespace kforge::exporter
