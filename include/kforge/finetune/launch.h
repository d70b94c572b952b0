// What `kforge finetune-launch` runs: a trainer backend (TRL through scripts/finetune/sft_trl.py, or
// axolotl through a rendered YAML config) under a launcher (plain python, accelerate, torchrun, or a
// Slurm batch script), rendered as argument vectors and files inside the run folder.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "kforge/common/status.h"
#include "kforge/finetune/dataset.h"

namespace kforge::finetune {

enum class Backend { kTrl, kAxolotl };
enum class Launcher { kLocal, kAccelerate, kTorchrun, kSlurm };

/// "trl", "axolotl".
const char* BackendName(Backend backend);
/// "local", "accelerate", "torchrun", "slurm".
const char* LauncherName(Launcher launcher);

/// The trainer's settings that kforge sets itself; everything else comes from the trainer's own
/// defaults or the --config overrides.
struct TrainingSettings {
  /// LoRA adapters (peft) instead of full fine-tuning. Default false.
  bool lora = false;
  /// Passes over the data. Default 2.
  double epochs = 2;
  /// Peak learning rate; 0 (default) means 2e-4 with LoRA and 2e-5 without.
  double learning_rate = 0;
  /// Longest sequence in tokens; 0 (default) means from the data (DefaultMaxSeqLen).
  int64_t max_seq_len = 0;
  /// Sequences per device and step. Default 1.
  int batch_size = 1;
  /// Steps whose gradients are summed before an update. Default 8.
  int grad_accum = 8;
  /// Stop after this many updates; 0 (default) means the epochs decide.
  int64_t max_steps = 0;
};

struct LaunchOptions {
  /// The JSONL dataset, absolute.
  std::filesystem::path data;
  /// A local model folder (absolute) or a Hugging Face hub id.
  std::string model;
  /// The trainer. Default TRL.
  Backend backend = Backend::kTrl;
  /// How its processes start. Default local (one plain Python process).
  Launcher launcher = Launcher::kLocal;
  /// The run folder, absolute; nothing is written outside it.
  std::filesystem::path out;
  /// Machines, and GPUs (processes) on each. Default 1 and 1.
  int nodes = 1;
  int gpus_per_node = 1;
  /// The trainer's settings that kforge's flags set.
  TrainingSettings training;
  /// Trainer settings from --config, merged over kforge's (an object; null values remove a key).
  nlohmann::json overrides = nlohmann::json::object();
  /// The Python that runs the TRL script (and whose folder holds accelerate, torchrun, axolotl).
  /// Default python3.
  std::string python = "python3";
  /// scripts/finetune/sft_trl.py, absolute.
  std::filesystem::path trl_script;
  /// For accelerate and torchrun across several nodes outside Slurm: the first node's address
  /// ($MASTER_ADDR), its port (default 29500), and this node's rank ($NODE_RANK, accelerate only).
  std::string master_addr;
  int master_port = 29500;
  std::string node_rank;
  /// Whether the GPUs that will train have bf16 (false without a GPU), when kforge could ask the
  /// trainer's Python on the machine that trains; unset: the trainer decides (axolotl's `auto`).
  std::optional<bool> bf16;
};

/// What a launch writes into OUT and then runs.
struct LaunchPlan {
  /// Files to write before the command runs: path (inside OUT) and contents.
  std::vector<std::pair<std::filesystem::path, std::string>> files;
  /// The trainer's configuration as rendered (SFTConfig fields, or axolotl's keys), for the manifest.
  nlohmann::json trainer_config;
  /// The command, one argument per element (for Slurm: sbatch and the batch script).
  std::vector<std::string> argv;
  /// Variables ("NAME=value") set for the command on top of kforge's environment: PATH starts with
  /// the Python's folder, as in an activated venv, so that what the trainer starts by name
  /// (axolotl runs `accelerate launch`) comes from the same environment.
  std::vector<std::string> environment;
  /// The Slurm batch script (also among `files`); empty for the other launchers.
  std::string sbatch;
};

/// The sequence length when none is given: the smallest histogram bound (a power of two) that
/// holds the longest record's approximate tokens plus a quarter (for the chat template's own
/// tokens), from 512 to 32768.
int64_t DefaultMaxSeqLen(const DatasetStats& stats);

/// The sequence length a launch uses: TrainingSettings::max_seq_len, else DefaultMaxSeqLen.
int64_t MaxSeqLen(const TrainingSettings& training, const DatasetStats& stats);

/// Records longer than MaxSeqLen in approximate tokens: DatasetStats::cut when the length was
/// given (the check counted at it), else from the histogram (exact: the default is a bound).
int64_t RecordsCut(const TrainingSettings& training, const DatasetStats& stats);

/// Checks the options against each other and the data, and renders the launch. InvalidArgument
/// (one line, naming the flag) for combinations that cannot run: more than one process with the
/// local launcher, several nodes without a rendezvous address, axolotl with prompt/completion data,
/// a run folder that #SBATCH lines cannot name.
StatusOr<LaunchPlan> PlanLaunch(const LaunchOptions& options, const DatasetStats& stats);

/// `value` quoted for a POSIX shell (single quotes; as is when it holds only safe characters).
std::string ShellQuote(std::string_view value);
/// `argv` as one shell command line, each argument quoted.
std::string ShellJoin(const std::vector<std::string>& argv);

}  // namespace kforge::finetune
