// GRPO on a CPU with kforge as the reward: the tiny model of the SFT test (made here, nothing
// downloaded) trains a few steps with `kforge finetune-launch --trainer grpo`, its prompts and rewards
// from a real `kforge serve --compile-only`. Each step's reward must come from the server (its
// completions counted there), be finite, and be logged; the run must save a model that loads.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <regex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fakes/command.h"
#include "fakes/task_root.h"
#include "kforge/common/python.h"

namespace kforge::grpo_slow_test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const fs::path kGrpoSource = KFORGE_SOURCE_DIR;
constexpr const char* kGrpoOffline = "HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 ";

/// The `kforge-train` step lines of a training log (not the last, "done" one), in order.
std::vector<json> GrpoSteps(const fs::path& log) {
  std::ifstream in(log);
  std::vector<json> steps;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("kforge-train ", 0) != 0) continue;
    json step = json::parse(line.substr(13), nullptr, false);
    if (step.is_object() && step.contains("reward")) steps.push_back(step);
  }
  return steps;
}

TEST(FinetuneGrpoSlowTest, TinyModelTrainsGrpoStepsWithRewardsFromARealServer) {
  const fs::path dir = fs::temp_directory_path() / ("kforge_grpo_slow_" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string python = common::FindPython();
  fakes::CommandResult versions =
      fakes::RunCommand(fakes::ShellQuote(python) + " " +
                        (kGrpoSource / "scripts/finetune/sft_trl.py").string() + " --versions");
  ASSERT_EQ(versions.exit_code, 0) << python << " cannot run; run scripts/setup.sh";
  json found = json::parse(versions.out, nullptr, false);
  for (const char* package : {"torch", "transformers", "trl", "datasets", "tokenizers"})
    ASSERT_FALSE(found.value(package, json()).is_null())
        << python << " lacks " << package << ": run scripts/setup.sh --finetune";
  fakes::CommandResult tiny =
      fakes::RunCommand(std::string(kGrpoOffline) + fakes::ShellQuote(python) + " " +
                        (kGrpoSource / "scripts/finetune/make_tiny_model.py").string() + " " +
                        (dir / "tiny").string() + " 2>&1");
  ASSERT_EQ(tiny.exit_code, 0) << tiny.out;

  // The judge: compile-only, on a socket of this test's own.
  const std::string sock = (dir / "judge.sock").string();
  fakes::RunCommand("(" + std::string(KFORGE_BINARY) + " serve --compile-only --idle-timeout 600 --tasks " +
                    (kGrpoSource / "tasks").string() + " --socket " + sock + " 2>" +
                    (dir / "serve.err").string() + ") >/dev/null &");
  for (int i = 0; i < 500 && !fs::exists(sock); ++i) usleep(10000);
  ASSERT_TRUE(fs::exists(sock));

  std::ofstream(dir / "tasks.jsonl") << "{\"task_id\": \"demo/relu\"}\n{\"task_id\": \"demo/vector_add\"}\n";
  std::ofstream(dir / "over.json") << R"({"save_strategy": "no", "temperature": 1.0, "beta": 0.0})";
  const fs::path out = dir / "run";
  constexpr int kSteps = 3;
  fakes::CommandResult trained = fakes::RunCommand(
      std::string(kGrpoOffline) + KFORGE_BINARY + " finetune-launch --trainer grpo --reward-server " + sock +
      " --data " + (dir / "tasks.jsonl").string() + " --model " + (dir / "tiny").string() + " --out " +
      out.string() + " --max-steps " + std::to_string(kSteps) +
      " --batch-size 4 --grad-accum 1 --num-generations 4 --max-completion-len 48 --lr 1e-3 --config " +
      (dir / "over.json").string() + " 2>&1");

  std::ifstream err_in(dir / "serve.err");
  const std::string said((std::istreambuf_iterator<char>(err_in)), {});
  std::smatch pid;
  if (std::regex_search(said, pid, std::regex("\\(pid ([0-9]+)\\)"))) ::kill(std::stoi(pid[1]), SIGTERM);
  for (int i = 0; i < 1000 && fs::exists(sock); ++i) usleep(10000);  // the server removes its socket
  ASSERT_EQ(trained.exit_code, 0) << trained.out;

  const std::vector<json> steps = GrpoSteps(out / "train.log");
  ASSERT_EQ(steps.size(), static_cast<size_t>(kSteps)) << trained.out;
  std::string rewards;
  for (const json& step : steps) {
    ASSERT_TRUE(step["reward"].is_number()) << step;
    EXPECT_TRUE(std::isfinite(step["reward"].get<double>())) << step;
    EXPECT_GE(step["reward"].get<double>(), 0.0);
    int judged = 0;
    for (const auto& [status, n] : step["kforge_statuses"].items()) judged += n.get<int>();
    EXPECT_EQ(judged, 4) << step;  // one prompt's group of 4 completions, each judged by the server
    rewards += (rewards.empty() ? "" : ", ") + step["reward"].dump() + " " + step["kforge_statuses"].dump();
  }
  std::cout << "grpo: reward per step: " << rewards << "\n";

  std::ifstream manifest_in(out / "manifest.json");
  json manifest = json::parse(manifest_in, nullptr, false);
  EXPECT_EQ(manifest["exit_status"], 0);
  EXPECT_EQ(manifest["settings"]["trainer"], "grpo");
  EXPECT_EQ(manifest["settings"]["grpo"]["servers"][0], sock);
  EXPECT_EQ(manifest["trainer_config"]["num_generations"], 4);
  EXPECT_EQ(manifest["result"]["steps"], kSteps);
  EXPECT_EQ(manifest["result"]["judged_by"][sock], 4 * kSteps) << manifest["result"];
  EXPECT_TRUE(fs::exists(out / "model/config.json"));
  std::error_code ec;
  fs::remove_all(dir, ec);
}

}  // namespace
}  // namespace kforge::grpo_slow_test
