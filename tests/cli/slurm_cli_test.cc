// `kforge slurm generate --dry-run`: the array and merge scripts as written for a 64-shard run, the
// generate arguments quoted, and the flags kforge sets refused after --.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
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

}  // namespace
}  // namespace kforge
