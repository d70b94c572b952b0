// The torch.compile baseline: the script's line read back, and the real script run on the CPU package of
// a bundled task with real torch.compile (the aot_eager backend: Dynamo and AOTAutograd without
// Inductor's code generation, which takes a minute on a small CPU).
#include "kforge/bench/torch_compile.h"

#include <gtest/gtest.h>

#include <filesystem>

namespace kforge::bench {
namespace {

namespace fs = std::filesystem;

const fs::path kTasks = fs::path(KFORGE_BINARY).parent_path() / "tasks";

TorchCompileOptions OnTheCpu() {
  TorchCompileOptions options;
  options.script = fs::path(KFORGE_SOURCE_DIR) / "scripts/torch_compile_baseline.py";
  options.device = "cpu";
  options.backend = "aot_eager";
  options.max_seconds = 1;
  return options;
}

TEST(TorchCompileTest, TheScriptLineIsReadBack) {
  auto ok = ParseTorchCompileLine(
      R"({"task": "demo/relu", "gpu": null, "torch": "2.11.0", "mode": "default", "compile_s": 0.35,)"
      R"( "median_ms": 1.5, "eager_median_ms": 2.0, "samples": 10, "took_s": 4.25})");
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  EXPECT_EQ(ok->median_ms, 1.5);
  EXPECT_EQ(ok->eager_median_ms, 2.0);
  EXPECT_EQ(ok->compile_seconds, 0.35);
  EXPECT_EQ(ok->took_seconds, 4.25);
  EXPECT_EQ(ok->samples, 10);
  EXPECT_EQ(ok->gpu, "");
  EXPECT_EQ(ParseTorchCompileLine(R"({"error": "torch sees no CUDA device"})").status().message(),
            "torch sees no CUDA device");
  EXPECT_FALSE(ParseTorchCompileLine("Traceback (most recent call last):").ok());
  EXPECT_FALSE(ParseTorchCompileLine(R"({"median_ms": null})").ok()) << "a baseline without a time";
  EXPECT_FALSE(ParseTorchCompileLine(R"({"median_ms": "fast"})").ok());
}

TEST(TorchCompileTest, MeasuresABundledTaskOnTheCpuOnce) {
  const fs::path relu = kTasks / "demo/relu";
  ASSERT_TRUE(fs::exists(relu / "ref.default.cpu.pt2")) << "scripts/setup.sh builds the bundled tasks' packages";
  TorchCompileBaselines baselines(OnTheCpu());
  auto first = baselines.For(relu);
  ASSERT_TRUE(first.ok()) << first.status().message();
  EXPECT_GT(first->median_ms, 0);
  EXPECT_GT(first->eager_median_ms, 0);
  EXPECT_GT(first->compile_seconds, 0);
  EXPECT_GE(first->took_seconds, first->compile_seconds);
  EXPECT_GE(first->samples, 1);
  EXPECT_EQ(first->gpu, "");
  EXPECT_FALSE(first->torch.empty());
  auto again = baselines.For(relu);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->took_seconds, first->took_seconds) << "measured once per task and variant";
}

TEST(TorchCompileTest, ATaskWithoutAPackageForTheVariantSaysSo) {
  auto missing = TorchCompileBaselines(OnTheCpu()).For(kTasks / "demo/relu", "huge");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("no cpu package for variant 'huge'"), std::string::npos)
      << missing.status().message();
  auto nowhere = TorchCompileBaselines(OnTheCpu()).For(kTasks / "no/such_task");
  ASSERT_FALSE(nowhere.ok());
  EXPECT_NE(nowhere.status().message().find("task.json"), std::string::npos) << nowhere.status().message();
}

}  // namespace
}  // namespace kforge::bench
