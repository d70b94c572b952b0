// `kforge slurm generate` on a real one-node Slurm cluster (scripts/slurm-local.sh): a replay teacher's
// compile-only run over a 4-task array (one shard holds no task) and its afterok merge; every planned
// record exists exactly once; a rerun submits only the shard whose marker is gone, and none when all
// are done. `kforge slurm verify --compile-only` over bundled solutions on the same kind of cluster: the
// verdicts of every shard in one file and their summaries added up.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "fakes/command.h"
#include "fakes/local_slurm.h"

namespace kforge {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::vector<json> Records(const fs::path& file) {
  std::vector<json> out;
  std::ifstream in(file);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) out.push_back(json::parse(line));
  return out;
}

TEST(SlurmCliSlowTest, AGenerateRunOverAJobArrayIsMergedWithEveryRecordOnce) {
  const fs::path dir = fs::temp_directory_path() / ("kforge-slurm-" + std::to_string(getpid()));
  fs::remove_all(dir);
  // The folder goes after the cluster is stopped (its PID files are in it).
  struct RemoveAfter {
    fs::path dir;
    ~RemoveAfter() { fs::remove_all(dir); }
  } remove_after{dir};
  fakes::LocalSlurm slurm(dir / "cluster");
  ASSERT_EQ(slurm.started().exit_code, 0) << slurm.started().out;
  const std::string source = KFORGE_SOURCE_DIR;
  const fs::path out = dir / "run";
  const std::string command = slurm.Env() + KFORGE_BINARY + " slurm generate --array 4 --gpus-per-task 0 " +
                              "--cpus-per-task 1 --time 10 --out " + out.string() + " -- --tasks " + source +
                              "/tasks --filter 'demo/*' --teacher replay:" + source +
                              "/examples/teacher/demo.jsonl --model replay-demo --max-turns 3 --compile-only 2>&1";
  const auto start = std::chrono::steady_clock::now();
  fakes::CommandResult submitted = fakes::RunCommand(command);
  ASSERT_EQ(submitted.exit_code, 0) << submitted.out;
  EXPECT_NE(submitted.out.find("(shards 0-3 of 4) and merge job"), std::string::npos) << submitted.out;
  ASSERT_TRUE(slurm.WaitUntilIdle(180));
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  std::vector<json> merged = Records(out / "trajectories.jsonl");
  std::set<std::string> ids, tasks;
  for (const json& r : merged) {
    ids.insert(r["id"].get<std::string>());
    tasks.insert(r["task"]["id"].get<std::string>());
  }
  EXPECT_EQ(merged.size(), 3u) << fakes::RunCommand("cat " + out.string() + "/slurm/*.log").out;
  EXPECT_EQ(ids.size(), merged.size()) << "a record twice";
  EXPECT_EQ(tasks, (std::set<std::string>{"demo/relu", "demo/row_sum", "demo/vector_add"}));
  for (int i = 0; i < 4; ++i) EXPECT_TRUE(fs::exists(out / ("shard-" + std::to_string(i)) / "shard.done")) << i;
  EXPECT_NE(fakes::RunCommand("cat " + out.string() + "/report.txt").out.find("3 episodes of 3 tasks"),
            std::string::npos);
  std::cout << "slurm: 4 shards and the merge in " << took << " s\n";

  // Shard 1 lost its marker: only it runs again, into its own folder (its records are already there).
  fs::remove(out / "shard-1/shard.done");
  fakes::CommandResult again = fakes::RunCommand(command);
  ASSERT_EQ(again.exit_code, 0) << again.out;
  EXPECT_NE(again.out.find("(shards 1 of 4)"), std::string::npos) << again.out;
  ASSERT_TRUE(slurm.WaitUntilIdle(180));
  EXPECT_EQ(Records(out / "trajectories.jsonl").size(), 3u);
  EXPECT_TRUE(fs::exists(out / "shard-1/shard.done"));

  fakes::CommandResult done = fakes::RunCommand(command);
  EXPECT_EQ(done.exit_code, 0);
  EXPECT_NE(done.out.find("every one of the 4 shards is done"), std::string::npos) << done.out;
}

TEST(SlurmCliSlowTest, AVerifyBatchOverAJobArrayMergesEveryVerdictOnce) {
  const fs::path dir = fs::temp_directory_path() / ("kforge-slurm-verify-" + std::to_string(getpid()));
  fs::remove_all(dir);
  struct RemoveAfter {
    fs::path dir;
    ~RemoveAfter() { fs::remove_all(dir); }
  } remove_after{dir};
  fakes::LocalSlurm slurm(dir / "cluster");
  ASSERT_EQ(slurm.started().exit_code, 0) << slurm.started().out;
  const std::string source = KFORGE_SOURCE_DIR;
  const fs::path out = dir / "run";
  const std::vector<std::string> solutions = {source + "/examples/demo/relu.json", source + "/examples/demo/row_sum.json",
                                              source + "/examples/demo/vector_add.json",
                                              source + "/examples/broken/relu_missing_semicolon.json"};
  std::string command = slurm.Env() + KFORGE_BINARY + " slurm verify --array 3 --gpus-per-task 0 --cpus-per-task 1 " +
                        "--time 10 --out " + out.string() + " -- --tasks " + source + "/tasks --compile-only";
  for (const std::string& s : solutions) command += " " + s;
  const auto start = std::chrono::steady_clock::now();
  fakes::CommandResult submitted = fakes::RunCommand(command + " 2>&1");
  ASSERT_EQ(submitted.exit_code, 0) << submitted.out;
  EXPECT_NE(submitted.out.find("(shards 0-2 of 3) and merge job"), std::string::npos) << submitted.out;
  ASSERT_TRUE(slurm.WaitUntilIdle(180));
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  std::vector<json> verdicts = Records(out / "verdicts.jsonl");
  ASSERT_EQ(verdicts.size(), solutions.size()) << fakes::RunCommand("cat " + out.string() + "/slurm/*.log").out;
  std::set<std::string> judged;
  for (const json& v : verdicts) {
    judged.insert(v["solution"].get<std::string>());
    const bool broken = v["solution"].get<std::string>().find("broken/") != std::string::npos;
    EXPECT_EQ(v["status"], broken ? "compile_error" : "ok") << v.dump();
  }
  EXPECT_EQ(judged, std::set<std::string>(solutions.begin(), solutions.end()));
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(fs::exists(out / ("shard-" + std::to_string(i)) / "shard.done")) << i;
  const std::string summary = fakes::RunCommand("cat " + out.string() + "/summary.txt").out;
  EXPECT_EQ(summary, "verify: 4 solutions, 1 compile_error, 3 ok (3 shards)\n");
  std::cout << "slurm verify: 3 shards and the merge in " << took << " s: " << summary;
}

}  // namespace
}  // namespace kforge
