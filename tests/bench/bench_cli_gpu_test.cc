// `kforge bench` end to end on the GPU: a correct kernel is timed against its reference over distinct
// input draws, state kept between runs never pays, every timed run is checked, and a reference is
// timed alone.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
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

TEST(BenchCliGpuTest, CorrectKernelIsTimedAndDegradingKernelsAreHarmless) {
  if (!HasCudaDevice()) GTEST_SKIP() << "no CUDA device";
  BenchRun run = Bench((kSourceDir / "examples/demo/relu.json").string() + " " +
                       (kSourceDir / "tests/bench/adversarial/relu_degrades.json").string());
  ASSERT_EQ(run.records.size(), 2u);
  EXPECT_EQ(run.exit_code, 0);

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
  EXPECT_GE(good.value("input_draws", 0), 2) << "timed runs rotate over distinct draws";

  // Its launch counter is restored before every run, so it never reaches the launch where it stops.
  const nlohmann::json& degrading = run.records[1];
  EXPECT_EQ(degrading.value("status", ""), "ok") << degrading.dump();
}

// Every timed run is checked against its own draw: a kernel right on some draws only is caught even
// without the verification before the timing.
TEST(BenchCliGpuTest, AKernelRightOnSomeDrawsIsCaughtOnATimedRun) {
  if (!HasCudaDevice()) GTEST_SKIP() << "no CUDA device";
  BenchRun run = Bench("--no-verify " + (kSourceDir / "tests/bench/adversarial/relu_some_draws.json").string());
  ASSERT_EQ(run.records.size(), 1u);
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_EQ(run.records[0].value("status", ""), "mismatch") << run.records[0].dump();
  EXPECT_NE(run.records[0].value("message", "").find("timed run"), std::string::npos) << run.records[0].dump();
}

// A kernel that keeps its output inside its own input and replays it on the next run over the same
// buffers: the globals hold nothing, so only the check that every timed run leaves its inputs as they
// were catches it (without the verification, which would refuse it first).
TEST(BenchCliGpuTest, AKernelThatStoresItsOutputInItsInputIsCaughtOnATimedRun) {
  if (!HasCudaDevice()) GTEST_SKIP() << "no CUDA device";
  BenchRun run = Bench("--no-verify " + (kSourceDir / "tests/bench/adversarial/row_sum_input_stash.json").string());
  ASSERT_EQ(run.records.size(), 1u);
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_EQ(run.records[0].value("status", ""), "mismatch") << run.records[0].dump();
  EXPECT_NE(run.records[0].value("message", "").find("modified input \"x\" on timed run"), std::string::npos)
      << run.records[0].dump();
}

// Correct kernels that cheat only on speed (tests/bench/timing_cheats/): a memo keyed by an input
// fingerprint, a launch counter, a relaunch flag. None is timed faster than the honest kernel it wraps
// (allowing run-to-run noise), and a kernel whose own counter resets itself runs as it should.
TEST(BenchCliGpuTest, TimingCheatsAreNeverFasterThanTheirHonestKernel) {
  if (!HasCudaDevice()) GTEST_SKIP() << "no CUDA device";
  const fs::path dir = kSourceDir / "tests/bench/timing_cheats";
  nlohmann::json manifest = nlohmann::json::parse(std::ifstream(dir / "manifest.json"));
  std::string files;
  for (const nlohmann::json& row : manifest) files += " " + (dir / row["file"].get<std::string>()).string();
  BenchRun run = Bench(files);
  ASSERT_EQ(run.records.size(), manifest.size());
  EXPECT_EQ(run.exit_code, 0);
  double honest_ms = 0;
  for (size_t i = 0; i < manifest.size(); ++i) {
    const nlohmann::json& r = run.records[i];
    ASSERT_EQ(r.value("status", ""), "ok") << manifest[i]["file"] << ": " << r.dump();
    if (manifest[i]["role"] == "honest") honest_ms = r["candidate"]["median_ms"].get<double>();
  }
  ASSERT_GT(honest_ms, 0);
  for (size_t i = 0; i < manifest.size(); ++i) {
    if (manifest[i]["role"] != "cheat") continue;
    const double ms = run.records[i]["candidate"]["median_ms"].get<double>();
    EXPECT_GT(ms, honest_ms / 1.25) << manifest[i]["file"] << " (" << manifest[i]["why"].get<std::string>()
                                    << ") timed at " << ms << " ms against the honest " << honest_ms << " ms";
  }
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
