// An Agent Skill folder as kforge reads, writes and checks it: SKILL.md (YAML front matter, then the
// Markdown body a model reads), references/ (verified kernels and their launch plans), scripts/ and
// evals/evals.json (the tasks the skill was built from). `kforge skill check` refuses what the Agent
// Skills specification refuses, plus what kforge itself needs (docs/skills.md).
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "kforge/common/status.h"

namespace kforge::skill {

/// Limits of the specification and of kforge.
inline constexpr size_t kMaxNameChars = 64;
inline constexpr size_t kMaxDescriptionChars = 1024;
inline constexpr size_t kMaxCompatibilityChars = 500;
/// The body's estimated tokens, at most (the specification's recommendation for SKILL.md).
inline constexpr int kMaxBodyTokens = 5000;
/// One file of the folder, and all of them: a skill is context, not a data set.
inline constexpr size_t kMaxFileBytes = 1 << 20;
inline constexpr size_t kMaxFolderBytes = 8 << 20;

/// The token estimate kforge uses for a body: one token per 4 bytes of UTF-8, rounded up (the usual
/// rule of thumb for English prose and code under BPE tokenizers).
int EstimateTokens(std::string_view text);

/// One line of evals/evals.json: a kforge task the skill was built from, or is meant for.
struct EvalCase {
  int id = 0;
  std::string task;    ///< task id, e.g. "kernelbench/level1/23_Softmax"
  std::string family;  ///< operator family, e.g. "softmax"; may be empty
};

struct Skill {
  std::filesystem::path dir;
  std::string name;
  std::string description;
  std::string license;        ///< empty when absent
  std::string compatibility;  ///< empty when absent
  std::string allowed_tools;  ///< space-separated; empty when absent
  std::vector<std::pair<std::string, std::string>> metadata;
  std::string body;  ///< the Markdown after the front matter
  int body_tokens = 0;
  /// "sha256:<hex>" over every file of the folder (relative path, size and bytes, in path order):
  /// any changed byte is a changed skill.
  std::string hash;
  /// What a model may read with read_skill_file: SKILL.md and every file under references/, by
  /// relative path, as they were when the skill was loaded.
  std::map<std::string, std::string> readable;
  std::vector<EvalCase> evals;  ///< evals/evals.json, when present
  std::vector<std::string>
      families;  ///< evals/evals.json "families": the operator families it was built from
};

/// What `kforge skill check` found: the skill when nothing was wrong, and every problem, one line
/// each, naming the file (and line or field).
struct CheckResult {
  Skill skill;
  std::vector<std::string> problems;
  bool ok() const { return problems.empty(); }
};

CheckResult CheckSkill(const std::filesystem::path& dir);

/// The skill, or InvalidArgument with the first problem.
StatusOr<Skill> LoadSkill(const std::filesystem::path& dir);

}  // namespace kforge::skill
