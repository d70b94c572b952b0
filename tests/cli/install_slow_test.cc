// `cmake --install` gives a relocatable kforge: the installed binary runs generate from another folder
// with the prompts, tasks and teacher cassette of its own PREFIX/share/kforge (a marker added to the
// installed system prompt reaches the record), and its worker library sits in PREFIX/lib/kforge.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "fakes/command.h"

namespace kforge {
namespace {

namespace fs = std::filesystem;

TEST(InstallSlowTest, AnInstalledKforgeUsesItsOwnDataNotTheSourceTree) {
  const fs::path prefix = fs::temp_directory_path() / ("kforge-install-" + std::to_string(getpid()));
  fs::remove_all(prefix);
  const fs::path build = fs::path(KFORGE_BINARY).parent_path();
  fakes::CommandResult installed =
      fakes::RunCommand("cmake --install " + build.string() + " --prefix " + prefix.string() + " 2>&1");
  ASSERT_EQ(installed.exit_code, 0) << installed.out;
  for (const char* file : {"bin/kforge", "bin/kforge-nvrtc", "share/kforge/prompts/system.md",
                           "share/kforge/scripts/export_reference.py", "share/kforge/tasks/demo/relu/task.json",
                           "share/kforge/LICENSE"})
    EXPECT_TRUE(fs::exists(prefix / file)) << file;
  if (fs::exists(build / "libkforge_worker.so")) {
    EXPECT_TRUE(fs::exists(prefix / "lib/kforge/libkforge_worker.so"));
  }

  std::ofstream(prefix / "share/kforge/prompts/system.md", std::ios::app) << "\nInstalled prompt 7f3a.\n";
  const std::string share = (prefix / "share/kforge").string();
  fakes::CommandResult run = fakes::RunCommand(
      "cd / && " + (prefix / "bin/kforge").string() + " generate --tasks " + share + "/tasks --filter demo/relu " +
      "--teacher replay:" + share + "/examples/teacher/demo.jsonl --model replay-demo --max-turns 1 --compile-only " +
      "--out " + (prefix / "run").string() + " 2>&1");
  ASSERT_EQ(run.exit_code, 0) << run.out;
  std::ifstream records(prefix / "run/trajectories.jsonl");
  const std::string text((std::istreambuf_iterator<char>(records)), {});
  EXPECT_NE(text.find("Installed prompt 7f3a."), std::string::npos) << "the source tree's prompts were used";
  // The skill commands take their prompts (and price table) from the same place.
  for (const char* command : {"skill distill", "skill eval"}) {
    fakes::CommandResult help =
        fakes::RunCommand("cd / && " + (prefix / "bin/kforge").string() + " " + command + " --help 2>&1");
    EXPECT_NE(help.out.find(share + "/prompts/prices.json"), std::string::npos) << command << "\n"
                                                                                << help.out;
  }
  fs::remove_all(prefix);
}

}  // namespace
}  // namespace kforge
