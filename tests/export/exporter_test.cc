#include "kforge/export/exporter.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>

#include <gtest/gtest.h>

#include "export/record_builder.h"
#include "kforge/common/files.h"
#include "kforge/export/card.h"

namespace kforge::exporter {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

class ExporterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("kforge-exporter-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::vector<json> Lines(const fs::path& path) {
    std::ifstream in(path);
    std::vector<json> rows;
    for (std::string line; std::getline(in, line);) rows.push_back(json::parse(line));
    return rows;
  }

  /// Three tasks; task a has a duplicate solution (slower), an incorrect record and a harness error.
  fs::path WriteRun() {
    std::vector<dataset::Trajectory> records;
    auto add = [&](testing::RecordSpec spec) { records.push_back(testing::MakeRecord(spec)); };
    testing::RecordSpec a;
    a.task = "kernelbench/level1/1_A";
    a.speedup = 2.0;
    add(a);
    a.sample = 1;
    a.speedup = 1.0;  // same solution, slower: an exact duplicate
    add(a);
    a.sample = 2;
    a.correct = false;
    a.source = std::string(testing::kReluSource) + "__device__ int wrong;\n";
    add(a);
    a.sample = 3;
    a.harness_error = true;
    add(a);
    testing::RecordSpec b;
    b.task = "kernelbench/level2/2_B";
    b.level = 2;
    b.tags = {"matmul"};
    b.protocol = "tools";
    b.source = std::string(testing::kReluSource) + "// b\n__device__ int b_only;\n";
    b.reference =
        "import torch\nclass Model(torch.nn.Module):\n    def forward(self, a, b):\n        return a @ b\n";
    add(b);
    testing::RecordSpec c;
    c.task = "core/softmax";
    c.level.reset();
    c.source = std::string(testing::kReluSource) + "__device__ int c_only;\n";
    c.reference =
        "import torch\nclass Model(torch.nn.Module):\n    def forward(self, x):\n"
        "        return torch.softmax(x, dim=-1) * 2 + 1\n";
    add(c);
    fs::path path = dir_ / "trajectories.jsonl";
    testing::WriteRecords(path.string(), records,
                          "{\"not\": \"a record\"}\nnot json\n{\"schema\": \"kforge.traj");
    return path;
  }

  ExportOptions Options(Format format) {
    ExportOptions o;
    o.format = format;
    o.out = dir_ / "out";
    return o;
  }

  std::vector<std::string> warnings_;
  WarningSink Warn() {
    return [this](const std::string& m) { warnings_.push_back(m); };
  }
  fs::path dir_;
};

TEST_F(ExporterTest, MessagesWithSplitCardAndStats) {
  fs::path run = WriteRun();
  ExportOptions o = Options(Format::kMessages);
  o.split = *SplitSpec::Parse("val=0.5");
  StatusOr<DatasetStats> stats = Export({run}, o, Warn());
  ASSERT_TRUE(stats.ok()) << stats.status().message();
  EXPECT_EQ(stats->scan.records, 6);
  EXPECT_EQ(stats->scan.malformed, 2);
  EXPECT_EQ(stats->scan.torn, 1);
  ASSERT_EQ(warnings_.size(), 2u);
  EXPECT_NE(warnings_[0].find("trajectories.jsonl:7"), std::string::npos) << warnings_[0];
  EXPECT_NE(warnings_[1].find("trajectories.jsonl:8"), std::string::npos) << warnings_[1];
  EXPECT_EQ(stats->exported, 3);
  EXPECT_EQ(stats->left_out.at("duplicate"), 1);
  EXPECT_EQ(stats->left_out.at("incorrect"), 1);
  EXPECT_EQ(stats->left_out.at("harness_error"), 1);

  // Every record of a task is in its task's split; the rows are the kept records, best first per task.
  std::map<std::string, std::string> split_of;
  int rows = 0;
  for (const std::string split : {"train", "validation"}) {
    fs::path file = o.out / (split + ".jsonl");
    if (!fs::exists(file)) continue;
    for (const json& row : Lines(file)) {
      ++rows;
      EXPECT_EQ(o.split.SplitOf(row["task"].get<std::string>()), split);
      ASSERT_TRUE(row.contains("messages"));
      if (row["task"] == "kernelbench/level1/1_A") {
        EXPECT_EQ(row["speedup"], 2.0) << "the faster duplicate is kept";
      }
      EXPECT_EQ(!row["tools"].is_null(), row["task"] == "kernelbench/level2/2_B");
    }
  }
  EXPECT_EQ(rows, 3);

  json written = json::parse(*common::ReadFile(o.out / "stats.json"));
  EXPECT_EQ(written["schema"], "kforge.export_stats/1");
  EXPECT_EQ(written["exported"], 3);
  EXPECT_EQ(written["levels"]["level 1"], 1);
  EXPECT_EQ(written["levels"]["no level"], 1);
  EXPECT_EQ(written["read"]["malformed"], 2);
  std::string card = *common::ReadFile(o.out / "README.md");
  EXPECT_NE(card.find("load_dataset(\"json\""), std::string::npos);
  EXPECT_NE(card.find("| MIT | 3 |"), std::string::npos) << card;
  EXPECT_NE(card.find("| elementwise | 2 |"), std::string::npos) << card;
}

TEST_F(ExporterTest, OverlappingRunsExportTheRowsOfOne) {
  // The same run folder twice, and a second folder holding part of it again (an overlapping rerun):
  // the rows are those of the run once, and stats.json counts what was dropped.
  fs::path run = WriteRun();
  fs::path overlap = dir_ / "rerun.jsonl";
  {
    std::ifstream in(run);
    std::ofstream out(overlap);
    std::string line;
    for (int i = 0; i < 3 && std::getline(in, line); ++i) out << line << "\n";
  }
  ExportOptions one = Options(Format::kMessages);
  one.out = dir_ / "one";
  StatusOr<DatasetStats> once = Export({run}, one, Warn());
  ASSERT_TRUE(once.ok()) << once.status().message();
  EXPECT_EQ(once->scan.duplicates, 0);
  EXPECT_FALSE(json::parse(*common::ReadFile(one.out / "stats.json"))["read"].contains("duplicates"));

  ExportOptions both = Options(Format::kMessages);
  both.out = dir_ / "both";
  StatusOr<DatasetStats> twice = Export({run, overlap, run}, both, Warn());
  ASSERT_TRUE(twice.ok()) << twice.status().message();
  EXPECT_EQ(twice->scan.records, once->scan.records);
  EXPECT_EQ(twice->scan.duplicates, once->scan.records + 3);
  EXPECT_EQ(twice->exported, once->exported);
  EXPECT_EQ(twice->left_out, once->left_out);
  EXPECT_EQ(Lines(both.out / "train.jsonl"), Lines(one.out / "train.jsonl"));
  json stats = json::parse(*common::ReadFile(both.out / "stats.json"));
  EXPECT_EQ(stats["read"]["duplicates"], once->scan.records + 3);
  EXPECT_NE(common::ReadFile(both.out / "README.md")->find(std::to_string(once->scan.records + 3) +
                                                            " duplicate records dropped"),
            std::string::npos);
}

TEST_F(ExporterTest, IncludeIncorrectNeverWritesARowWithoutAnAssistantTurn) {
  testing::RecordSpec answered, failed;
  failed.task = "kernelbench/level1/2_B";
  failed.correct = false;
  dataset::Trajectory teacher_error = testing::MakeRecord(failed);
  teacher_error.messages.erase(teacher_error.messages.begin() + 2, teacher_error.messages.end());
  teacher_error.attempts.clear();
  teacher_error.best.reset();
  fs::path run = dir_ / "trajectories.jsonl";
  testing::WriteRecords(run.string(), {testing::MakeRecord(answered), teacher_error});
  for (Format format : {Format::kMessages, Format::kPairs}) {
    ExportOptions o = Options(format);
    o.out = dir_ / FormatName(format);
    o.filters.include_incorrect = true;
    StatusOr<DatasetStats> stats = Export({run}, o, Warn());
    ASSERT_TRUE(stats.ok()) << stats.status().message();
    EXPECT_EQ(stats->exported, 1) << FormatName(format);
    EXPECT_EQ(stats->left_out.at("no_assistant_turn"), 1) << FormatName(format);
    std::vector<json> rows = Lines(o.out / "train.jsonl");
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_EQ(rows[0]["task"], answered.task);
  }
  EXPECT_TRUE(warnings_.empty()) << "left out as a counted reason, not a warning per record";
}

TEST_F(ExporterTest, AnEmptyExportClaimsNoJudgingAndWritesNoCard) {
  DatasetStats empty;
  const std::string card = DatasetCard(empty);
  EXPECT_EQ(card.find("gpu-verified"), std::string::npos) << card;
  EXPECT_EQ(card.find("GPU-verified"), std::string::npos) << card;
  EXPECT_NE(card.find("How the data was judged: no record was exported, so none was judged."), std::string::npos)
      << card;
  testing::RecordSpec spec;
  spec.correct = false;
  fs::path run = dir_ / "trajectories.jsonl";
  testing::WriteRecords(run.string(), {testing::MakeRecord(spec)});
  ExportOptions o = Options(Format::kMessages);
  StatusOr<DatasetStats> stats = Export({run}, o, Warn());
  ASSERT_TRUE(stats.ok()) << stats.status().message();
  EXPECT_EQ(stats->exported, 0);
  EXPECT_FALSE(fs::exists(o.out / "README.md"));
  EXPECT_FALSE(fs::exists(o.out / "stats.json"));
}

TEST_F(ExporterTest, CardHasTheHubsFrontMatterAndSaysHowTheDataWasJudged) {
  testing::RecordSpec gpu, cpu;
  cpu.task = "core/softmax";
  dataset::Trajectory compiled = testing::MakeRecord(cpu);
  compiled.compile_only = true;
  compiled.task.license = "Apache-2.0";
  fs::path run = dir_ / "trajectories.jsonl";
  testing::WriteRecords(run.string(), {testing::MakeRecord(gpu), compiled});
  ExportOptions o = Options(Format::kMessages);
  o.split = *SplitSpec::Parse("val=0.5");
  ASSERT_TRUE(Export({run}, o, Warn()).ok());
  std::string card = *common::ReadFile(o.out / "README.md");
  ASSERT_EQ(card.rfind("---\n", 0), 0u) << card;
  std::string yaml = card.substr(4, card.find("\n---\n", 4) - 4);
  for (const char* line : {"license:\n- apache-2.0\n- mit\n", "language:\n- en\n- code\n",
                           "task_categories:\n- text-generation\n", "size_categories:\n- n<1K\n", "- cuda\n",
                           "- compile-only\n", "configs:\n- config_name: default\n"})
    EXPECT_NE(yaml.find(line), std::string::npos) << line << "\n" << yaml;
  EXPECT_NE(card.find("mixed: 1 records GPU-verified"), std::string::npos) << card;
  EXPECT_NE(card.find("1 compile-only"), std::string::npos) << card;
  EXPECT_EQ(card.find("checked by kforge"), std::string::npos) << "no claim of a GPU check for all";
  EXPECT_NE(card.find("features=features"), std::string::npos) << card;
  EXPECT_NE(card.find("\"messages\": List(Json())"), std::string::npos) << card;

  testing::WriteRecords(run.string(), {compiled});
  o.out = dir_ / "compiled";
  o.split = SplitSpec();
  ASSERT_TRUE(Export({run}, o, Warn()).ok());
  card = *common::ReadFile(o.out / "README.md");
  EXPECT_NE(card.find("compile-only: kforge"), std::string::npos) << card;
  EXPECT_NE(card.find("license: apache-2.0\n"), std::string::npos) << card;
  EXPECT_NE(card.find("  - split: train\n    path: train.jsonl\n"), std::string::npos) << card;
  EXPECT_EQ(json::parse(*common::ReadFile(o.out / "stats.json"))["compile_only"], 1);
}

TEST_F(ExporterTest, AFailingParquetWriterFailsTheExportAndLeavesNoRowsBehind) {
  fs::path run = dir_ / "trajectories.jsonl";
  testing::WriteRecords(run.string(), {testing::MakeRecord({})});
  ExportOptions o = Options(Format::kMessages);
  o.file_format = FileFormat::kParquet;
  o.parquet_writer = {"/bin/sh", "-c", "echo 'export_parquet: pyarrow is not installed' >&2; exit 1", "sh"};
  StatusOr<DatasetStats> stats = Export({run}, o, Warn());
  ASSERT_FALSE(stats.ok());
  EXPECT_NE(stats.status().message().find("train.parquet: the Parquet writer (/bin/sh) failed, exit code 1: "
                                          "export_parquet: pyarrow is not installed"),
            std::string::npos)
      << stats.status().message();
  EXPECT_FALSE(fs::exists(o.out / ".train.rows.jsonl"));
}

TEST_F(ExporterTest, RefusesANonEmptyOutputUnlessForcedAndReplacesOnlyAnExport) {
  fs::path run = WriteRun();
  ExportOptions o = Options(Format::kPairs);
  o.split = *SplitSpec::Parse("val=0.9");
  ASSERT_TRUE(CheckOutput(o.out, false).ok()) << "absent is fine";
  ASSERT_TRUE(Export({run}, o, Warn()).ok());
  ASSERT_TRUE(fs::exists(o.out / "validation.jsonl"));
  std::set<std::string> first;
  for (const auto& e : fs::directory_iterator(o.out)) first.insert(e.path().filename());
  EXPECT_TRUE(first.count("README.md") && first.count("stats.json"));
  Status refused = CheckOutput(o.out, false);
  EXPECT_FALSE(refused.ok());
  EXPECT_NE(refused.message().find("not empty (--force"), std::string::npos);
  EXPECT_TRUE(CheckOutput(o.out, true).ok());
  std::ofstream(o.out / "notes.txt") << "mine";
  o.force = true;
  o.split = SplitSpec();  // now everything in train: a stale validation.jsonl must go
  ASSERT_TRUE(Export({run}, o, Warn()).ok());
  EXPECT_FALSE(fs::exists(o.out / "validation.jsonl"));
  EXPECT_TRUE(fs::exists(o.out / "train.jsonl"));
  EXPECT_TRUE(fs::exists(o.out / "notes.txt")) << "a file the export did not write is left alone";
  std::ofstream(dir_ / "file") << "x";
  EXPECT_FALSE(CheckOutput(dir_ / "file", true).ok());
}

TEST_F(ExporterTest, HoldoutDropsIdsAndSimilarReferences) {
  fs::path run = WriteRun();
  // A fourth task whose reference is task a's with a comment added.
  testing::RecordSpec copy;
  copy.task = "other/relu_copy";
  copy.reference = std::string("# copied\n") + testing::kReluReference;
  std::ofstream(run, std::ios::app) << "\n" << dataset::ToJson(testing::MakeRecord(copy)).dump() << "\n";
  std::ofstream(dir_ / "ids.txt") << "kernelbench/level1/1_A\n";
  ExportOptions o = Options(Format::kTrajectory);
  o.holdout = dir_ / "ids.txt";
  StatusOr<DatasetStats> stats = Export({run}, o, Warn());
  ASSERT_TRUE(stats.ok()) << stats.status().message();
  EXPECT_EQ(stats->left_out.at("holdout"), 4) << "every record of the held-out task";
  EXPECT_EQ(stats->left_out.at("holdout_similar"), 1) << "the renamed copy";
  std::set<std::string> tasks;
  for (const json& row : Lines(o.out / "train.jsonl")) tasks.insert(row["task"]["id"]);
  EXPECT_EQ(tasks, (std::set<std::string>{"kernelbench/level2/2_B", "core/softmax"}));
}

TEST_F(ExporterTest, IncludeIncorrectNeverExportsHarnessErrors) {
  fs::path run = WriteRun();
  ExportOptions o = Options(Format::kTrajectory);
  o.filters.include_incorrect = true;
  StatusOr<DatasetStats> stats = Export({run}, o, Warn());
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->exported, 4);
  EXPECT_EQ(stats->left_out.at("harness_error"), 1);
  for (const json& row : Lines(o.out / "train.jsonl")) EXPECT_NE(row["outcome"]["stop"], "harness_error");
}

TEST_F(ExporterTest, KernelBenchFilesAndIndex) {
  fs::path run = WriteRun();
  // A task root holding the KernelBench task of the records (demo/relu's spec under another id).
  fs::path root = dir_ / "tasks";
  fs::path task_dir = root / "kernelbench" / "level1" / "1_A";
  fs::create_directories(task_dir);
  fs::copy_file(fs::path(KFORGE_SOURCE_DIR) / "tasks/demo/relu/reference.py", task_dir / "reference.py");
  json task = json::parse(std::ifstream(fs::path(KFORGE_SOURCE_DIR) / "tasks/demo/relu/task.json"));
  task["id"] = "kernelbench/level1/1_A";
  std::ofstream(task_dir / "task.json") << task.dump();
  ExportOptions o = Options(Format::kKernelBench);
  o.tasks_root = root;
  o.filters.include_incorrect = true;
  StatusOr<DatasetStats> stats = Export({run}, o, Warn());
  ASSERT_TRUE(stats.ok()) << stats.status().message();
  EXPECT_EQ(stats->left_out.at("not_kernelbench"), 1) << "core/softmax";
  EXPECT_EQ(stats->left_out.at("unrenderable"), 1) << "2_B has no task folder";
  EXPECT_EQ(stats->exported, 2) << "1_A: the correct one and the incorrect one (duplicate dropped)";
  std::vector<json> index = Lines(o.out / "index.jsonl");
  ASSERT_EQ(index.size(), 2u);
  EXPECT_EQ(index[0]["file"], "level_1_problem_1_sample_0_kernel.py");
  EXPECT_EQ(index[0]["problem"], "level1/1_A.py");
  EXPECT_EQ(index[0]["correct"], true);
  EXPECT_EQ(index[1]["file"], "level_1_problem_1_sample_1_kernel.py");
  EXPECT_EQ(index[1]["correct"], false);
  EXPECT_TRUE(fs::exists(o.out / "level_1_problem_1_sample_0_kernel.py"));
  EXPECT_NE(common::ReadFile(o.out / "README.md")->find("KernelBench"), std::string::npos);
}

}  // namespace
}  // namespace kforge::exporter
