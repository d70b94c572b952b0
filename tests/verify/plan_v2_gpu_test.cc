// Plan v2 on the GPU: a library op (cuBLAS through LibTorch's linear) followed by a kforge-compiled
// epilogue, a typed fill before atomics, and views that split a tensor between two launches; every
// check of verify still holds, the verdict says where the time went, and bench times such a plan.
#include <filesystem>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "fakes/command.h"
#include "fakes/task_root.h"

namespace kforge::verify {
namespace {

namespace fs = std::filesystem;

const fs::path kExamples = fs::path(KFORGE_SOURCE_DIR) / "examples/plan_v2";
const fs::path kCases = fs::path(KFORGE_SOURCE_DIR) / "tests/verify/plan_v2";
const fs::path kBuiltTasks = fs::path(KFORGE_BINARY).parent_path() / "tasks";

nlohmann::json Verdict(const fs::path& file, const std::string& flags = "") {
  fakes::CommandResult run = fakes::RunCommand(std::string(KFORGE_BINARY) + " verify --seed 11 " + flags +
                                               " --tasks " + kBuiltTasks.string() + " " + file.string());
  auto lines = fakes::JsonLines(run.out);
  return lines.size() == 1 ? lines[0] : nlohmann::json();
}

class PlanV2GpuTest : public testing::Test {
 protected:
  void SetUp() override {
    if (!fakes::HasCudaDevice()) GTEST_SKIP() << "no CUDA device";
    if (!fs::exists(kBuiltTasks / "core/linear_bias_relu/ref.default.cuda.pt2"))
      GTEST_SKIP() << "build the bundled tasks first (scripts/setup.sh on a GPU machine)";
  }
};

TEST_F(PlanV2GpuTest, LibraryOpThenEpilogueKernelPassesAndReportsItsTimeSplit) {
  nlohmann::json v = Verdict(kExamples / "linear_bias_relu_op.json");
  ASSERT_TRUE(v.is_object());
  EXPECT_EQ(v.value("status", ""), "ok") << v.value("message", "");
  EXPECT_EQ(v["checks"].value("guard_regions", ""), "pass");
  EXPECT_EQ(v["checks"].value("inputs_unchanged", ""), "pass");
  const nlohmann::json& split = v["timing"]["plan_split"];
  ASSERT_TRUE(split.is_object()) << v["timing"].dump();
  EXPECT_GT(split.value("ops_ms", 0.0), 0.0);
  EXPECT_GT(split.value("kernels_ms", 0.0), 0.0);
  EXPECT_TRUE(v["checks"].contains("library_ops")) << v["checks"].dump();
  std::printf("linear + epilogue: %s; checks.library_ops %s\n", split.dump().c_str(),
              v["checks"].value("library_ops", "").c_str());
}

TEST_F(PlanV2GpuTest, AnAtenOperatorByItsSchemaNameNeedsAllowOpsAll) {
  nlohmann::json v = Verdict(kCases / "aten_linear_then_relu.json", "--allow-ops all");
  EXPECT_EQ(v.value("status", ""), "ok") << v.value("message", "");
  EXPECT_TRUE(v["timing"].contains("plan_split")) << v["timing"].dump();
  nlohmann::json refused = Verdict(kCases / "aten_linear_then_relu.json");
  EXPECT_EQ(refused.value("status", ""), "invalid_solution") << refused.dump();
  EXPECT_NE(refused.value("message", "").find("needs --allow-ops all"), std::string::npos)
      << refused.value("message", "");
}

TEST_F(PlanV2GpuTest, TypedFillBeforeAtomicsPasses) {
  nlohmann::json v = Verdict(kExamples / "row_max_fill_atomic.json");
  EXPECT_EQ(v.value("status", ""), "ok") << v.value("message", "");
}

TEST_F(PlanV2GpuTest, ViewsSplitATensorBetweenTwoLaunches) {
  nlohmann::json v = Verdict(kExamples / "relu_views.json");
  EXPECT_EQ(v.value("status", ""), "ok") << v.value("message", "");
  EXPECT_FALSE(v["timing"].contains("plan_split")) << "no library steps, no split";
}

TEST_F(PlanV2GpuTest, AnOpWhoseResultDoesNotFitItsOutputIsTheCandidatesLaunchError) {
  nlohmann::json v = Verdict(kCases / "linear_wrong_out_shape.json");
  EXPECT_EQ(v.value("status", ""), "launch_error") << v.dump();
  EXPECT_NE(v.value("message", "").find("linear gives [512, 384], out is [512, 512]"), std::string::npos)
      << v.value("message", "");
}

TEST_F(PlanV2GpuTest, BenchTimesAPlanWithALibraryOp) {
  fakes::CommandResult run =
      fakes::RunCommand(std::string(KFORGE_BINARY) + " bench --max-time 1 --tasks " + kBuiltTasks.string() +
                        " " + (kExamples / "linear_bias_relu_op.json").string());
  auto lines = fakes::JsonLines(run.out);
  ASSERT_EQ(lines.size(), 1u) << run.out;
  EXPECT_EQ(lines[0].value("status", ""), "ok") << lines[0].value("message", "");
  EXPECT_GT(lines[0]["speedup"].value("ratio", 0.0), 0.0);
  std::printf("bench linear + epilogue: candidate %.4f ms, reference %.4f ms, speedup %.2fx\n",
              lines[0]["candidate"].value("median_ms", 0.0), lines[0]["reference"].value("median_ms", 0.0),
              lines[0]["speedup"].value("ratio", 0.0));
}

}  // namespace
}  // namespace kforge::verify
