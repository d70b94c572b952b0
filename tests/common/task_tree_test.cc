// The one task-tree walk: which folders it reports, which links it follows, where it stops.
#include "kforge/common/task_tree.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace kforge::common {
namespace {

namespace fs = std::filesystem;

class TaskTreeWalkTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("kforge_task_tree_" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  void Task(const fs::path& folder) {
    fs::create_directories(folder);
    std::ofstream(folder / "task.json") << "{}";
  }

  /// The folders the walk reports, relative to `root`, sorted.
  std::vector<std::string> Walk(const fs::path& root) {
    std::vector<std::string> found;
    Status walked = WalkTaskTree(root, [&](const fs::path& folder) {
      found.push_back(folder.lexically_relative(root).string());
      return true;
    });
    EXPECT_TRUE(walked.ok()) << walked.message();
    std::sort(found.begin(), found.end());
    return found;
  }

  fs::path dir_;
};

TEST_F(TaskTreeWalkTest, FindsTaskFoldersAndFollowsLinkedSuitesButNotCycles) {
  const fs::path root = dir_ / "root";
  Task(root);  // a root that is a task folder itself is reported too, as "."
  Task(root / "core/add");
  Task(root / "core/nested/mul");
  fs::create_directories(root / "core/empty");
  Task(dir_ / "elsewhere/kb/level1/1_relu");
  fs::create_directories(dir_ / "elsewhere/kb/x/task.json");
  fs::create_directory_symlink(dir_ / "elsewhere/kb", root / "kb");
  fs::create_directory_symlink(root, root / "core/loop");  // back to the root
  fs::create_directory_symlink(dir_, root / "core/up");    // above the root
  EXPECT_EQ(Walk(root), (std::vector<std::string>{".", "core/add", "core/nested/mul", "kb/level1/1_relu"}));
}

TEST_F(TaskTreeWalkTest, GoesEightFoldersDeepAndNoFurther) {
  const fs::path root = dir_ / "root";
  Task(root / "a/b/c/d/e/f/g/h");    // an id of 8 segments
  Task(root / "a/b/c/d/e/f/g/h/i");  // 9: too deep for an id
  EXPECT_EQ(Walk(root), (std::vector<std::string>{"a/b/c/d/e/f/g/h"}));
}

TEST_F(TaskTreeWalkTest, StopsWhenAskedAndNamesAMissingRoot) {
  const fs::path root = dir_ / "root";
  Task(root / "x/one");
  Task(root / "x/two");
  int visits = 0;
  ASSERT_TRUE(WalkTaskTree(root, [&](const fs::path&) { return ++visits < 1; }).ok());
  EXPECT_EQ(visits, 1);
  Status missing = WalkTaskTree(dir_ / "nope", [](const fs::path&) { return true; });
  EXPECT_EQ(missing.code(), Status::Code::kNotFound);
  EXPECT_EQ(missing.message(), (dir_ / "nope").string() + ": no such task folder");
  std::ofstream(dir_ / "file") << "";
  EXPECT_FALSE(WalkTaskTree(dir_ / "file", [](const fs::path&) { return true; }).ok()) << "a file is no root";
}

}  // namespace
}  // namespace kforge::common
