// The C++ runner reproduces eager PyTorch on the CUDA packages, and CUDA inputs are deterministic.
#include "reference/fixture.h"
#include "reference/parity.h"

namespace kforge::reference {
namespace {

void RequireGpu() {
  if (CudaDeviceCount() == 0) GTEST_SKIP() << "no CUDA device: GPU parity tests skipped";
}

class ParityGpuTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ParityGpuTest, CudaPackageMatchesGolden) {
  RequireGpu();
  testing::CheckParity(GetParam(), Device::Cuda(0));
}

INSTANTIATE_TEST_SUITE_P(Tasks, ParityGpuTest, ::testing::ValuesIn(testing::ParityTaskDirs()),
                         [](const auto& info) { return testing::ParityName(info.param); });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(ParityGpuTest);

TEST(ParityGpuFixtureTest, ExportedFixtureMatchesGolden) {
  RequireGpu();
  std::filesystem::path root = testing::FixtureRoot("cpu,cuda");
  if (root.empty()) GTEST_SKIP() << "could not export the fixture with " << KFORGE_TORCH_PYTHON;
  testing::CheckParity(root / "fixture/affine", Device::Cuda(0));
}

TEST(ParityGpuFixtureTest, CudaInputsAreDeterministicAndComparisonRunsOnDevice) {
  RequireGpu();
  std::filesystem::path root = testing::FixtureRoot("cpu,cuda");
  if (root.empty()) GTEST_SKIP() << "could not export the fixture";
  auto task = common::FindTask(root, "fixture/affine").value();
  auto a = GenerateInputs(task, "default", 9, 0, Device::Cuda(0)).value();
  auto b = GenerateInputs(task, "default", 9, 0, Device::Cuda(0)).value();
  auto c = GenerateInputs(task, "default", 9, 2, Device::Cuda(0)).value();
  EXPECT_EQ(a.Find("x")->device(), Device::Cuda(0));
  EXPECT_TRUE(BitwiseEqual(*a.Find("x"), *b.Find("x")));
  EXPECT_FALSE(BitwiseEqual(*a.Find("x"), *c.Find("x")));
  auto program = ReferenceProgram::Load(task, "default", Device::Cuda(0)).value();
  auto out = program->Run(a).value();
  auto poisoned = AllocateOutputs(task, "default", Device::Cuda(0)).value();
  EXPECT_NE(poisoned.Find("out0")->view().data, nullptr);
  auto cmp = CompareAll(out, poisoned, task.tolerance).value();
  EXPECT_EQ(cmp[0].mismatches, 12);
  EXPECT_EQ(cmp[0].first_mismatch, 0);
  auto same = CompareAll(out, out, task.tolerance).value();
  EXPECT_TRUE(same[0].ok() && same[1].ok());
}

}  // namespace
}  // namespace kforge::reference
