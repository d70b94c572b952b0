// `kforge verify --rejudge`: the best attempt of every record judged again (here by the fake worker,
// which answers as markers in the source say), into rejudged.jsonl beside the records, which stay as
// they were.
#include "cli/rejudge.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "export/record_builder.h"
#include "fakes/command.h"

namespace kforge::cli {
namespace {

namespace fs = std::filesystem;

std::string ReadText(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

class RejudgeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("kforge_rejudge_" + std::to_string(getpid()) + "_" + std::to_string(std::random_device{}()));
    fs::path task = dir_ / "tasks/kernelbench/level1/19_ReLU";
    fs::create_directories(task);
    fs::create_directories(dir_ / "run");
    std::ofstream(task / "reference.py") << kforge::testing::kReluReference;
    nlohmann::json spec = {{"name", "x"}, {"dtype", "float32"}, {"shape", {16, 16384}}};
    std::ofstream(task / "task.json") << nlohmann::json{
        {"schema", "kforge.task/1"},
        {"id", "kernelbench/level1/19_ReLU"},
        {"description", "relu"},
        {"reference", "reference.py"},
        {"inputs", {spec}},
        {"outputs", {{{"name", "out0"}, {"dtype", "float32"}, {"shape", {16, 16384}}}}}}
                                             .dump();
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(RejudgeTest, WritesTheNewVerdictsBesideTheRunAndCountsWhatIsRefusedNow) {
  using kforge::testing::MakeRecord;
  using kforge::testing::RecordSpec;
  std::vector<dataset::Trajectory> records;
  RecordSpec spec;
  spec.sample = 0;
  spec.source = std::string(kforge::testing::kReluSource) + "// fake:mismatch\n";  // passed judge 1
  records.push_back(MakeRecord(spec));
  spec.sample = 1;
  spec.source = kforge::testing::kReluSource;
  records.push_back(MakeRecord(spec));
  spec.sample = 2;
  spec.correct = false;
  spec.source = std::string(kforge::testing::kReluSource) + "// fake:mismatch\n";
  records.push_back(MakeRecord(spec));
  kforge::testing::WriteRecords((dir_ / "run/trajectories.jsonl").string(), records);
  const std::string before = ReadText(dir_ / "run/trajectories.jsonl");

  verify::VerifyOptions options;
  options.tasks_root = dir_ / "tasks";
  options.worker_program = KFORGE_FAKE_WORKER;
  options.use_cache = false;
  ::testing::internal::CaptureStderr();
  int code = RejudgeRuns({(dir_ / "run").string()}, options);
  std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(code, 1) << err;
  EXPECT_NE(err.find("3 best attempts (3 from an older judge), 2 correct before, 1 still ok, 1 refused now"),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("refused now: " + records[0].id), std::string::npos) << err;
  EXPECT_EQ(ReadText(dir_ / "run/trajectories.jsonl"), before);

  std::ifstream lines(dir_ / "run/rejudged.jsonl");
  std::vector<nlohmann::json> rejudged;
  for (std::string line; std::getline(lines, line);) rejudged.push_back(nlohmann::json::parse(line));
  ASSERT_EQ(rejudged.size(), 3u);
  EXPECT_EQ(rejudged[0]["schema"], "kforge.rejudge/1");
  EXPECT_EQ(rejudged[0]["id"], records[0].id);
  EXPECT_EQ(rejudged[0]["before"]["correct"], true);
  EXPECT_EQ(rejudged[0]["before"]["judge"], 1);
  EXPECT_EQ(rejudged[0]["verdict"]["status"], "mismatch");
  EXPECT_EQ(rejudged[0]["verdict"]["judge"], common::kJudgeVersion);
  EXPECT_EQ(rejudged[1]["verdict"]["status"], "ok");
  EXPECT_EQ(rejudged[2]["before"]["correct"], false);
  for (const auto& entry : fs::directory_iterator(dir_ / "run"))  // no temporary left behind
    EXPECT_EQ(entry.path().filename().string().rfind(".", 0), std::string::npos) << entry.path();
}

TEST_F(RejudgeTest, AMissingRunIsAUsageError) {
  verify::VerifyOptions options;
  options.tasks_root = dir_ / "tasks";
  options.worker_program = KFORGE_FAKE_WORKER;
  ::testing::internal::CaptureStderr();
  int code = RejudgeRuns({(dir_ / "nowhere").string()}, options);
  std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(code, 2);
  EXPECT_NE(err.find("kforge verify --rejudge: "), std::string::npos) << err;
}

TEST_F(RejudgeTest, AFileWithoutTrajectoryRecordsIsRefusedAndNothingIsWrittenBesideIt) {
  fs::create_directories(dir_ / "etc");
  std::ofstream(dir_ / "etc/passwd") << "root:x:0:0:root:/root:/bin/bash\n{\"id\": \"x\"}\n";
  verify::VerifyOptions options;
  options.tasks_root = dir_ / "tasks";
  options.worker_program = KFORGE_FAKE_WORKER;
  ::testing::internal::CaptureStderr();
  int code = RejudgeRuns({(dir_ / "etc/passwd").string()}, options);
  std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(code, 2) << err;
  EXPECT_NE(err.find("etc/passwd: no trajectory record in it"), std::string::npos) << err;
  std::vector<std::string> files;
  for (const auto& entry : fs::directory_iterator(dir_ / "etc")) files.push_back(entry.path().filename().string());
  EXPECT_EQ(files, std::vector<std::string>{"passwd"});
}

TEST_F(RejudgeTest, EachRecordsFileGetsAnOutputNamedAfterIt) {
  using kforge::testing::MakeRecord;
  using kforge::testing::RecordSpec;
  RecordSpec spec;
  spec.source = kforge::testing::kReluSource;
  kforge::testing::WriteRecords((dir_ / "run/a.jsonl").string(), {MakeRecord(spec)});
  spec.source = std::string(kforge::testing::kReluSource) + "// fake:mismatch\n";
  kforge::testing::WriteRecords((dir_ / "run/b.jsonl").string(), {MakeRecord(spec)});
  verify::VerifyOptions options;
  options.tasks_root = dir_ / "tasks";
  options.worker_program = KFORGE_FAKE_WORKER;
  options.use_cache = false;
  ::testing::internal::CaptureStderr();
  int code = RejudgeRuns({(dir_ / "run/a.jsonl").string(), (dir_ / "run/b.jsonl").string()}, options);
  std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(code, 1) << err;
  EXPECT_FALSE(fs::exists(dir_ / "run/rejudged.jsonl"));
  auto status_in = [&](const char* name) {
    return nlohmann::json::parse(ReadText(dir_ / "run" / name))["verdict"]["status"].get<std::string>();
  };
  EXPECT_EQ(status_in("a.rejudged.jsonl"), "ok");
  EXPECT_EQ(status_in("b.rejudged.jsonl"), "mismatch");

  // A folder and its records file write one output: refused before anything is judged.
  kforge::testing::WriteRecords((dir_ / "run/trajectories.jsonl").string(), {MakeRecord(spec)});
  ::testing::internal::CaptureStderr();
  code = RejudgeRuns({(dir_ / "run").string(), (dir_ / "run/./trajectories.jsonl").string()}, options);
  err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(code, 2) << err;
  EXPECT_NE(err.find("would both write " + (dir_ / "run/rejudged.jsonl").string()), std::string::npos) << err;
  EXPECT_FALSE(fs::exists(dir_ / "run/rejudged.jsonl"));
}

TEST_F(RejudgeTest, AnEndlessInputIsAnErrorNotAHang) {
  const auto start = std::chrono::steady_clock::now();
  fakes::CommandResult run = fakes::RunCommand("timeout 60 " + std::string(KFORGE_BINARY) +
                                               " verify --rejudge --compile-only --tasks " + (dir_ / "tasks").string() +
                                               " /dev/zero 2>&1");
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(run.exit_code, 2) << run.out;
  EXPECT_NE(run.out.find("/dev/zero:1: a line longer than 64 MiB"), std::string::npos) << run.out;
  EXPECT_LT(seconds, 30);
}

}  // namespace
}  // namespace kforge::cli
