// generate: for every (task, sample), a teacher LLM writes a kernel; kforge compiles, verifies and
// times it and tells the teacher what happened, turn after turn, until the kernel is correct and fast
// or the turns run out. Each finished episode is one kforge.trajectory/1 line in RUN_DIR.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kforge/bench/bencher.h"
#include "kforge/bench/torch_compile.h"
#include "kforge/common/names.h"
#include "kforge/common/status.h"
#include "kforge/dataset/trajectory.h"
#include "kforge/llm/client.h"
#include "kforge/llm/provider.h"

namespace kforge::generate {

/// A skill in the teacher's context (`--skill`; the folder is read and checked by kforge skill).
/// Text protocol: its body goes in the system prompt. Tools protocol: a catalog line (name and
/// description) in the system prompt, and the `read_skill_file` tool returns its files.
struct ContextSkill {
  std::string name;
  std::string description;
  std::string body;  ///< SKILL.md after its front matter
  std::string hash;  ///< "sha256:<hex>" of the folder: part of the run id and of every record
  /// Relative path ("SKILL.md", "references/x.cu") -> text: all read_skill_file may return. Held in
  /// memory, so a path a model names is never opened.
  std::map<std::string, std::string> readable;
};

/// What the teacher sees of a task (--views): the reference program, its description in words, its
/// tensor spec, both of those, or KernelBench's own framing of the program.
enum class View { kCode, kNl, kSpec, kNlSpec, kKernelBench };
inline constexpr common::NameTable<View, 5> kViewNames = {{{View::kCode, "code"},
                                                          {View::kNl, "nl"},
                                                          {View::kSpec, "spec"},
                                                          {View::kNlSpec, "nl+spec"},
                                                          {View::kKernelBench, "kernelbench"}}};
static_assert(kViewNames.MatchesEnum());
inline std::string_view ViewName(View view) { return kViewNames.Name(view); }

struct GenerateOptions {
  /// Task folders (each with task.json and, for the GPU check, its reference packages).
  std::filesystem::path tasks_root = "tasks";
  /// Task ids to run: globs over ids, comma-separated ("kernelbench/level1/*,core/*"); empty means all.
  std::string filter;
  /// Also run tasks the import found degenerate, nondeterministic or ill-conditioned (left out by
  /// default: no kernel can be judged on them). Default false.
  bool include_unjudgeable = false;
  /// Teacher (--teacher, llm::ParseProviderSpec). Required.
  std::optional<llm::ProviderSpec> teacher;
  std::string model;
  llm::ProviderOptions provider;
  llm::ClientOptions client;
  /// The run folder: run.json, trajectories.jsonl, generate.log.
  std::filesystem::path out;
  /// Episodes per task. Default 1.
  int samples = 1;
  /// Episodes in flight. Default 16.
  int concurrency = 16;
  /// HTTP teachers (not with the batch API): the first sample of a task sends its first request
  /// alone and the task's other samples start once it has its reply, at most this many seconds
  /// later, so that they read the task's prompt from the provider's cache. 0 starts them together.
  /// Default 60.
  double cache_warmup_s = 60;
  /// Assistant turns per episode, at most. Default 4.
  int max_turns = 4;
  /// Text (a cuda and a json block per reply) or tools (run and submit). Default text.
  dataset::Protocol protocol = dataset::Protocol::kText;
  /// What the teacher sees of each task: every task is run under each view. Default {kCode}.
  std::vector<View> views = {View::kCode};
  /// Sampling: temperature (unset = the server's default), output cap, extended thinking budget.
  std::optional<double> temperature;
  int max_tokens = 8192;
  int thinking_budget_tokens = 0;
  std::string reasoning_effort;
  /// Anthropic adaptive thinking and effort (llm::ChatRequest). Default off, none.
  bool adaptive_thinking = false;
  std::string effort;
  /// Anthropic thinking.display: "summarized" or "omitted"; empty = "summarized" for the models whose
  /// default omits the thinking text (Claude Opus 4.7), the API's default for the others.
  std::string thinking_display;
  /// An episode stops once a correct attempt is at least this much faster than the reference. Default 1.
  double target_speedup = 1.0;
  /// Shard i of n (0-based): only tasks whose position in the sorted list is i mod n.
  int shard_index = 0, shard_count = 1;
  /// Compile and check plans only (no GPU). Also chosen, and said, when there is no GPU.
  bool compile_only = false;
  /// Spending cap, USD, over the run folder's whole spend (earlier invocations included): each
  /// request's worst case is reserved before it is sent, and one that does not fit is not sent.
  /// Unset = no limit.
  std::optional<double> max_cost_usd;
  /// With max_cost_usd: run a model the price table lacks (its cost counts as 0). Default false.
  bool allow_unpriced = false;
  /// Run again the episodes recorded with stop llm_error (they move to unfinished.jsonl). Default
  /// false; episodes that ended on a transient error are never recorded as final.
  bool retry_errors = false;
  /// Print the first request's wire body on stdout and stop before sending anything. Default false.
  bool dry_run = false;
  /// HTTP teachers: one request of one output token before the batch starts; an error that every
  /// request would get (no such model, a refused key or parameter) stops it there. Default true.
  bool probe = true;
  /// Prompt templates folder. Default prompts (next to the tasks' project).
  std::filesystem::path prompts_dir = "prompts";
  /// Replace run.json when the configuration changed (existing records stay, under the old run id).
  bool force = false;
  /// How each candidate is verified and timed (the run's bench::Judge): devices, arch, trials,
  /// timeouts, sampling bounds. `measure.max_seconds` is the timing budget per correct attempt.
  bench::BenchOptions bench;
  /// --torch-compile: each task's reference program under torch.compile, timed once per task before the
  /// episodes start (GPU runs only; bench::TorchCompileBaselines), and kept on every timed attempt's bench
  /// record of that task. Unset: not measured.
  std::optional<bench::TorchCompileOptions> torch_compile;
  /// Seed of the run (inputs, the teacher's sample order). Default 0.
  uint64_t seed = 0;
  /// Skills in the teacher's context, in order. Default none.
  std::vector<ContextSkill> skills;
};

/// What a run did; printed as the summary line.
struct GenerateSummary {
  int episodes = 0;  ///< planned in this invocation (after resume)
  int skipped = 0;   ///< already in RUN_DIR
  int finished = 0;  ///< written
  int correct = 0;
  int faster = 0;    ///< correct and faster than the reference
  int compiled = 0;  ///< best attempt compiled
  int turns = 0;     ///< teacher turns of the written episodes
  double cpu_s = 0;  ///< CPU time of this process (not of its compiler and GPU worker children)
  int llm_errors = 0;
  int harness_errors = 0;
  int deferred = 0;  ///< ended on a transient teacher error: in unfinished.jsonl, run again by a rerun
  double cost_usd = 0;         ///< spent by this invocation
  double spent_before_usd = 0;  ///< spent in the run folder before it
  /// Prompt tokens of this invocation's requests: fresh input, read from and written to the cache.
  struct PromptTokens {
    int64_t input = 0, cache_read = 0, cache_write = 0;
    void AddTokens(const dataset::UsageInfo& u) {
      input += u.input_tokens;
      cache_read += u.cache_read_tokens;
      cache_write += u.cache_write_tokens;
    }
    /// The part of all prompt tokens read from the cache, in [0, 1].
    double CacheReadShare() const {
      const int64_t all = input + cache_read + cache_write;
      return all > 0 ? static_cast<double>(cache_read) / static_cast<double>(all) : 0;
    }
  } usage;
  bool compile_only = false;
  bool stopped_by_budget = false;
  bool dry_run = false;  ///< nothing was sent: the first request was printed
  Status fatal;  ///< a fatal teacher error (auth, quota, not found) or a write failure
};

/// Refuses, in one line naming the flag, options that contradict each other or the teacher (a
/// duplicated view, a shard out of range, --record into the run folder, a flag the provider does not
/// send, ...). RunGenerate checks them first; InvalidArgument.
Status CheckGenerateOptions(const GenerateOptions& options);

/// Runs the batch. Bad options or an unusable RUN_DIR are a Status before anything starts.
StatusOr<GenerateSummary> RunGenerate(const GenerateOptions& options);

}  // namespace kforge::generate
