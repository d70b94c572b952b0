// One episode: the teacher writes a kernel for one task, kforge judges every candidate and feeds the
// result back, until the kernel is correct and fast enough, the teacher submits, or the turns run
// out. Blocking; the batch runs many episodes on threads of its own.
#pragma once

#include <atomic>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "generate/prompts.h"
#include "kforge/bench/bencher.h"
#include "kforge/common/task.h"
#include "kforge/dataset/trajectory.h"
#include "kforge/generate/generate.h"
#include "kforge/llm/client.h"
#include "kforge/verify/service.h"

namespace kforge::generate {

/// What every episode of a run shares.
struct EpisodeContext {
  const GenerateOptions& options;
  const PromptSet& prompts;
  llm::Client& client;
  verify::VerifyService& judge;
  bench::Bencher* bencher = nullptr;  ///< null in compile-only runs
  std::string system_prompt;          ///< rendered, device included
  std::vector<llm::ToolSpec> tools;   ///< tools protocol
  bool compile_only = false;
  nlohmann::json device;
  std::string run_id;
  const std::atomic<bool>* stopping = nullptr;  ///< the batch is stopping: do not start more turns
};

struct EpisodeSpec {
  const common::Task* task = nullptr;
  std::string view;  ///< what the teacher sees (--views)
  int sample = 0;
  std::string reference_source;
  std::string id;  ///< the record id
};

/// The finished episode. `aborted` is set when it was cut short by the batch stopping (a fatal
/// teacher error, or the process asked to stop): such an episode is not written, so that a rerun
/// does it again.
dataset::Trajectory RunEpisode(const EpisodeContext& context, const EpisodeSpec& spec, bool& aborted);

/// The index of the best attempt: the fastest correct one, else the last that compiled, else the last.
std::optional<int> BestAttempt(const std::vector<dataset::Attempt>& attempts);

}  // namespace kforge::generate
