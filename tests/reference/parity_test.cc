// The C++ runner reproduces eager PyTorch: every task with built artifacts, on the CPU package.
#include "reference/parity.h"
#include "reference/fixture.h"

namespace kforge::reference {
namespace {

class ParityTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ParityTest, CpuPackageMatchesGolden) { testing::CheckParity(GetParam(), Device::Cpu()); }

INSTANTIATE_TEST_SUITE_P(Tasks, ParityTest, ::testing::ValuesIn(testing::ParityTaskDirs()),
                         [](const auto& info) { return testing::ParityName(info.param); });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(ParityTest);

TEST(ParityDiscoveryTest, ReportsWhatItFound) {
  if (testing::ParityTaskDirs().empty())
    GTEST_SKIP()
        << "no built task folders under build/tasks or $KFORGE_PARITY_ROOT; only the fixture is checked";
}

TEST(ParityFixtureTest, ExportedFixtureMatchesGolden) {
  std::filesystem::path root = testing::FixtureRoot("cpu");
  if (root.empty()) GTEST_SKIP() << "could not export the fixture with " << KFORGE_TORCH_PYTHON;
  testing::CheckParity(root / "fixture/affine", Device::Cpu());
}

}  // namespace
}  // namespace kforge::reference
