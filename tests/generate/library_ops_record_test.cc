// generate judged on a GPU (the fake worker, tests/fakes/fake_worker_main.cc, says how much of the
// plan's time its library ops took) records where a correct attempt's GPU time went, in its verdict
// and its bench record; `kforge export` and `kforge report` read that back from the run folder.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "fakes/command.h"
#include "fakes/task_root.h"
#include "kforge/generate/generate.h"

namespace kforge::generate {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

/// A reply whose plan runs the relu kernel, after a library fill when `library_fill` (a plan v2
/// solution); `marker` tells the fake worker the plan's split.
std::string Reply(bool library_fill, const std::string& marker) {
  json launches = json::array();
  if (library_fill) launches.push_back({{"fill", "out0"}, {"value", 0}});
  launches.push_back({{"kernel", "relu"},
                      {"grid", {"cdiv(numel(x), 256)"}},
                      {"block", {256}},
                      {"args", {"x", "out0", "i64:numel(x)"}}});
  json plan = {{"launches", launches}};
  return "The kernel.\n```cuda\n"
         "extern \"C\" __global__ void relu(const float* x, float* y, long long n) {\n"
         "  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
         "  if (i < n) y[i] = fmaxf(x[i], 0.0f);\n}\n// " +
         marker + "\n```\n```json\n" + plan.dump() + "\n```\n";
}

class LibraryOpsRecordTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("kforge-generate-ops-" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  /// One episode of demo/relu whose only reply is `reply`; its trajectory record.
  json RunEpisode(const std::string& reply) {
    const fs::path cassette = dir_ / "teacher.jsonl";
    std::ofstream(cassette) << json({{"schema", "kforge.cassette/1"},
                                     {"tag", "demo/relu turn 1"},
                                     {"response",
                                      {{"message", {{"role", "assistant"}, {"content", reply}}},
                                       {"stop_reason", "end_turn"},
                                       {"usage", {{"input_tokens", 900}, {"output_tokens", 400}}}}}})
                                   .dump()
                            << "\n";
    GenerateOptions options;
    options.tasks_root = tasks_.path();
    options.filter = "demo/relu";
    options.teacher = llm::ProviderSpec{llm::ProviderKind::kReplay, cassette.string()};
    options.model = "replay-demo";
    options.out = dir_ / "run";
    options.max_turns = 1;
    options.concurrency = 1;
    options.prompts_dir = fs::path(KFORGE_SOURCE_DIR) / "prompts";
    options.bench.verify.worker_program = KFORGE_FAKE_WORKER;
    options.bench.verify.use_cache = false;
    options.bench.verify.trials = 1;
    auto summary = RunGenerate(options);
    EXPECT_TRUE(summary.ok()) << summary.status().message();
    EXPECT_FALSE(summary->compile_only) << "judged by the fake worker";
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

TEST_F(LibraryOpsRecordTest, TheBestAttemptSaysWhereItsTimeWentAndExportAndReportReadIt) {
  json record = RunEpisode(Reply(/*library_fill=*/true, "fake:ops=0.95"));
  ASSERT_EQ(record["attempts"].size(), 1u) << record.dump();
  const json& attempt = record["attempts"][0];
  ASSERT_EQ(attempt["status"], "ok") << attempt.dump();
  EXPECT_EQ(attempt["solution"]["schema"], "kforge.solution/2");
  EXPECT_EQ(attempt["verdict"]["checks"]["library_ops"], "most_time");
  EXPECT_EQ(attempt["verdict"]["timing"]["plan_split"]["ops_fraction"], 0.95);
  EXPECT_EQ(attempt["bench"]["plan_split"]["ops_fraction"], 0.95);
  EXPECT_EQ(attempt["bench"]["library_ops"], "most_time");
  EXPECT_EQ(attempt["bench"]["flags"], json::array({"mostly_library_ops"}));
  EXPECT_EQ(attempt["speedup"], 2.0) << "the fake times the candidate at 1 ms, the reference at 2 ms";

  fakes::CommandResult exported = Kforge("export run --out data --format trajectory --max-ops-fraction 0.9");
  EXPECT_EQ(exported.exit_code, 1) << "nothing left to export\n" << exported.out;
  EXPECT_NE(exported.out.find("left out: 1 max_ops_fraction"), std::string::npos) << exported.out;
  EXPECT_EQ(Kforge("export run --out all --format trajectory").exit_code, 0) << "kept without the flag";

  fakes::CommandResult report = Kforge("report run --json");
  ASSERT_EQ(report.exit_code, 0) << report.out;
  json all = json::parse(report.out)["runs"][0]["groups"][0];
  EXPECT_EQ(all["mostly_library_ops"], 1);
  EXPECT_EQ(all["fast_p"]["fast_1"], 1.0);
  EXPECT_EQ(all["fast_p_without_library_ops"]["fast_1"], 0.0);
}

TEST_F(LibraryOpsRecordTest, APlanWithoutLibraryOpsHasNoSplit) {
  json record = RunEpisode(Reply(/*library_fill=*/false, "fake:ok"));
  ASSERT_EQ(record["attempts"].size(), 1u) << record.dump();
  const json& attempt = record["attempts"][0];
  ASSERT_EQ(attempt["status"], "ok") << attempt.dump();
  EXPECT_EQ(attempt["solution"]["schema"], "kforge.solution/1");
  EXPECT_FALSE(attempt["verdict"]["checks"].contains("library_ops"));
  EXPECT_FALSE(attempt["verdict"]["timing"].contains("plan_split"));
  EXPECT_FALSE(attempt["bench"].contains("plan_split"));
  EXPECT_FALSE(attempt["bench"].contains("library_ops"));
}

}  // namespace
}  // namespace kforge::generate
