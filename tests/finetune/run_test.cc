// The steps of a launch that need no trainer: resolving the model.
#include "kforge/finetune/run.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace kforge::finetune {
namespace {

namespace fs = std::filesystem;

class RunTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("kforge_run_" + std::to_string(getpid()));
    fs::create_directories(dir_ / "model");
    std::ofstream(dir_ / "model/config.json") << "{}";
  }
  void TearDown() override {
    fs::remove_all(dir_);
  }
  fs::path dir_;
};

TEST_F(RunTest, ModelsAreFoldersOrHubIds) {
  auto local = ResolveModel((dir_ / "model").string());
  ASSERT_TRUE(local.ok()) << local.status().message();
  EXPECT_EQ(*local, (dir_ / "model").string());
  const struct {
    std::string model;
    bool ok;
    std::string want;
  } cases[] = {
      {"Qwen/Qwen3-8B", true, "Qwen/Qwen3-8B"},
      {"meta-llama/Llama-3.1-8B-Instruct", true, "meta-llama/Llama-3.1-8B-Instruct"},
      {"./no/such/model", false, "no such folder (and not a hub id like org/name)"},
      {"no-slash", false, "no such folder"},
      {"a/b/c", false, "no such folder"},
      {"../up/model", false, "no such folder"},
      {dir_.string(), false, "no config.json in it"},
      {(dir_ / "model/config.json").string(), false, "not a model folder"},
  };
  for (const auto& c : cases) {
    auto resolved = ResolveModel(c.model);
    ASSERT_EQ(resolved.ok(), c.ok) << c.model;
    if (c.ok) {
      EXPECT_EQ(*resolved, c.want);
    } else {
      EXPECT_NE(resolved.status().message().find("--model " + c.model + ": " + c.want), std::string::npos)
          << resolved.status().message();
    }
  }
}

}  // namespace
}  // namespace kforge::finetune
