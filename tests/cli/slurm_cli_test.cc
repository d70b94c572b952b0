// `kforge slurm generate|verify|tasks-check --dry-run`: the array and merge scripts as written for a
// 64-shard run, the command's arguments quoted, and the flags kforge sets refused after --.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "fakes/command.h"

namespace kforge {
namespace {

namespace fs = std::filesystem;

TEST(SlurmCliTest, DryRunOfA64ShardArray) {
  const fs::path out = fs::temp_directory_path() / ("kforge-slurm-dry-" + std::to_string(getpid()));
  fs::remove_all(out);
  fakes::CommandResult dry = fakes::RunCommand(
      std::string(KFORGE_BINARY) + " slurm generate --array 64 --partition gpu --time 2:00:00 --out " +
      out.string() + " --dry-run -- --tasks build/kb --filter 'kernelbench/level1/*' --samples 4 2>&1");
  ASSERT_EQ(dry.exit_code, 0) << dry.out;
  EXPECT_NE(dry.out.find("#SBATCH --array=0-63\n"), std::string::npos) << dry.out;
  EXPECT_NE(dry.out.find("#SBATCH --partition=gpu\n#SBATCH --time=2:00:00\n"), std::string::npos) << dry.out;
  EXPECT_NE(dry.out.find("#SBATCH --gpus-per-task=1\n"), std::string::npos);
  EXPECT_NE(dry.out.find(" generate --tasks build/kb --filter 'kernelbench/level1/*' --samples 4 "
                         "--shard \"$shard/64\" --out \"$run\""),
            std::string::npos)
      << dry.out;
  EXPECT_NE(dry.out.find("sbatch --parsable --dependency=afterok:<shards job> " + (out / "slurm/merge.sbatch").string()),
            std::string::npos);
  EXPECT_TRUE(fs::exists(out / "slurm/shards.sbatch"));
  EXPECT_TRUE(fs::exists(out / "slurm/merge.sbatch"));
  fs::remove_all(out);

  for (const char* own : {"--out x", "--shard=0/2"}) {
    fakes::CommandResult refused = fakes::RunCommand(std::string(KFORGE_BINARY) + " slurm generate --array 2 --out " +
                                                     out.string() + " --dry-run -- --samples 2 " + own + " 2>&1");
    EXPECT_EQ(refused.exit_code, 2) << own;
    EXPECT_NE(refused.out.find("kforge slurm sets it for each shard"), std::string::npos) << refused.out;
  }
  fakes::CommandResult bad = fakes::RunCommand(std::string(KFORGE_BINARY) + " slurm generate --array 2 --partition 'a b' --out " +
                                               out.string() + " --dry-run -- --samples 2 2>&1");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.out.find("--partition a b: only letters"), std::string::npos) << bad.out;
  fakes::CommandResult spaced = fakes::RunCommand(std::string(KFORGE_BINARY) + " slurm generate --array 2 --out '" +
                                                  out.string() + " x' --dry-run -- --samples 2 2>&1");
  EXPECT_EQ(spaced.exit_code, 2);
  EXPECT_NE(spaced.out.find("an #SBATCH line cannot hold"), std::string::npos) << spaced.out;
  EXPECT_FALSE(fs::exists(out)) << "nothing written on bad usage";
}

TEST(SlurmCliTest, DryRunsOfVerifyAndTasksCheckArrays) {
  const fs::path out = fs::temp_directory_path() / ("kforge-slurm-dry-lines-" + std::to_string(getpid()));
  struct Case {
    const char* subcommand;
    std::string args;
    std::string shard_line;  // what array task i runs
    const char* output;
    const char* summary;
  };
  const Case cases[] = {
      {"verify", "--tasks build/kb --compile-only 'sol a.jsonl'",
       " verify --tasks build/kb --compile-only 'sol a.jsonl' --shard \"$shard/64\" > \"$run/verdicts.jsonl\" 2> "
       "\"$run/stderr.log\"\n",
       "verdicts.jsonl", "grep '^verify: ' \"$run/stderr.log\" > \"$run/summary.txt\""},
      {"tasks-check", "build/kb --filter 'kernelbench/*' --json",
       " tasks check build/kb --filter 'kernelbench/*' --json --shard \"$shard/64\" > \"$run/checks.txt\" 2> "
       "\"$run/stderr.log\"\n",
       "checks.txt", "grep '^tasks check: ' \"$run/stderr.log\" > \"$run/summary.txt\""},
  };
  for (const Case& c : cases) {
    fs::remove_all(out);
    fakes::CommandResult dry = fakes::RunCommand(std::string(KFORGE_BINARY) + " slurm " + c.subcommand +
                                                 " --array 64 --gpus-per-task 2 --out " + out.string() +
                                                 " --dry-run -- " + c.args + " 2>&1");
    ASSERT_EQ(dry.exit_code, 0) << dry.out;
    EXPECT_NE(dry.out.find("#SBATCH --job-name=kforge-" + std::string(c.subcommand) + "\n"), std::string::npos)
        << dry.out;
    EXPECT_NE(dry.out.find("#SBATCH --array=0-63\n"), std::string::npos) << dry.out;
    EXPECT_NE(dry.out.find("#SBATCH --gpus-per-task=2\n"), std::string::npos) << dry.out;
    EXPECT_NE(dry.out.find(c.shard_line), std::string::npos) << dry.out;
    EXPECT_NE(dry.out.find(c.summary), std::string::npos) << dry.out;
    EXPECT_NE(dry.out.find("if [ \"$status\" = 0 ] || [ \"$status\" = 1 ]; then"), std::string::npos) << dry.out;
    // The merge: the shards' lines in shard order (0 to 63, not 0, 1, 10, ...), then their summaries added up.
    EXPECT_NE(dry.out.find("for i in $(seq 0 63); do f=" + out.string() + "/shard-$i/" + c.output), std::string::npos)
        << dry.out;
    EXPECT_NE(dry.out.find("mv " + out.string() + "/" + c.output + ".tmp " + out.string() + "/" + c.output),
              std::string::npos)
        << dry.out;
    EXPECT_NE(dry.out.find("| tee " + out.string() + "/summary.txt"), std::string::npos) << dry.out;
    EXPECT_TRUE(fs::exists(out / "slurm/shards.sbatch"));
    EXPECT_TRUE(fs::exists(out / "slurm/merge.sbatch"));

    // A shard marked done is left out of the array.
    fs::create_directories(out / "shard-5");
    std::ofstream(out / "shard-5/shard.done") << "done\n";
    fakes::CommandResult rerun = fakes::RunCommand(std::string(KFORGE_BINARY) + " slurm " + c.subcommand +
                                                   " --array 64 --out " + out.string() + " --dry-run -- " + c.args +
                                                   " 2>&1");
    EXPECT_NE(rerun.out.find("#SBATCH --array=0-4,6-63\n"), std::string::npos) << rerun.out;

    for (const char* refused : {"--shard 0/2", "--junit x.xml"}) {
      fakes::CommandResult bad = fakes::RunCommand(std::string(KFORGE_BINARY) + " slurm " + c.subcommand +
                                                   " --array 2 --out " + out.string() + " --dry-run -- " + c.args +
                                                   " " + refused + " 2>&1");
      EXPECT_EQ(bad.exit_code, 2) << refused;
      EXPECT_NE(bad.out.find("kforge slurm " + std::string(c.subcommand) + ": "), std::string::npos) << bad.out;
    }
  }
  fs::remove_all(out);
}

TEST(SlurmCliTest, TheMergeAddsUpTheShardsSummaries) {
  // The merge script as written, run by bash over shard folders made by hand (no cluster needed).
  const fs::path out = fs::temp_directory_path() / ("kforge-slurm-merge-" + std::to_string(getpid()));
  fs::remove_all(out);
  fakes::CommandResult dry = fakes::RunCommand(std::string(KFORGE_BINARY) + " slurm verify --array 3 --out " +
                                               out.string() + " --dry-run -- --compile-only x.jsonl 2>&1");
  ASSERT_EQ(dry.exit_code, 0) << dry.out;
  const char* verdicts[] = {"{\"status\":\"ok\"}\n{\"status\":\"ok\"}\n", "{\"status\":\"compile_error\"}\n", ""};
  const char* summaries[] = {"verify: 2 solutions, 2 ok (seed 7)\n", "verify: 1 solution, 1 compile_error (seed 7)\n",
                             "verify: 0 solutions (seed 7)\n"};
  for (int i = 0; i < 3; ++i) {
    fs::create_directories(out / ("shard-" + std::to_string(i)));
    std::ofstream(out / ("shard-" + std::to_string(i)) / "verdicts.jsonl") << verdicts[i];
    std::ofstream(out / ("shard-" + std::to_string(i)) / "summary.txt") << summaries[i];
  }
  fakes::CommandResult merged = fakes::RunCommand("bash " + (out / "slurm/merge.sbatch").string() + " 2>&1");
  ASSERT_EQ(merged.exit_code, 0) << merged.out;
  EXPECT_EQ(merged.out, "verify: 3 solutions, 2 ok, 1 compile_error (3 shards)\n");
  EXPECT_EQ(fakes::RunCommand("cat " + (out / "verdicts.jsonl").string()).out,
            "{\"status\":\"ok\"}\n{\"status\":\"ok\"}\n{\"status\":\"compile_error\"}\n");
  EXPECT_EQ(fakes::RunCommand("cat " + (out / "summary.txt").string()).out, merged.out);
  fs::remove_all(out);
}

}  // namespace
}  // namespace kforge
