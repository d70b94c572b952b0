// `kforge finetune-launch --trainer grpo` rendered, not run: the GRPO config, the grpo_trl.py command
// with its reward servers, the launchers of SFT, and the combinations it refuses.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "fakes/command.h"

namespace kforge::grpo_cli_test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

class FinetuneGrpoCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("kforge-grpo-cli-" + std::to_string(getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "model");
    std::ofstream(dir_ / "model/config.json") << "{}";
  }
  void TearDown() override { fs::remove_all(dir_); }

  /// `kforge finetune-launch ARGS` with stdout and stderr together.
  fakes::CommandResult LaunchGrpo(const std::string& args) const {
    return fakes::RunCommand(std::string(KFORGE_BINARY) + " finetune-launch --model " +
                             (dir_ / "model").string() + " --out " + (dir_ / "run").string() + " " + args +
                             " 2>&1");
  }

  fs::path dir_;
};

TEST_F(FinetuneGrpoCliTest, RendersAGrpoLaunchWhoseRewardIsTheJudgeServer) {
  std::ofstream(dir_ / "tasks.jsonl") << "{\"task_id\": \"demo/relu\"}\n{\"task_id\": \"demo/vector_add\"}\n";
  fakes::CommandResult run = LaunchGrpo(
      "--trainer grpo --reward-server " + (dir_ / "a.sock").string() + ",node2:8765 --token-file " +
      (dir_ / "tasks.jsonl").string() + " --data " + (dir_ / "tasks.jsonl").string() +
      " --num-generations 6 --max-completion-len 2048 --max-steps 5 --dry-run");
  ASSERT_EQ(run.exit_code, 0) << run.out;
  EXPECT_NE(run.out.find("scripts/finetune/grpo_trl.py --model " + (dir_ / "model").string()),
            std::string::npos)
      << run.out;
  EXPECT_NE(run.out.find("--servers " + (dir_ / "a.sock").string() + ",node2:8765"), std::string::npos)
      << run.out;
  EXPECT_NE(run.out.find("--data " + (dir_ / "tasks.jsonl").string()), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("--protocol text"), std::string::npos) << run.out;
  std::ifstream in(dir_ / "run/trl_config.json");
  json config = json::parse(in, nullptr, false);
  ASSERT_TRUE(config.is_object()) << run.out;
  EXPECT_EQ(config["num_generations"], 6);
  EXPECT_EQ(config["max_completion_length"], 2048);
  EXPECT_EQ(config["max_steps"], 5);
  EXPECT_EQ(config["logging_steps"], 1);
  EXPECT_FALSE(config.contains("max_length"));  // an SFTConfig field
  EXPECT_FALSE(config.contains("assistant_only_loss"));

  // The Slurm launcher runs the same trainer on every node.
  fakes::CommandResult slurm = LaunchGrpo(
      "--trainer grpo --reward-server node2:8765 --launcher slurm --nodes 2 "
      "--gpus-per-node 8 --force --dry-run");
  ASSERT_EQ(slurm.exit_code, 0) << slurm.out;
  EXPECT_NE(slurm.out.find("grpo_trl.py"), std::string::npos) << slurm.out;
  EXPECT_NE(slurm.out.find("#SBATCH --nodes=2"), std::string::npos) << slurm.out;
}

TEST_F(FinetuneGrpoCliTest, RefusesGrpoWithoutAServerAndServersWithoutGrpo) {
  fakes::CommandResult no_server = LaunchGrpo("--trainer grpo --dry-run");
  EXPECT_EQ(no_server.exit_code, 2);
  EXPECT_NE(no_server.out.find("--trainer grpo needs --reward-server"), std::string::npos) << no_server.out;
  fakes::CommandResult sft =
      LaunchGrpo("--data " + (dir_ / "model/config.json").string() + " --reward-server node2:8765 --dry-run");
  EXPECT_EQ(sft.exit_code, 2);
  EXPECT_NE(sft.out.find("--reward-server and --token-file need --trainer grpo"), std::string::npos)
      << sft.out;
  fakes::CommandResult axolotl =
      LaunchGrpo("--trainer grpo --backend axolotl --reward-server node2:8765 --dry-run");
  EXPECT_EQ(axolotl.exit_code, 2);
  EXPECT_NE(axolotl.out.find("--trainer grpo runs with --backend trl"), std::string::npos) << axolotl.out;
  fakes::CommandResult no_data = LaunchGrpo("--trainer grpo --reward-server node2:8765 --data " +
                                            (dir_ / "missing.jsonl").string() + " --dry-run");
  EXPECT_EQ(no_data.exit_code, 2);
  EXPECT_NE(no_data.out.find("missing.jsonl: no such file"), std::string::npos) << no_data.out;
}

}  // namespace
}  // namespace kforge::grpo_cli_test
