// `kforge finetune-launch` from checked options to the trainer's exit status: the run folder, the
// dataset check, the Python environment's checks, the rendered launch, the manifest and the run.
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "kforge/common/status.h"
#include "kforge/finetune/launch.h"

namespace kforge::finetune {

struct RunRequest {
  LaunchOptions launch;
  /// Check and render only: write the trainer's config (and batch script) into OUT, print the
  /// command, start nothing and skip the Python checks. Default false.
  bool dry_run = false;
  /// Replace a previous run in OUT (one that holds manifest.json), removing what it wrote (model/,
  /// checkpoints/, adapter/, axolotl-prepared/, its logs) once every check has passed. Default false.
  bool force = false;
  /// After a run that ended with status 0, upload OUT/model to this Hub model repository (org/name)
  /// with `hub_script` (scripts/hub_push.py). Empty (default): no upload. Not with Slurm.
  std::string push_to_hub;
  std::filesystem::path hub_script;
};

/// Where the run's messages go: `note` gets progress lines for stderr, `print` what a dry run
/// shows (the batch script, the command) for stdout.
struct RunOutput {
  std::function<void(const std::string&)> note;
  std::function<void(const std::string&)> print;
};

/// The --config file as a JSON object: `.yaml`/`.yml` read by `sft_trl.py --read-config` with the
/// options' Python (PyYAML), anything else read here as JSON. InvalidArgument on one line naming
/// the file when it is malformed or not an object.
StatusOr<nlohmann::json> ReadOverrides(const std::string& path, const LaunchOptions& options);

/// A model folder (made absolute) or a hub id `org/name`; InvalidArgument for a path that does
/// not exist and does not look like a hub id, or a folder without config.json.
StatusOr<std::string> ResolveModel(const std::string& model);

/// True when a --data or --eval-data argument names rows that are not JSON lines: a `.parquet` file,
/// or a Hub dataset id (`org/name` or `org/name:split`) that is no existing path.
bool IsConvertedData(const std::string& argument);
/// Such an argument as the converter takes it: a Parquet file made absolute, a Hub id as given.
std::string DataSource(const std::string& argument);

/// What `PYTHON sft_trl.py --versions` reports; Unavailable naming the Python when it cannot run.
StatusOr<nlohmann::json> ProbeVersions(const LaunchOptions& options);

/// Unavailable, saying how to install it, when a package the launch needs is missing from `versions`
/// (ProbeVersions): the backend's (scripts/requirements-finetune.txt for trl, `pip install axolotl`),
/// peft with --lora, transformers, and the one --report-to names.
Status CheckPackages(const LaunchOptions& options, const nlohmann::json& versions);

/// Runs `sft_trl.py --check-template`: the model's chat template (or --chat-template's) must render
/// the first records, their tool calls included (arguments written once), and every row is
/// tokenized. Returns what the script reports ({"rendered", "tool_calls", "longest_tokens",
/// "longest_line", "tokens": {"rows", "p50", "p95", "p99", "max", "longest_line"}, "eval_tokens"});
/// InvalidArgument with the script's own line when it cannot.
StatusOr<nlohmann::json> CheckChatTemplate(const LaunchOptions& options, bool assistant_only_loss);

/// `finetune-launch --status RUN`: what RUN/manifest.json says of the run (and, for a Slurm job not
/// yet completed, what squeue or sacct say of it when they are on PATH), as one line. Returns the
/// line and the exit code: 0 finished with status 0, 1 finished otherwise, 3 not finished.
/// NotFound / InvalidArgument when RUN holds no readable manifest.
StatusOr<std::pair<std::string, int>> RunStatus(const std::filesystem::path& run);

/// Refuses, in one line naming the flag, a request whose options contradict each other: GRPO's flags
/// without --trainer grpo, a missing --data (SFT), --model or --out, a malformed --push-to-hub or one
/// with Slurm. RunFinetune checks it first; InvalidArgument.
Status CheckRunRequest(const RunRequest& request);

/// Everything `finetune-launch` does. Returns the trainer's exit status (0 after a dry run);
/// a Status when the run was refused before anything started (bad input, missing backend, a
/// previous run in OUT without `force`).
StatusOr<int> RunFinetune(RunRequest request, const RunOutput& output);

}  // namespace kforge::finetune
