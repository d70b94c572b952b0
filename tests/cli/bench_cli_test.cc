// `kforge bench` end to end on the CPU: usage errors exit 2 with one line, bad solutions and
// unknown tasks get their own records, and without a GPU every record says no_gpu (exit 2).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fakes/command.h"
#include "fakes/special_files.h"

namespace {

namespace fs = std::filesystem;

struct BenchRun {
  int exit_code = -1;
  std::vector<nlohmann::json> records;
  std::string stderr_text;
};

BenchRun Bench(const std::string& args) {
  fs::path err_path = fs::temp_directory_path() / ("kforge_bench_cli_" + std::to_string(getpid()));
  std::string command = std::string(KFORGE_BINARY) + " bench --tasks " + KFORGE_SOURCE_DIR + "/tasks " +
                        args + " 2>" + err_path.string();
  kforge::fakes::CommandResult result = kforge::fakes::RunCommand(command);
  BenchRun run;
  run.exit_code = result.exit_code;
  run.records = kforge::fakes::JsonLines(result.out);
  std::ifstream err(err_path);
  run.stderr_text.assign(std::istreambuf_iterator<char>(err), {});
  fs::remove(err_path);
  return run;
}

bool HasGpu() { return std::system("nvidia-smi -L >/dev/null 2>&1") == 0; }

TEST(BenchCliTest, UsageErrorsExitTwoWithOneLine) {
  const std::string softmax = std::string(KFORGE_SOURCE_DIR) + "/examples/core/softmax.json";
  struct Case {
    std::string args;
    std::string says;
  } cases[] = {
      {"", "give solutions, or --reference"},
      {softmax + " --reference core/softmax", "not both"},
      {"--max-noise abc " + softmax, "--max-noise"},
      {"--max-noise -1% " + softmax, "--max-noise"},
      {"--hot --cold " + softmax, "excludes"},
      {"--devices x " + softmax, "--devices"},
      {"--min-samples 0 " + softmax, "min-samples"},
      {"--reference core/matmul " + softmax, "a file, not a task id (solutions and --reference do not mix)"},
      {"--reference core/matmul softmax.json", "--reference: malformed task id \"softmax.json\""},
      {"--reference ../core/matmul", "malformed task id"},
      {"--max-time nan " + softmax, "--max-time"},
      {"--max-noise inf% " + softmax, "--max-noise"},
      {"--kernel-timeout nan " + softmax, "--kernel-timeout"},
      {"--seed -1 " + softmax, "--seed"},
      {"--arch sm_20 " + softmax, "--arch \"sm_20\""},
      {softmax + " " + softmax + ".missing", "softmax.json.missing: no such file"},
  };
  for (const Case& c : cases) {
    BenchRun run = Bench(c.args);
    EXPECT_EQ(run.exit_code, 2) << c.args;
    EXPECT_TRUE(run.records.empty()) << c.args;
    EXPECT_NE(run.stderr_text.find(c.says), std::string::npos) << c.args << "\n" << run.stderr_text;
    EXPECT_EQ(std::count(run.stderr_text.begin(), run.stderr_text.end(), '\n'), 1) << c.args << "\n"
                                                                                   << run.stderr_text;
  }
}

TEST(BenchCliTest, BadSolutionAndUnknownTaskGetRecords) {
  fs::path bad = fs::temp_directory_path() / ("kforge_bench_bad_" + std::to_string(getpid()) + ".json");
  std::ofstream(bad) << "{\"schema\": \"kforge.solution/1\", \"task\": \"core/softmax\", \"source\": 3}";
  BenchRun run = Bench(bad.string());
  fs::remove(bad);
  ASSERT_EQ(run.records.size(), 1u) << run.stderr_text;
  EXPECT_EQ(run.records[0]["schema"], "kforge.bench/1");
  EXPECT_EQ(run.records[0]["status"], "invalid_solution");
  EXPECT_NE(run.records[0]["message"].get<std::string>().find("source"), std::string::npos);
  EXPECT_TRUE(run.records[0]["candidate"].is_null());
  EXPECT_EQ(run.exit_code, 1);

  run = Bench("--reference no/such_task");
  ASSERT_EQ(run.records.size(), 1u) << run.stderr_text;
  EXPECT_EQ(run.records[0]["task"], "no/such_task");
  EXPECT_EQ(run.records[0]["status"], "invalid_solution");
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.stderr_text.find("bench: 0 timed of 1"), std::string::npos) << run.stderr_text;
}

TEST(BenchCliTest, JUnitIntoADeviceOrAFifoLeavesItWhatItWas) {
  const fs::path dir = fs::temp_directory_path() / ("kforge_bench_junit_" + std::to_string(getpid()));
  fs::create_directories(dir);
  const std::string bad = (dir / "bad.json").string();
  std::ofstream(bad) << "{\"schema\": \"kforge.solution/1\", \"task\": \"core/softmax\", \"source\": 3}";
  if (!kforge::fakes::MakeNullDevice(dir / "null")) {
    fs::remove_all(dir);
    GTEST_SKIP() << "mknod is not allowed here (it needs CAP_MKNOD)";
  }
  BenchRun run = Bench("--junit " + (dir / "null").string() + " " + bad);
  EXPECT_EQ(run.exit_code, 1) << run.stderr_text;
  EXPECT_TRUE(kforge::fakes::IsNullDevice(dir / "null")) << "the device was replaced by a file";
  std::string xml;
  {
    kforge::fakes::FifoReader reader(dir / "fifo");
    ASSERT_TRUE(reader.ok());
    run = Bench("--junit " + (dir / "fifo").string() + " " + bad);
    xml = reader.Finish();
  }
  EXPECT_EQ(run.exit_code, 1) << run.stderr_text;
  EXPECT_TRUE(kforge::fakes::IsFifo(dir / "fifo")) << "the FIFO was replaced by a file";
  EXPECT_NE(xml.find("<testsuite name=\"kforge bench\""), std::string::npos) << xml;
  fs::remove_all(dir);
}

TEST(BenchCliTest, WithoutGpuEveryRecordSaysNoGpu) {
  if (HasGpu()) GTEST_SKIP() << "a GPU is present (the GPU tests cover this path)";
  BenchRun run = Bench(std::string(KFORGE_SOURCE_DIR) + "/examples/core/softmax.json");
  EXPECT_EQ(run.exit_code, 2);
  ASSERT_EQ(run.records.size(), 1u);
  EXPECT_EQ(run.records[0]["status"], "no_gpu");
  EXPECT_EQ(run.records[0]["task"], "core/softmax");
  EXPECT_FALSE(run.records[0]["solution_hash"].get<std::string>().empty());

  run = Bench("--reference core/gelu");
  EXPECT_EQ(run.exit_code, 2);
  ASSERT_EQ(run.records.size(), 1u);
  EXPECT_EQ(run.records[0]["status"], "no_gpu");
}

}  // namespace
