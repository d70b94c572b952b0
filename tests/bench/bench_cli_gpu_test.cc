// `kforge bench` end to end on the GPU: a correct kernel is timed against its reference, a kernel
// that degrades after its first launches is caught by the checks on timed runs, and a reference is
// timed alone.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "fakes/command.h"

namespace kforge::bench {
namespace {

namespace fs = std::filesystem;

const fs::path kSourceDir = KFORGE_SOURCE_DIR;
const fs::path kTasks = fs::path(KFORGE_BINARY).parent_path() / "tasks";

struct BenchRun {
  std::vector<nlohmann::json> records;
  int exit_code = -1;
};

BenchRun Bench(const std::string& args) {
  std::string command =
      std::string(KFORGE_BINARY) + " bench --tasks " + kTasks.string() + " --seed 7 " + args + " 2>/dev/null";
  kforge::fakes::CommandResult result = kforge::fakes::RunCommand(command);
  return {kforge::fakes::JsonLines(result.out), result.exit_code};
}

bool HasCudaDevice() { return std::system("nvidia-smi -L >/dev/null 2>&1") == 0; }

TEST(BenchCliGpuTest, CorrectKernelIsTimedAndDegradingKernelIsCaught) {
  if (!HasCudaDevice()) GTEST_SKIP() << "no CUDA device";
  BenchRun run = Bench((kSourceDir / "examples/demo/relu.json").string() + " " +
                       (kSourceDir / "tests/bench/adversarial/relu_degrades.json").string());
  ASSERT_EQ(run.records.size(), 2u);
  EXPECT_EQ(run.exit_code, 1);

  const nlohmann::json& good = run.records[0];
  ASSERT_EQ(good.value("status", ""), "ok") << good.dump();
  EXPECT_GE(good["candidate"]["count"].get<int>(), 10);
  EXPECT_GE(good["reference"]["count"].get<int>(), 10);
  double candidate = good["candidate"]["median_ms"].get<double>();
  double reference = good["reference"]["median_ms"].get<double>();
  EXPECT_GT(candidate, 0);
  EXPECT_NEAR(good["speedup"]["ratio"].get<double>(), reference / candidate, 1e-9);
  EXPECT_LE(good["speedup"]["ci"][0].get<double>(), good["speedup"]["ratio"].get<double>());
  EXPECT_GE(good["speedup"]["ci"][1].get<double>(), good["speedup"]["ratio"].get<double>());
  EXPECT_GT(good["roofline"]["achieved_gbps"].get<double>(), 0);

  const nlohmann::json& bad = run.records[1];
  EXPECT_EQ(bad.value("status", ""), "mismatch") << bad.dump();
  EXPECT_NE(bad.value("message", "").find("timed run"), std::string::npos) << bad.dump();
}

TEST(BenchCliGpuTest, ReferenceAlone) {
  if (!HasCudaDevice()) GTEST_SKIP() << "no CUDA device";
  BenchRun run = Bench("--hot --reference core/softmax demo/relu no/such_task");
  ASSERT_EQ(run.records.size(), 3u);
  EXPECT_EQ(run.exit_code, 1);
  for (int i = 0; i < 2; ++i) {
    const nlohmann::json& r = run.records[i];
    ASSERT_EQ(r.value("status", ""), "ok") << r.dump();
    EXPECT_TRUE(r["candidate"].is_null());
    EXPECT_GT(r["reference"]["median_ms"].get<double>(), 0);
    EXPECT_EQ(r.value("mode", ""), "hot");
  }
  EXPECT_EQ(run.records[2].value("status", ""), "invalid_solution");
}

}  // namespace
}  // namespace kforge::bench
