// Golden files: records and CLI outputs compared byte for byte with tests/golden/, so that a change
// meant to keep them (a refactor) cannot alter them unnoticed. Times in verdicts and the temporary
// folders in messages are masked; everything else is compared as written.
// KFORGE_UPDATE_GOLDEN=1 rewrites the files instead of comparing (then review the diff).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "export/record_builder.h"
#include "fakes/command.h"
#include "fakes/task_root.h"
#include "kforge/common/files.h"
#include "kforge/verify/verifier.h"

namespace kforge::cli {
namespace {

namespace fs = std::filesystem;

const fs::path kGolden = fs::path(KFORGE_SOURCE_DIR) / "tests/golden";

std::string ReadAll(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

/// `text` with every occurrence of `from` replaced by `to`.
std::string ReplaceAll(std::string text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

/// Compares `actual` with tests/golden/`name`, or writes it there under KFORGE_UPDATE_GOLDEN=1.
void ExpectGolden(const std::string& name, const std::string& actual) {
  fs::path path = kGolden / name;
  if (std::getenv("KFORGE_UPDATE_GOLDEN") != nullptr) {
    fs::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary) << actual;
    return;
  }
  ASSERT_TRUE(fs::exists(path)) << path << " is missing (KFORGE_UPDATE_GOLDEN=1 writes it)";
  EXPECT_EQ(actual, ReadAll(path)) << "differs from " << path;
}

/// Times change from run to run: every number under a key ending in "ms" becomes 0.
void MaskTimes(nlohmann::json& json) {
  if (json.is_object()) {
    for (auto& [key, value] : json.items()) {
      if (value.is_number() && key.size() >= 2 && key.compare(key.size() - 2, 2, "ms") == 0) {
        value = 0;
      } else {
        MaskTimes(value);
      }
    }
  } else if (json.is_array()) {
    for (auto& value : json) MaskTimes(value);
  }
}

/// The exit code, stdout and stderr of `command`, with `dir` written as "<DIR>".
std::string Transcript(const std::string& command, const fs::path& dir) {
  fs::path err = dir / "stderr.txt";
  fakes::CommandResult result = fakes::RunCommand(command + " 2>" + fakes::ShellQuote(err.string()));
  std::string text = "exit " + std::to_string(result.exit_code) + "\n-- stdout\n" + result.out +
                     "-- stderr\n" + ReadAll(err);
  fs::remove(err);
  return ReplaceAll(text, dir.string(), "<DIR>");
}

/// Every file under `dir`, sorted by path: "== path ==" then its content.
std::string FolderText(const fs::path& dir, const fs::path& masked) {
  std::vector<fs::path> files;
  for (const auto& entry : fs::recursive_directory_iterator(dir))
    if (entry.is_regular_file()) files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  std::string text;
  for (const fs::path& file : files)
    text += "== " + fs::relative(file, dir).string() + " ==\n" + ReadAll(file) + "\n";
  return ReplaceAll(text, masked.string(), "<DIR>");
}

class GoldenTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("kforge_golden_" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string Kforge(const std::string& args) { return Transcript(std::string(KFORGE_BINARY) + " " + args, dir_); }

  /// A task root holding the tasks of GoldenRecords(): copies of the demo relu and core softmax.
  fs::path KernelBenchTasks() {
    const fs::path source(KFORGE_SOURCE_DIR);
    const fs::path root = dir_ / "tasks";
    for (const auto& [id, task] : {std::pair<std::string, std::string>{"kernelbench/level1/19_ReLU", "tasks/demo/relu"},
                                   {"kernelbench/level2/1_Conv", "tasks/demo/relu"},
                                   {"core/softmax", "tasks/core/softmax"}}) {
      fs::create_directories(root / id);
      fs::copy(source / task, root / id, fs::copy_options::recursive);
      nlohmann::json task_json = nlohmann::json::parse(ReadAll(root / id / "task.json"));
      task_json["id"] = id;
      std::ofstream(root / id / "task.json", std::ios::binary) << task_json.dump(2);
    }
    return root;
  }

  fs::path dir_;
};

/// The records the export and report goldens read: both protocols, every final status the exporter
/// treats apart (ok, mismatch, harness_error), reasoning, library ops, two runs of one task.
std::vector<dataset::Trajectory> GoldenRecords() {
  using kforge::testing::MakeRecord;
  using kforge::testing::RecordSpec;
  std::vector<dataset::Trajectory> records;
  RecordSpec spec;
  records.push_back(MakeRecord(spec));  // text, correct in two turns
  spec.sample = 1;
  spec.protocol = "tools";
  spec.speedup = 0.8;
  spec.sol_pct = 42.5;
  records.push_back(MakeRecord(spec));
  spec.sample = 2;
  spec.protocol = "text";
  spec.correct = false;
  spec.stop = "max_turns";
  spec.turns = 3;
  records.push_back(MakeRecord(spec));
  spec = RecordSpec();
  spec.task = "kernelbench/level2/1_Conv";
  spec.level = 2;
  spec.tags = {"conv"};
  spec.reasoning = "First a plain kernel.";
  spec.ops_fraction = 0.25;
  spec.speedup = 2.0;
  records.push_back(MakeRecord(spec));
  spec = RecordSpec();
  spec.task = "core/softmax";
  spec.level = std::nullopt;
  spec.tags = {"reduction"};
  spec.harness_error = true;
  records.push_back(MakeRecord(spec));
  spec = RecordSpec();
  spec.run = "run2";
  spec.ops_fraction = 0.9;
  spec.speedup = 3.0;
  records.push_back(MakeRecord(spec));
  return records;
}

TEST_F(GoldenTest, TrajectoryRecords) {
  fs::path path = dir_ / "trajectories.jsonl";
  kforge::testing::WriteRecords(path.string(), GoldenRecords());
  ExpectGolden("run/trajectories.jsonl", ReadAll(path));
}

TEST_F(GoldenTest, ExportRowsOfEveryFormat) {
  const std::string run = fakes::ShellQuote((kGolden / "run").string());
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"messages", "--format messages"},
      {"messages_all", "--format messages --include-incorrect --with-reasoning"},
      {"pairs", "--format pairs"},
      {"trajectory", "--format trajectory"},
      {"kernelbench", "--format kernelbench --tasks " + fakes::ShellQuote(KernelBenchTasks().string())}};
  for (const auto& [name, flags] : cases) {
    fs::path out = dir_ / name;
    std::string text = Kforge("export " + run + " --out " + fakes::ShellQuote(out.string()) + " " + flags);
    text += FolderText(out, dir_);
    ExpectGolden("export_" + name + ".txt", ReplaceAll(text, kGolden.string(), "<GOLDEN>"));
  }
}

TEST_F(GoldenTest, Report) {
  const std::string run = fakes::ShellQuote((kGolden / "run").string());
  std::string text = Kforge("report " + run) + Kforge("report " + run + " --json") +
                     Kforge("report " + run + " --per-task");
  ExpectGolden("report.txt", ReplaceAll(text, kGolden.string(), "<GOLDEN>"));
}

TEST_F(GoldenTest, TasksList) {
  const std::string root = fakes::ShellQuote((fs::path(KFORGE_SOURCE_DIR) / "tasks").string());
  std::string text = Kforge("tasks list " + root) + Kforge("tasks list " + root + " --json");
  ExpectGolden("tasks_list.txt", text);
}

TEST_F(GoldenTest, VerdictLinesFromTheFakeWorker) {
  auto relu_text = common::ReadFile(fs::path(KFORGE_SOURCE_DIR) / "examples/demo/relu.json");
  ASSERT_TRUE(relu_text.ok());
  const nlohmann::json relu = nlohmann::json::parse(*relu_text);
  auto write = [&](const std::string& name, const nlohmann::json& solution) {
    fs::path path = dir_ / name;
    std::ofstream(path, std::ios::binary) << solution.dump(2);
    return path.string();
  };
  auto marked = [&](const std::string& marker) {
    nlohmann::json solution = relu;
    solution["source"] = solution["source"].get<std::string>() + "// fake:" + marker + "\n";
    return solution;
  };
  nlohmann::json broken = relu;
  broken["source"] = "extern \"C\" __global__ void relu(float* y) { y[0] = <oops>; }\n";
  nlohmann::json no_kernel = relu;
  no_kernel["launches"][0]["kernel"] = "gelu";
  std::vector<std::string> files = {write("ok.json", marked("ok")),
                                    write("mismatch.json", marked("mismatch")),
                                    write("crash.json", marked("crash")),
                                    write("die.json", marked("die")),
                                    write("ops.json", marked("ops=0.25")),
                                    write("broken.json", broken),
                                    write("no_kernel.json", no_kernel)};

  fakes::TaskRoot tasks({"demo"});
  verify::VerifyOptions options;
  options.tasks_root = tasks.path();
  options.worker_program = KFORGE_FAKE_WORKER;
  options.seed = 7;
  options.trials = 2;
  options.use_cache = false;
  verify::Verifier verifier(options);
  verify::SolutionReader reader(files);
  std::string lines;
  verifier.Run(reader, [&](const common::Verdict& verdict, const std::optional<common::BenchResult>&) {
    nlohmann::json json = verdict.ToJson();
    MaskTimes(json);
    lines += json.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  });
  ExpectGolden("verdicts.jsonl", ReplaceAll(lines, dir_.string(), "<DIR>"));
}

}  // namespace
}  // namespace kforge::cli
