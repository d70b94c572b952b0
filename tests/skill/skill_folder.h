// A skill folder written under a fresh temporary folder for a test (removed with it).
#pragma once

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include <gtest/gtest.h>

namespace kforge::skill::test_support {

inline const char* kSkillMd =
    "---\n"
    "name: softmax-rows\n"
    "description: \"Row softmax kernels: one warp per row, max and sum in registers. Use for softmax: "
    "and log-softmax tasks.\"\n"
    "license: MIT\n"
    "metadata:\n"
    "  teacher: claude-test   # a comment\n"
    "  arch: 'sm_90'\n"
    "allowed-tools: Bash Read\n"
    "---\n"
    "# Softmax\n\nSee [the kernel](references/softmax.cu).\n";

inline const char* kEvals = R"({"skill_name": "softmax-rows", "families": ["softmax"],
  "evals": [{"id": 1, "task": "core/softmax", "family": "softmax"}]})";

inline const char* kReferenceKernel = "extern \"C\" __global__ void softmax_rows_reference() {}\n";

class SkillFolder {
 public:
  /// `files` by relative path; empty: the valid softmax-rows skill above.
  explicit SkillFolder(const std::string& name, std::map<std::string, std::string> files = {})
      : root_(std::filesystem::temp_directory_path() /
              ("kforge-skill-" + std::to_string(getpid()) + "-" +
               ::testing::UnitTest::GetInstance()->current_test_info()->name())),
        dir_(root_ / name) {
    std::filesystem::remove_all(root_);
    std::filesystem::create_directories(dir_);
    if (files.empty())
      files = {{"SKILL.md", kSkillMd},
               {"references/softmax.cu", kReferenceKernel},
               {"scripts/verify.sh", "#!/bin/sh\nexec kforge verify \"$@\"\n"},
               {"evals/evals.json", kEvals}};
    for (const auto& [path, text] : files) Write(path, text);
  }
  ~SkillFolder() { std::filesystem::remove_all(root_); }
  SkillFolder(const SkillFolder&) = delete;
  SkillFolder& operator=(const SkillFolder&) = delete;

  void Write(const std::string& path, const std::string& text) {
    std::filesystem::create_directories((dir_ / path).parent_path());
    std::ofstream(dir_ / path, std::ios::binary) << text;
  }
  const std::filesystem::path& dir() const { return dir_; }
  const std::filesystem::path& root() const { return root_; }

 private:
  std::filesystem::path root_, dir_;
};

}  // namespace kforge::skill::test_support
