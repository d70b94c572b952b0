// `kforge serve` and `kforge verify --server` as a CI loop runs them (compile-only, no GPU): the same
// verdict lines and exit codes as a cold verify, a refused client on other options, the server's
// exit after its idle timeout with its socket removed.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "fakes/command.h"

namespace kforge {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

/// Verdict lines without their compile time (the only field that differs between two runs).
std::vector<json> Comparable(const std::string& out) {
  std::vector<json> lines = fakes::JsonLines(out);
  for (json& v : lines)
    if (v.contains("compile") && v["compile"].is_object()) v["compile"].erase("ms");
  return lines;
}

TEST(ServeCliTest, VerifyThroughTheServerGivesTheColdVerdictsAndTheServerStopsWhenIdle) {
  const fs::path dir = fs::temp_directory_path() / ("kforge-serve-cli-" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string sock = (dir / "judge.sock").string();
  const std::string kforge = KFORGE_BINARY;
  const std::string tasks = std::string(" --tasks ") + KFORGE_SOURCE_DIR + "/tasks";
  std::ofstream(dir / "broken.json") << R"({"task": "demo/relu", "source": "not cuda", "launches": []})";
  const std::string solutions = std::string(" ") + KFORGE_SOURCE_DIR + "/examples/demo/relu.json " +
                                KFORGE_SOURCE_DIR + "/examples/demo/vector_add.json " + (dir / "broken.json").string();
  // The server in the background; its lines go to a file, its exit code to another.
  fakes::RunCommand("(" + kforge + " serve --compile-only --idle-timeout 3 --socket " + sock + tasks + " 2>" +
                    (dir / "serve.err").string() + "; echo $? >" + (dir / "serve.rc").string() + ") >/dev/null &");
  for (int i = 0; i < 500 && !fs::exists(sock); ++i) usleep(10000);
  ASSERT_TRUE(fs::exists(sock));

  fakes::CommandResult cold = fakes::RunCommand(kforge + " verify --compile-only --seed 11" + tasks + solutions);
  fakes::CommandResult warm =
      fakes::RunCommand(kforge + " verify --server " + sock + " --compile-only --seed 11" + tasks + solutions);
  EXPECT_EQ(cold.exit_code, 1);
  EXPECT_EQ(warm.exit_code, cold.exit_code);
  ASSERT_EQ(Comparable(warm.out).size(), 3u) << warm.out;
  EXPECT_EQ(Comparable(warm.out), Comparable(cold.out));

  fakes::CommandResult refused =
      fakes::RunCommand(kforge + " verify --server " + sock + " --seed 11" + tasks + solutions + " 2>&1");
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_NE(refused.out.find("compile_only: server true, client false"), std::string::npos) << refused.out;

  // The shell creates serve.rc before it writes the code: wait for the code itself.
  std::error_code ec;
  for (int i = 0; i < 1000 && !(fs::file_size(dir / "serve.rc", ec) > 0 && !ec); ++i) usleep(10000);
  std::ifstream rc(dir / "serve.rc");
  int code = -1;
  rc >> code;
  EXPECT_EQ(code, 0);
  EXPECT_FALSE(fs::exists(sock));
  std::ifstream err(dir / "serve.err");
  std::string said((std::istreambuf_iterator<char>(err)), {});
  EXPECT_NE(said.find("serve: listening on " + sock), std::string::npos) << said;
  EXPECT_NE(said.find("; stopping"), std::string::npos) << said;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace kforge
