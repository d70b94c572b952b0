// verify at KernelBench's sizes: a task with more than 2^31 elements per tensor (8.6 GB in and out)
// is judged within its memory budget, a mismatch past 2^31 is found with its 64-bit index, and a task
// larger than the device is a harness_error before anything is allocated.
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "fakes/command.h"
#include "fakes/task_root.h"

namespace kforge::verify {
namespace {

namespace fs = std::filesystem;

const fs::path kCases = fs::path(KFORGE_SOURCE_DIR) / "tests/verify/large";
const fs::path kBuiltTasks = fs::path(KFORGE_BINARY).parent_path() / "tasks";
constexpr int64_t kElements = (int64_t{1} << 31) + 4096;

using fakes::HasCudaDevice;

/// The verdict of one solution file, and verify's exit code.
nlohmann::json VerifyOne(const std::string& file, int& exit_code) {
  fakes::CommandResult run = fakes::RunCommand(std::string(KFORGE_BINARY) + " verify --seed 7 --tasks " +
                                               kBuiltTasks.string() + " " + (kCases / file).string());
  exit_code = run.exit_code;
  auto lines = fakes::JsonLines(run.out);
  return lines.size() == 1 ? lines[0] : nlohmann::json();
}

class LargeTensorGpuTest : public testing::Test {
 protected:
  void SetUp() override {
    if (!HasCudaDevice()) GTEST_SKIP() << "no CUDA device";
    if (!fs::exists(kBuiltTasks / "large/relu_2g/task.json"))
      GTEST_SKIP() << "build the test tasks first: kforge tasks build tests/verify/tasks --out build/tasks --device cuda";
  }
};

TEST_F(LargeTensorGpuTest, CorrectKernelPassesWithinTheBudget) {
  int exit_code = -1;
  nlohmann::json verdict = VerifyOne("relu_2g_ok.json", exit_code);
  ASSERT_TRUE(verdict.is_object());
  EXPECT_EQ(verdict.value("status", ""), "ok") << verdict.value("message", "");
  EXPECT_EQ(exit_code, 0);
  const nlohmann::json& memory = verdict["memory"];
  ASSERT_TRUE(memory.is_object()) << verdict.dump();
  EXPECT_EQ(memory.value("footprint_bytes", int64_t{0}), 2 * 4 * kElements);
  int64_t peak = memory.value("peak_device_bytes", int64_t{-1});
  EXPECT_GT(peak, 2 * 4 * kElements) << "inputs and both outputs are live at the comparison";
  EXPECT_LE(peak, memory.value("budget_bytes", int64_t{0})) << memory.dump();
  EXPECT_EQ(verdict["trials"][0]["outputs"][0].value("numel", int64_t{0}), kElements);
}

TEST_F(LargeTensorGpuTest, MismatchPastTwoToTheThirtyOneIsFoundWithItsIndex) {
  int exit_code = -1;
  nlohmann::json verdict = VerifyOne("relu_2g_wrong_past_2g.json", exit_code);
  ASSERT_TRUE(verdict.is_object());
  EXPECT_EQ(verdict.value("status", ""), "mismatch") << verdict.value("message", "");
  EXPECT_EQ(exit_code, 1);
  const nlohmann::json& output = verdict["trials"][0]["outputs"][0];
  EXPECT_EQ(output.value("mismatches", int64_t{0}), 1) << output.dump();
  EXPECT_EQ(output.value("first_mismatch", int64_t{0}), int64_t{2147483748}) << output.dump();
}

TEST_F(LargeTensorGpuTest, TaskLargerThanTheDeviceIsAHarnessErrorBeforeAnyAllocation) {
  int exit_code = -1;
  nlohmann::json verdict = VerifyOne("too_big.json", exit_code);
  ASSERT_TRUE(verdict.is_object());
  EXPECT_EQ(verdict.value("status", ""), "harness_error") << verdict.dump();
  EXPECT_NE(verdict.value("message", "").find("needs"), std::string::npos) << verdict.value("message", "");
  EXPECT_EQ(exit_code, 2) << "kforge's own failures exit 2";
  EXPECT_TRUE(verdict["trials"].empty());
}

}  // namespace
}  // namespace kforge::verify
