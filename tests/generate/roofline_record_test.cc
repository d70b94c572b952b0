// generate on a task whose cost was derived at import (a KernelBench task with a level): the teacher
// hears the roofline, the bench record keeps the kernel's and the reference's % of speed of light,
// `kforge export --min-sol` filters on it and `kforge report` gives its median per level. The fake
// worker (KFORGE_FAKE_PEAK) times the candidate at 1 ms and the reference at 2 ms on a 1000 GB/s,
// 50 TFLOP/s device.
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "fakes/command.h"
#include "fakes/task_root.h"
#include "kforge/generate/generate.h"

namespace kforge::generate {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr char kTaskId[] = "kernelbench/level1/19_ReLU";
// 8 MiB moved at 1000 GB/s: a floor of 0.008388608 ms; 1 ms is 0.839% of it, 2 ms 0.419%.
constexpr double kKernelSol = 0.8388608, kReferenceSol = 0.4194304;

std::string Reply() {
  json plan = {{"launches",
                {{{"kernel", "relu"},
                  {"grid", {"cdiv(numel(x), 256)"}},
                  {"block", {256}},
                  {"args", {"x", "out0", "i64:numel(x)"}}}}}};
  return "The kernel.\n```cuda\n"
         "extern \"C\" __global__ void relu(const float* x, float* y, long long n) {\n"
         "  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
         "  if (i < n) y[i] = fmaxf(x[i], 0.0f);\n}\n```\n```json\n" +
         plan.dump() + "\n```\n";
}

json CassetteLine(int turn) {
  return {{"schema", "kforge.cassette/1"},
          {"tag", std::string(kTaskId) + " turn " + std::to_string(turn)},
          {"response",
           {{"message", {{"role", "assistant"}, {"content", Reply()}}},
            {"stop_reason", "end_turn"},
            {"usage", {{"input_tokens", 900}, {"output_tokens", 400}}}}}};
}

class RooflineRecordTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("kforge-generate-roofline-" + std::to_string(getpid()));
    fs::remove_all(dir_);
    const fs::path task = dir_ / "tasks" / kTaskId;
    fs::create_directories(task.parent_path());
    fs::copy(fs::canonical(tasks_.path() / "demo/relu"), task, fs::copy_options::recursive);
    std::ifstream in(task / "task.json");
    json doc = json::parse(in);
    in.close();
    doc["id"] = kTaskId;
    doc["level"] = 1;
    doc["cost"] = {{"flops", "M * N"}, {"bytes", "8 * M * N"}, {"derived", "torch-flop-counter/1"}};
    std::ofstream(task / "task.json") << doc.dump(2);
  }
  void TearDown() override {
    unsetenv("KFORGE_FAKE_PEAK");
    fs::remove_all(dir_);
  }

  /// Two turns on the task (the target is out of reach, so turn 1's feedback goes to the teacher).
  json RunEpisode(const std::function<void(GenerateOptions&)>& also = nullptr) {
    const fs::path cassette = dir_ / "teacher.jsonl";
    std::ofstream(cassette) << CassetteLine(1).dump() << "\n" << CassetteLine(2).dump() << "\n";
    GenerateOptions options;
    options.tasks_root = dir_ / "tasks";
    options.teacher = llm::ProviderSpec{llm::ProviderKind::kReplay, cassette.string()};
    options.model = "replay-demo";
    options.out = dir_ / "run";
    options.max_turns = 2;
    options.target_speedup = 100;
    options.concurrency = 1;
    options.prompts_dir = fs::path(KFORGE_SOURCE_DIR) / "prompts";
    options.bench.verify.worker_program = KFORGE_FAKE_WORKER;
    options.bench.verify.use_cache = false;
    options.bench.verify.trials = 1;
    setenv("KFORGE_FAKE_PEAK", "1", 1);
    if (also) also(options);
    auto summary = RunGenerate(options);
    EXPECT_TRUE(summary.ok()) << summary.status().message();
    std::ifstream in(options.out / "trajectories.jsonl");
    std::string line;
    EXPECT_TRUE(std::getline(in, line)) << "no record";
    return json::parse(line);
  }

  fakes::CommandResult Kforge(const std::string& args) {
    return fakes::RunCommand("cd " + fakes::ShellQuote(dir_.string()) + " && " + KFORGE_BINARY + " " + args +
                             " 2>&1");
  }

  fakes::TaskRoot tasks_{{"demo"}};
  fs::path dir_;
};

TEST_F(RooflineRecordTest, TheTeacherHearsTheRooflineAndExportAndReportUseIt) {
  json record = RunEpisode();
  ASSERT_EQ(record["attempts"].size(), 2u) << record.dump();
  const json& roofline = record["attempts"][0]["bench"]["roofline"];
  ASSERT_TRUE(roofline.is_object()) << record["attempts"][0]["bench"].dump();
  EXPECT_DOUBLE_EQ(roofline["bytes"].get<double>(), 8.0 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(roofline["flops"].get<double>(), 1024.0 * 1024);
  EXPECT_NEAR(roofline["sol_pct"].get<double>(), kKernelSol, 1e-9);
  EXPECT_NEAR(roofline["reference_sol_pct"].get<double>(), kReferenceSol, 1e-9);

  std::string feedback;  // the user message after turn 1
  for (const json& m : record["messages"])
    if (m.value("role", "") == "user" && m.dump().find("Roofline:") != std::string::npos) feedback = m.dump();
  EXPECT_NE(feedback.find("0.8% of speed of light (the reference: 0.4%)"), std::string::npos) << feedback;
  EXPECT_NE(
      feedback.find("Roofline: the task moves at least 8.39 MB and computes 1.05 MFLOP; at 1000 GB/s and "
                    "50 TFLOP/s its floor is 0.00839 ms (memory-bound)"),
      std::string::npos)
      << record["messages"].dump();

  fakes::CommandResult left_out = Kforge("export run --out high --format trajectory --min-sol 1");
  EXPECT_EQ(left_out.exit_code, 1) << "nothing left to export\n" << left_out.out;
  EXPECT_NE(left_out.out.find("left out: 1 min_sol"), std::string::npos) << left_out.out;
  fakes::CommandResult kept = Kforge("export run --out low --format trajectory --min-sol 0.8");
  EXPECT_EQ(kept.exit_code, 0) << kept.out;

  fakes::CommandResult report = Kforge("report run --json");
  ASSERT_EQ(report.exit_code, 0) << report.out;
  const json groups = json::parse(report.out)["runs"][0]["groups"];
  ASSERT_EQ(groups.size(), 2u) << groups.dump();
  EXPECT_EQ(groups[1]["name"], "level 1");
  EXPECT_NEAR(groups[1]["median_sol_pct"].get<double>(), kKernelSol, 1e-3);
  EXPECT_NEAR(groups[1]["median_reference_sol_pct"].get<double>(), kReferenceSol, 1e-3);
  fakes::CommandResult table = Kforge("report run");
  EXPECT_NE(table.out.find("median % of speed of light (correct kernels with a roofline): 0.8% (their "
                           "references: 0.4%); level 1 0.8% (reference 0.4%)"),
            std::string::npos)
      << table.out;
}

// generate --torch-compile: the task's baseline is measured once, before the episodes, by the real script
// with real torch.compile (on the CPU package, the aot_eager backend), kept on every timed attempt's bench
// record with the speedup over it, and exported as torch_compile_ms.
TEST_F(RooflineRecordTest, TheTorchCompileBaselineIsKeptOnTimedAttemptsAndExported) {
  json record = RunEpisode([](GenerateOptions& options) {
    options.torch_compile.emplace();
    options.torch_compile->script = fs::path(KFORGE_SOURCE_DIR) / "scripts/torch_compile_baseline.py";
    options.torch_compile->device = "cpu";
    options.torch_compile->backend = "aot_eager";
    options.torch_compile->max_seconds = 1;
  });
  ASSERT_EQ(record["attempts"].size(), 2u) << record.dump();
  for (const json& attempt : record["attempts"]) {
    const json& bench = attempt["bench"];
    ASSERT_TRUE(bench.contains("torch_compile")) << bench.dump();
    EXPECT_GT(bench["torch_compile"]["median_ms"].get<double>(), 0);
    EXPECT_GT(bench["torch_compile"]["compile_s"].get<double>(), 0);
    EXPECT_EQ(bench["torch_compile"]["mode"], "default");
    EXPECT_NEAR(bench["speedup_vs_torch_compile"].get<double>(),
                bench["torch_compile"]["median_ms"].get<double>() / bench["candidate"]["median_ms"].get<double>(),
                1e-9);
  }
  EXPECT_EQ(record["attempts"][0]["bench"]["torch_compile"], record["attempts"][1]["bench"]["torch_compile"])
      << "measured once for the task";

  fakes::CommandResult exported = Kforge("export run --out rows --format messages --include-incorrect");
  ASSERT_EQ(exported.exit_code, 0) << exported.out;
  std::ifstream rows(dir_ / "rows" / "train.jsonl");
  std::string line;
  ASSERT_TRUE(std::getline(rows, line));
  EXPECT_DOUBLE_EQ(json::parse(line)["torch_compile_ms"].get<double>(),
                   record["attempts"][1]["bench"]["torch_compile"]["median_ms"].get<double>());
}

}  // namespace
}  // namespace kforge::generate
