// `kforge skill distill`: a skill folder from verified trajectories. The verified episodes (correct,
// the speedup's lower bound above 1x) give references/ (their kernels and launch plans, by operator
// family) and evals/evals.json (their tasks); the failures a later turn repaired give the pitfalls;
// the teacher writes the description and the body from prompts/skill_distill.md; kforge writes the
// front matter (metadata: teacher, arch, the source trajectories' hash), scripts/verify.sh, and
// checks the folder as `kforge skill check` does.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "kforge/common/status.h"
#include "kforge/llm/client.h"
#include "kforge/llm/provider.h"

namespace kforge::skill {

struct DistillOptions {
  std::vector<std::filesystem::path> run_dirs;  ///< generate run folders (trajectories.jsonl)
  llm::ProviderSpec teacher;                    ///< --teacher
  std::string model;
  llm::ProviderOptions provider;
  llm::ClientOptions client;
  /// OUT/NAME: the new skill folder; its last part is the skill's name. Must not exist.
  std::filesystem::path out;
  std::filesystem::path prompts_dir = "prompts";
  int max_tokens = 8192;
  std::string license;  ///< front matter license; empty: none
};

struct DistillSummary {
  int verified = 0;  ///< episodes used as references
  int pitfalls = 0;  ///< repaired failures shown to the teacher
  std::vector<std::string> families;
  std::string hash;  ///< the skill's content hash
};

StatusOr<DistillSummary> RunDistill(const DistillOptions& options);

}  // namespace kforge::skill
