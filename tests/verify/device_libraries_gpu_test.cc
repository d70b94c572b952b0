// End to end on a GPU: solutions that need the CUDA device libraries and kforge's compile-side
// conveniences pass `kforge verify`. A WMMA fp16 matmul (core/matmul_fp16), a cooperative-groups
// row sum launched as the template instance "row_sum<256>" (demo/row_sum: the lowered name must
// reach the worker), and a C++ kernel named by its plain name under a published-style include
// block (demo/relu). Needs the built task packages (scripts/gpu-test.sh).
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "fakes/command.h"
#include "fakes/task_root.h"

namespace kforge::verify {
namespace {

namespace fs = std::filesystem;

const fs::path kSolutions = fs::path(KFORGE_SOURCE_DIR) / "tests/verify/device_libraries";

using fakes::HasCudaDevice;
using fakes::ShellQuote;
using fakes::TaskRoot;

TEST(DeviceLibrariesGpuTest, SolutionsPassVerify) {
  if (!HasCudaDevice()) GTEST_SKIP() << "no CUDA device";
  const std::vector<std::string> files = {"wmma_matmul_fp16.json", "cg_row_sum_template.json",
                                          "published_style_relu.json"};
  TaskRoot root({"demo", "core"});
  std::string command = ShellQuote(KFORGE_BINARY) + " verify --no-cache --seed 1234 --tasks " +
                        ShellQuote(root.path().string());
  for (const std::string& f : files) command += " " + ShellQuote((kSolutions / f).string());
  const fakes::CommandResult run = fakes::RunCommand(command);
  const std::vector<nlohmann::json> verdicts = fakes::JsonLines(run.out);
  if (!verdicts.empty() && verdicts.front().is_object() && verdicts.front().value("status", "") == "no_gpu") {
    GTEST_SKIP() << "no CUDA device (kforge reports no_gpu)";
  }
  ASSERT_EQ(verdicts.size(), files.size()) << run.out;
  for (size_t i = 0; i < files.size(); ++i) {
    const nlohmann::json& v = verdicts[i];
    ASSERT_TRUE(v.is_object()) << files[i];
    EXPECT_EQ(v.value("status", ""), "ok") << files[i] << ": " << v.value("message", "") << "\n"
                                           << v.value("compile", nlohmann::json()).dump();
    EXPECT_FALSE(v.value("trials", nlohmann::json::array()).empty()) << files[i] << ": no trial ran";
    EXPECT_EQ(v["checks"].value("poisoned_outputs", ""), "pass") << files[i];
  }
  EXPECT_EQ(run.exit_code, 0);
  // The published-style source names host-only headers: the verdict says they were dropped.
  EXPECT_NE(verdicts[2]["compile"]["warnings"].dump().find("torch/extension.h> dropped: not needed"),
            std::string::npos)
      << verdicts[2]["compile"].dump();
}

}  // namespace
}  // namespace kforge::verify
