#include "export/holdout.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "export/record_builder.h"

namespace kforge::exporter {
namespace {

namespace fs = std::filesystem;

class HoldoutTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("kforge-holdout-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(HoldoutTest, IdsFileHoldsOutByIdAndByReferenceSimilarity) {
  std::ofstream(dir_ / "ids.txt")
      << "# evaluation tasks\nkernelbench/level1/19_ReLU\n\n  core/softmax  # trailing\n";
  StatusOr<Holdout> holdout = Holdout::Load(dir_ / "ids.txt", 0.8);
  ASSERT_TRUE(holdout.ok()) << holdout.status().message();
  EXPECT_EQ(holdout->size(), 2u);
  EXPECT_TRUE(holdout->HasId("core/softmax"));
  EXPECT_FALSE(holdout->HasId("core/relu"));
  MinHash renamed = ReferenceMinHash(std::string("# a renamed copy\n\"\"\"With a docstring.\"\"\"\n") +
                                     testing::kReluReference);
  EXPECT_FALSE(holdout->Similar(renamed)) << "an ids file brings no reference text";
  holdout->AddReference(testing::kReluReference);
  EXPECT_TRUE(holdout->Similar(renamed));
  EXPECT_FALSE(
      holdout->Similar(ReferenceMinHash("import torch\nclass Model:\n  def forward(self, a, b):\n"
                                        "    return torch.matmul(a, b) @ a.T + b.sum(dim=0)\n")));
}

TEST_F(HoldoutTest, TaskRootBringsIdsAndReferences) {
  fs::path root = fs::path(KFORGE_SOURCE_DIR) / "tasks";
  StatusOr<Holdout> holdout = Holdout::Load(root, 0.8);
  ASSERT_TRUE(holdout.ok()) << holdout.status().message();
  EXPECT_TRUE(holdout->HasId("demo/relu"));
  EXPECT_TRUE(holdout->HasId("core/softmax"));
  std::ifstream in(root / "demo" / "relu" / "reference.py");
  std::string reference((std::istreambuf_iterator<char>(in)), {});
  EXPECT_TRUE(holdout->Similar(ReferenceMinHash(reference)));
}

TEST_F(HoldoutTest, BadInputIsOneLineNamingTheLine) {
  std::ofstream(dir_ / "bad.txt") << "ok/task\n../escape\n";
  StatusOr<Holdout> bad = Holdout::Load(dir_ / "bad.txt", 0.8);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("bad.txt:2"), std::string::npos) << bad.status().message();
  EXPECT_FALSE(Holdout::Load(dir_ / "missing.txt", 0.8).ok());
  std::ofstream(dir_ / "empty.txt") << "# nothing\n";
  EXPECT_FALSE(Holdout::Load(dir_ / "empty.txt", 0.8).ok());
}

}  // namespace
}  // namespace kforge::exporter
