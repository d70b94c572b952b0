// End-to-end check of `kforge verify` against known hacks and faults: every candidate listed in
// tests/verify/adversarial/manifest.json must get its expected verdict status, in one batch.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "fakes/task_root.h"

namespace kforge::verify {
namespace {

namespace fs = std::filesystem;

const fs::path kSourceDir = KFORGE_SOURCE_DIR;
const fs::path kManifest = kSourceDir / "tests/verify/adversarial/manifest.json";

struct CaseRow {
  fs::path file;
  std::string expect;
  std::string shape_general;  ///< the expected checks.shape_general; empty: not checked
  std::string why;
};

struct ProcessResult {
  std::string output;
  int exit_code = -1;
};


ProcessResult RunCommand(const std::string& command) {
  ProcessResult result;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return result;
  char buffer[4096];
  size_t n = 0;
  while ((n = fread(buffer, 1, sizeof(buffer), pipe)) > 0) result.output.append(buffer, n);
  int status = pclose(pipe);
  if (status != -1 && WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  return result;
}


std::vector<CaseRow> ReadManifest() {
  std::ifstream in(kManifest);
  if (!in) throw std::runtime_error("cannot read " + kManifest.string());
  nlohmann::json manifest = nlohmann::json::parse(in);
  std::vector<CaseRow> rows;
  for (const auto& row : manifest) {
    rows.push_back({(kManifest.parent_path() / row.at("file").get<std::string>()).lexically_normal(),
                    row.at("expect").get<std::string>(), row.value("shape_general", ""), row.value("why", "")});
  }
  return rows;
}

std::vector<nlohmann::json> ParseLines(const std::string& text) {
  std::vector<nlohmann::json> lines;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    lines.push_back(nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false));
  }
  return lines;
}

using fakes::HasCudaDevice;
using fakes::ShellQuote;
using fakes::TaskRoot;

TEST(AdversarialGpuTest, EveryCandidateGetsItsExpectedStatus) {
  if (!HasCudaDevice()) GTEST_SKIP() << "no CUDA device";
  std::vector<CaseRow> rows = ReadManifest();
  ASSERT_FALSE(rows.empty());
  TaskRoot root({"demo", "core", "adversarial", "kbstyle"});

  std::string command = ShellQuote(KFORGE_BINARY) + " verify --tasks " + ShellQuote(root.path().string()) +
                        " --seed 1234 --kernel-timeout 2";
  for (const CaseRow& row : rows) command += " " + ShellQuote(row.file.string());
  ProcessResult run = RunCommand(command);
  std::vector<nlohmann::json> verdicts = ParseLines(run.output);

  if (!verdicts.empty() && verdicts.front().is_object() && verdicts.front().value("status", "") == "no_gpu") {
    GTEST_SKIP() << "no CUDA device (kforge reports no_gpu)";
  }
  EXPECT_EQ(run.exit_code, 1) << "some candidates must fail, so verify exits 1";
  ASSERT_EQ(verdicts.size(), rows.size()) << "one verdict line per solution file; stdout was:\n"
                                          << run.output;

  for (size_t i = 0; i < rows.size(); ++i) {
    const nlohmann::json& verdict = verdicts[i];
    ASSERT_TRUE(verdict.is_object()) << "line " << i + 1 << " is not a JSON object";
    // `expect` may list alternatives: "mismatch|crash".
    const std::string status = verdict.value("status", "");
    EXPECT_NE(("|" + rows[i].expect + "|").find("|" + status + "|"), std::string::npos)
        << "file: " << rows[i].file.string() << "\nexpected: " << rows[i].expect
        << "\ngot: " << verdict.value("status", "") << "\nmessage: " << verdict.value("message", "")
        << "\ncase: " << rows[i].why;
    if (!rows[i].shape_general.empty()) {
      const nlohmann::json& checks = verdict.value("checks", nlohmann::json::object());
      EXPECT_EQ(checks.value("shape_general", ""), rows[i].shape_general)
          << "file: " << rows[i].file.string() << "\ndetail: " << checks.value("shape_general_detail", "");
    }
  }
}

TEST(AdversarialGpuTest, IncludedFileContentNeverLeaks) {
  TaskRoot root({"demo", "core", "adversarial"});
  fs::path candidate = kSourceDir / "tests/verify/adversarial/include_etc_passwd.json";
  std::string command = ShellQuote(KFORGE_BINARY) + " verify --compile-only --tasks " +
                        ShellQuote(root.path().string()) + " " + ShellQuote(candidate.string()) + " 2>&1";
  ProcessResult run = RunCommand(command);
  EXPECT_EQ(run.output.find("root:"), std::string::npos) << "the content of /etc/passwd leaked:\n"
                                                         << run.output;
  EXPECT_NE(run.output.find("invalid_solution"), std::string::npos) << run.output;
  EXPECT_EQ(run.exit_code, 1) << run.output;
}

}  // namespace
}  // namespace kforge::verify
