// One episode: the teacher writes a kernel for one task, kforge judges every candidate and feeds the
// result back, until the kernel is correct and fast enough, the teacher submits, or the turns run
// out. Blocking; the batch runs many episodes on threads of its own.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "generate/prompts.h"
#include "kforge/bench/judge.h"
#include "kforge/common/task.h"
#include "kforge/dataset/trajectory.h"
#include "kforge/generate/generate.h"
#include "kforge/llm/client.h"

namespace kforge::generate {

/// What every episode of a run shares.
struct EpisodeContext {
  const GenerateOptions& options;
  const PromptSet& prompts;
  llm::Client& client;
  /// Judges every candidate; its judgments carry timing unless the run is compile-only.
  bench::Judge& judge;
  std::string system_prompt;  ///< rendered, device included
  std::vector<common::ToolSpec> tools;  ///< tools protocol
  bool compile_only = false;
  std::optional<common::DeviceRecord> device;
  std::string run_id;
  const std::atomic<bool>* stopping = nullptr;  ///< the batch is stopping: do not start more turns
  /// The sampling parameters as they go on the wire (what the provider drops is null), recorded
  /// in teacher.params.
  nlohmann::json sent_params;
  /// Task id -> its torch.compile baseline, kept on each timed attempt's bench record (--torch-compile).
  const std::map<std::string, common::TorchCompileBaseline>* torch_compile = nullptr;
};

struct EpisodeSpec {
  const common::Task* task = nullptr;
  View view = View::kCode;  ///< what the teacher sees (--views)
  int sample = 0;
  std::string reference_source;
  std::string id;  ///< the record id
  /// Called once the first request has its reply (or its failure): the batch then starts the other
  /// samples of the task, which read the prompt from the provider's cache.
  std::function<void()> on_first_reply;
};

/// The first request of an episode: the system prompt, the task prompt and the sampling options.
/// A request with no messages that carries the run's model and sampling parameters (max tokens,
/// temperature, thinking, reasoning effort): what every request of the run sends besides its turns.
llm::ChatRequest ParametersRequest(const GenerateOptions& options);

StatusOr<llm::ChatRequest> OpeningRequest(const GenerateOptions& options, const PromptSet& prompts,
                                          const std::string& system_prompt,
                                          const std::vector<common::ToolSpec>& tools,
                                          const EpisodeSpec& spec);

/// How an episode ended, for the batch.
enum class EpisodeEnd {
  kFinished,   ///< written to trajectories.jsonl
  kAborted,    ///< cut short by the batch stopping (a fatal error, a circuit breaker, the budget)
  kTransient,  ///< a teacher request failed on a transient error (429, 529, 5xx, timeout, connection)
               ///< after its retries
};

/// The episode. Only a kFinished one goes to trajectories.jsonl; the others are kept apart and
/// run again by a rerun.
dataset::Trajectory RunEpisode(const EpisodeContext& context, const EpisodeSpec& spec, EpisodeEnd& end);

/// The index of the best attempt: the fastest correct one, else the last that compiled, else the last.
std::optional<int> BestAttempt(const std::vector<dataset::Attempt>& attempts);

}  // namespace kforge::generate
