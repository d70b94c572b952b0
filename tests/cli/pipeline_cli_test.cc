// Subcommands chained in shell pipelines: `verify --emit passing | verify - | bench -` (compile-only on
// the CPU; bench says no_gpu without a device and times with one), and `-` for export, report and
// finetune-launch --data giving what the same records give from a file.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "export/record_builder.h"
#include "fakes/command.h"
#include "fakes/task_root.h"

namespace {

namespace fs = std::filesystem;
using kforge::fakes::JsonLines;
using kforge::fakes::RunCommand;
using kforge::fakes::ShellQuote;

class PipelineCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("kforge_pipeline_" + std::to_string(getpid()) + "_" + std::to_string(std::random_device{}()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string Kforge(const std::string& args) const {
    return std::string(KFORGE_BINARY) + " " + args + " 2>>" + ShellQuote((dir_ / "stderr").string());
  }
  std::string Example(const std::string& path) const {
    return ShellQuote(std::string(KFORGE_SOURCE_DIR) + "/examples/" + path);
  }
  std::string Tasks() const { return "--tasks " + ShellQuote(tasks_.path().string()); }
  std::string Stderr() const {
    std::ifstream in(dir_ / "stderr");
    return std::string(std::istreambuf_iterator<char>(in), {});
  }

  kforge::fakes::TaskRoot tasks_{{"demo"}};
  fs::path dir_;
};

TEST_F(PipelineCliTest, VerifyEmitsOnlyPassingSolutionsWithTheirVerdictsForTheNextCommand) {
  const std::string inputs = Example("demo/relu.json") + " " + Example("broken/relu_missing_semicolon.json") +
                             " " + Example("demo/vector_add.json");
  const std::string verify = Kforge("verify --compile-only --no-cache " + Tasks() + " " + inputs);

  kforge::fakes::CommandResult passing = RunCommand(verify + " --emit passing");
  EXPECT_EQ(passing.exit_code, 1) << "one solution failed to compile: " << Stderr();
  std::vector<nlohmann::json> solutions = JsonLines(passing.out);
  ASSERT_EQ(solutions.size(), 2u) << passing.out;
  EXPECT_EQ(solutions[0]["task"], "demo/relu");
  EXPECT_EQ(solutions[1]["task"], "demo/vector_add");
  for (const nlohmann::json& s : solutions) {
    EXPECT_EQ(s["verdict"]["status"], "ok");
    EXPECT_EQ(s["verdict"]["schema"], "kforge.verdict/1");
    EXPECT_TRUE(s["source"].is_string());
  }
  EXPECT_EQ(solutions[1]["verdict"]["solution"],
            std::string(KFORGE_SOURCE_DIR) + "/examples/demo/vector_add.json");

  // The next verify reads the stream: the same solutions, judged again, by line of stdin.
  kforge::fakes::CommandResult again = RunCommand(
      verify + " --emit passing | " + Kforge("verify --compile-only --no-cache " + Tasks() + " -"));
  EXPECT_EQ(again.exit_code, 0) << Stderr();
  std::vector<nlohmann::json> verdicts = JsonLines(again.out);
  ASSERT_EQ(verdicts.size(), 2u) << again.out;
  for (size_t i = 0; i < verdicts.size(); ++i) {
    EXPECT_EQ(verdicts[i]["solution"], "-:" + std::to_string(i + 1));
    EXPECT_EQ(verdicts[i]["status"], "ok");
    EXPECT_EQ(verdicts[i]["solution_hash"], solutions[i]["verdict"]["solution_hash"]);
  }

  // A verdict that is not an object is the line's own error, not set aside.
  nlohmann::json bad = solutions[0];
  bad["verdict"] = 1;
  const std::string bad_file = (dir_ / "bad.jsonl").string();
  std::ofstream(bad_file) << bad.dump() << "\n";
  kforge::fakes::CommandResult refused =
      RunCommand(Kforge("verify --compile-only " + Tasks() + " - < " + ShellQuote(bad_file)));
  std::vector<nlohmann::json> refused_verdicts = JsonLines(refused.out);
  ASSERT_EQ(refused_verdicts.size(), 1u);
  EXPECT_EQ(refused_verdicts[0]["status"], "invalid_solution");
  EXPECT_EQ(refused_verdicts[0]["message"], "-:1: verdict: expected an object");

  // bench times only what passed: without a GPU each record says so (exit 2), with one they are timed.
  const fs::path junit = dir_ / "bench.xml";
  kforge::fakes::CommandResult bench = RunCommand(verify + " --emit passing | " +
                                                  Kforge("bench --max-time 0.2 --annotations none --junit " +
                                                         ShellQuote(junit.string()) + " " + Tasks() + " -"));
  std::vector<nlohmann::json> records = JsonLines(bench.out);
  ASSERT_EQ(records.size(), 2u) << bench.out << Stderr();
  for (size_t i = 0; i < records.size(); ++i) {
    EXPECT_EQ(records[i]["task"], solutions[i]["task"]);
    EXPECT_EQ(records[i]["solution_hash"], solutions[i]["verdict"]["solution_hash"]);
    EXPECT_EQ(records[i]["status"], kforge::fakes::HasCudaDevice() ? "ok" : "no_gpu");
  }
  EXPECT_EQ(bench.exit_code, kforge::fakes::HasCudaDevice() ? 0 : 2);
  // Its JUnit file: one testcase per timed solution, named by the line of stdin; no GPU is an error.
  std::ifstream xml_in(junit);
  std::string xml(std::istreambuf_iterator<char>(xml_in), {});
  EXPECT_NE(xml.find("<testsuite name=\"kforge bench\" tests=\"2\""), std::string::npos) << xml;
  EXPECT_NE(xml.find("classname=\"demo/vector_add\" name=\"-:2\""), std::string::npos) << xml;
  if (kforge::fakes::HasCudaDevice())
    EXPECT_NE(xml.find("<property name=\"speedup\""), std::string::npos) << xml;
  else
    EXPECT_NE(xml.find("errors=\"2\""), std::string::npos) << xml;
}

TEST_F(PipelineCliTest, VerifyJUnitAndAnnotationsUnderGithubActions) {
  const std::string broken = std::string(KFORGE_SOURCE_DIR) + "/examples/broken/relu_missing_semicolon.json";
  const fs::path junit = dir_ / "verify.xml";
  const fs::path summary = dir_ / "summary.md";
  kforge::fakes::CommandResult run = RunCommand(
      "GITHUB_ACTIONS=true GITHUB_STEP_SUMMARY=" + ShellQuote(summary.string()) + " " +
      Kforge("verify --compile-only --no-cache " + Tasks() + " --junit " + ShellQuote(junit.string()) + " " +
             Example("demo/relu.json") + " " + ShellQuote(broken)));
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_EQ(JsonLines(run.out).size(), 2u) << "stdout stays the verdict stream";
  // The broken relu misses a semicolon at the end of source line 3; NVRTC reports it on line 4, which
  // is on the file's line 4 (the "source" line), after three "\n" escapes.
  std::ifstream in(broken);
  std::string line;
  for (int n = 0; n < 4; ++n) std::getline(in, line);
  size_t col = 0;
  for (int k = 0; k < 3; ++k) col = line.find("\\n", col) + 2;
  std::string expected = "::error file=" + broken + ",line=4,col=" + std::to_string(col + 1) +
                         ",title=kforge compile_error%3A demo/relu::";
  EXPECT_NE(Stderr().find(expected), std::string::npos) << Stderr();
  std::ifstream xml(junit);
  std::string text(std::istreambuf_iterator<char>(xml), {});
  EXPECT_NE(text.find("tests=\"2\" failures=\"1\" errors=\"0\""), std::string::npos) << text;
  std::ifstream md(summary);
  std::string table(std::istreambuf_iterator<char>(md), {});
  EXPECT_NE(table.find("### kforge verify: 1 passed, 1 failed, 0 errors"), std::string::npos) << table;

  // Never over an input: refused before anything runs.
  kforge::fakes::CommandResult refused = RunCommand(Kforge("verify --compile-only " + Tasks() + " --junit " +
                                                           ShellQuote(broken) + " " + ShellQuote(broken)));
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_NE(Stderr().find("--junit " + broken + ": is an input; it would be written over"),
            std::string::npos);
}

TEST_F(PipelineCliTest, ExportAndReportReadRecordsFromStdin) {
  std::vector<kforge::dataset::Trajectory> records;
  for (int s = 0; s < 3; ++s) {
    kforge::testing::RecordSpec spec;
    spec.sample = s;
    spec.speedup = 1.5 + s;
    records.push_back(kforge::testing::MakeRecord(spec));
  }
  const std::string file = (dir_ / "records.jsonl").string();
  kforge::testing::WriteRecords(file, records);

  kforge::fakes::CommandResult from_file = RunCommand(Kforge("report --json " + ShellQuote(file)));
  kforge::fakes::CommandResult from_stdin =
      RunCommand("cat " + ShellQuote(file) + " | " + Kforge("report --json -"));
  ASSERT_EQ(from_stdin.exit_code, 0) << Stderr();
  nlohmann::json a = nlohmann::json::parse(from_file.out), b = nlohmann::json::parse(from_stdin.out);
  ASSERT_EQ(a["runs"].size(), 1u);
  ASSERT_EQ(b["runs"].size(), 1u);
  for (nlohmann::json* report : {&a, &b}) {  // the label and file name where the records came from
    (*report)["runs"][0].erase("label");
    (*report)["runs"][0].erase("files");
  }
  EXPECT_EQ(a["runs"], b["runs"]);

  const fs::path out_file = dir_ / "from_file", out_stdin = dir_ / "from_stdin";
  EXPECT_EQ(
      RunCommand(Kforge("export " + ShellQuote(file) + " --out " + ShellQuote(out_file.string()))).exit_code,
      0)
      << Stderr();
  EXPECT_EQ(RunCommand("cat " + ShellQuote(file) + " | " +
                       Kforge("export - --out " + ShellQuote(out_stdin.string())))
                .exit_code,
            0)
      << Stderr();
  std::ifstream x(out_file / "train.jsonl"), y(out_stdin / "train.jsonl");
  std::string rows_file(std::istreambuf_iterator<char>(x), {}),
      rows_stdin(std::istreambuf_iterator<char>(y), {});
  EXPECT_FALSE(rows_file.empty());
  EXPECT_EQ(rows_file, rows_stdin);
  EXPECT_GE(JsonLines(rows_stdin).size(), 1u);  // the three samples share one solution: exact duplicates drop

  // export | finetune-launch --data -: the dataset is kept in the cache for the trainer.
  fs::create_directories(dir_ / "model");
  std::ofstream(dir_ / "model/config.json") << "{}";
  kforge::fakes::CommandResult launch =
      RunCommand("cat " + ShellQuote((out_stdin / "train.jsonl").string()) +
                 " | KFORGE_CACHE_DIR=" + ShellQuote((dir_ / "cache").string()) + " " +
                 Kforge("finetune-launch --data - --model " + ShellQuote((dir_ / "model").string()) +
                        " --out " + ShellQuote((dir_ / "ft").string()) + " --dry-run"));
  EXPECT_EQ(launch.exit_code, 0) << Stderr();
  std::vector<fs::path> kept;
  for (const auto& entry : fs::directory_iterator(dir_ / "cache/stdin")) kept.push_back(entry.path());
  ASSERT_EQ(kept.size(), 1u);
  std::ifstream kept_in(kept[0]);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(kept_in), {}), rows_stdin);
}

}  // namespace
