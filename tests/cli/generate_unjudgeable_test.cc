// `kforge generate` leaves out tasks the import found unjudgeable (degenerate, nondeterministic,
// ill-conditioned) and says how many; --include-degenerate runs them, and their records say why.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fakes/command.h"
#include "fakes/task_root.h"

namespace kforge {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

class GenerateUnjudgeableTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("kforge-unjudgeable-" + std::to_string(getpid()));
    fs::remove_all(dir_);
    const fs::path demo = fs::path(KFORGE_SOURCE_DIR) / "tasks/demo";
    for (const char* name : {"relu", "row_sum"}) {
      fs::create_directories(dir_ / "tasks/demo" / name);
      fs::copy_file(demo / name / "reference.py", dir_ / "tasks/demo" / name / "reference.py");
      json task = json::parse(std::ifstream(demo / name / "task.json"));
      if (std::string(name) == "row_sum")
        task["behaviour"] = {{"variant", "default"}, {"outputs", {{"out0", "zero"}}}, {"rerun_mismatches", 0},
                             {"degenerate", true}, {"nondeterministic", false}};
      std::ofstream(dir_ / "tasks/demo" / name / "task.json") << task.dump(2);
    }
    std::ofstream(dir_ / "teacher.sh")
        << "cat >/dev/null\ncat <<'EOF'\n```cuda\nextern \"C\" __global__ void relu(const float* x, float* y, "
           "long long n) {\n  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
           "  if (i < n) y[i] = fmaxf(x[i], 0.0f);\n}\n```\n```json\n{\"launches\": [{\"kernel\": \"relu\", "
           "\"grid\": [\"cdiv(numel(x), 256)\"], \"block\": [256], \"args\": [\"x\", \"out0\", "
           "\"i64:numel(x)\"]}]}\n```\nEOF\n";
  }
  void TearDown() override { fs::remove_all(dir_); }

  /// Runs generate into `out`; returns (exit code, stderr) and fills `records`.
  std::pair<int, std::string> Generate(const std::string& out, const std::string& extra, std::vector<json>& records) {
    const std::string err = (dir_ / (out + ".err")).string();
    std::string command = std::string(KFORGE_BINARY) + " generate --tasks " + fakes::ShellQuote((dir_ / "tasks").string()) +
                          " --compile-only --no-cache --max-turns 1 --out " + fakes::ShellQuote((dir_ / out).string()) +
                          " --teacher " + fakes::ShellQuote("exec:sh " + (dir_ / "teacher.sh").string()) + " " + extra +
                          " 2>" + fakes::ShellQuote(err);
    int code = fakes::RunCommand(command).exit_code;
    std::ifstream in(dir_ / out / "trajectories.jsonl");
    for (std::string line; std::getline(in, line);)
      if (!line.empty()) records.push_back(json::parse(line));
    std::ifstream e(err);
    return {code, std::string(std::istreambuf_iterator<char>(e), {})};
  }

  fs::path dir_;
};

TEST_F(GenerateUnjudgeableTest, DegenerateTasksAreLeftOutUnlessAskedFor) {
  std::vector<json> records;
  auto [code, err] = Generate("run", "", records);
  ASSERT_EQ(code, 0) << err;
  ASSERT_EQ(records.size(), 1u) << err;
  EXPECT_EQ(records[0]["task"]["id"], "demo/relu");
  EXPECT_FALSE(records[0]["task"].contains("unjudgeable"));
  EXPECT_NE(err.find("left out 1 task that no kernel can be judged on (1 degenerate); --include-degenerate runs them"),
            std::string::npos)
      << err;

  records.clear();
  std::tie(code, err) = Generate("all", "--include-degenerate", records);
  ASSERT_EQ(code, 0) << err;
  ASSERT_EQ(records.size(), 2u) << err;
  EXPECT_EQ(err.find("left out"), std::string::npos) << err;
  for (const json& r : records)
    if (r["task"]["id"] == "demo/row_sum") {
      EXPECT_EQ(r["task"]["unjudgeable"], "degenerate");
    }
}

}  // namespace
}  // namespace kforge
