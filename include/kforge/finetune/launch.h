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

#include "kforge/common/names.h"
#include "kforge/common/status.h"

namespace kforge::finetune {

struct DatasetStats;  // what the dataset check found (src/finetune/dataset.h)

enum class Backend { kTrl, kAxolotl };
inline constexpr common::NameTable<Backend, 2> kBackendNames = {
    {{Backend::kTrl, "trl"}, {Backend::kAxolotl, "axolotl"}}};
static_assert(kBackendNames.MatchesEnum());
inline std::string_view BackendName(Backend backend) { return kBackendNames.Name(backend); }

/// What is trained: supervised fine-tuning on a dataset, or GRPO (reinforcement learning) with
/// kforge's completion judge as the reward (TRL only; docs/rl.md).
enum class Trainer { kSft, kGrpo };
inline constexpr common::NameTable<Trainer, 2> kTrainerNames = {
    {{Trainer::kSft, "sft"}, {Trainer::kGrpo, "grpo"}}};
static_assert(kTrainerNames.MatchesEnum());
inline std::string_view TrainerName(Trainer trainer) { return kTrainerNames.Name(trainer); }

/// GRPO's own settings (--trainer grpo).
struct GrpoSettings {
  /// `kforge serve` addresses the reward is asked of (socket paths or HOST:PORT); at least one.
  std::vector<std::string> servers;
  /// The bearer token's file for TCP servers (absolute); empty: none.
  std::filesystem::path token_file;
  /// The protocol the model answers in: "text" (default) or "tools".
  std::string protocol = "text";
  /// Completions sampled per prompt (a group). Default 4.
  int num_generations = 4;
  /// Longest completion in tokens. Default 1024.
  int max_completion_length = 1024;
};

enum class Launcher { kLocal, kAccelerate, kTorchrun, kSlurm };
inline constexpr common::NameTable<Launcher, 4> kLauncherNames = {{{Launcher::kLocal, "local"},
                                                                   {Launcher::kAccelerate, "accelerate"},
                                                                   {Launcher::kTorchrun, "torchrun"},
                                                                   {Launcher::kSlurm, "slurm"}}};
static_assert(kLauncherNames.MatchesEnum());
inline std::string_view LauncherName(Launcher launcher) { return kLauncherNames.Name(launcher); }

/// The trainer's settings that kforge sets itself; everything else comes from the trainer's own
/// defaults or the --config overrides.
struct TrainingSettings {
  /// LoRA adapters (peft) instead of full fine-tuning. Default false.
  bool lora = false;
  /// Passes over the data. Default 2.
  double epochs = 2;
  /// Peak learning rate; 0 (default) means 2e-4 with LoRA and 2e-5 without.
  double learning_rate = 0;
  /// Longest sequence in tokens; 0 (default) means from the data: the measured tokens of the longest
  /// row (MeasuredMaxSeqLen) when the chat template check ran, else DefaultMaxSeqLen's estimate.
  int64_t max_seq_len = 0;
  /// Where max_seq_len came from, for the manifest and the notes: "--max-seq-len", "measured"
  /// (tokens of every row with the model's tokenizer and chat template) or "estimated" (characters).
  std::string max_seq_len_basis = "estimated";
  /// Sequences per device and step. Default 1.
  int batch_size = 1;
  /// Steps whose gradients are summed before an update. Default 8.
  int grad_accum = 8;
  /// Stop after this many updates; 0 (default) means the epochs decide.
  int64_t max_steps = 0;
  /// Where the trainer reports metrics: "none" (default), "tensorboard", "wandb" or "trackio".
  std::string report_to = "none";
  /// Pack several rows into each sequence (TRL `packing`, axolotl `sample_packing`). Default false.
  bool packing = false;
};

/// What a Slurm job asks for beyond its nodes and GPUs. Empty strings leave the cluster's default.
struct SlurmOptions {
  std::string partition;
  std::string account;
  std::string time;  ///< the wall-clock limit, as sbatch reads it ("2-00:00:00", "90")
  std::string mem;   ///< memory per node, as sbatch reads it ("200G")
  /// CPUs for the node's one task (which runs every GPU's process); 0 (default) means
  /// kCpusPerGpu per GPU.
  int cpus_per_task = 0;
};

/// CPUs per GPU a Slurm job asks for without --cpus-per-task: data loading and the tokenizer's
/// threads for each training process.
inline constexpr int kCpusPerGpu = 8;

struct LaunchOptions {
  /// The JSONL dataset, absolute.
  std::filesystem::path data;
  /// What --data and --eval-data named when it is not JSON lines: a Parquet file (absolute) or a Hub
  /// dataset id `org/name[:split]`; the rows are written as JSON lines into DIR/data/ before the check
  /// (RunFinetune), and `data`/`eval_data` name those files. Empty: `data` is the file given.
  std::string data_source, eval_data_source;
  /// A local model folder (absolute) or a Hugging Face hub id.
  std::string model;
  /// The trainer. Default TRL.
  Backend backend = Backend::kTrl;
  /// SFT (default) or GRPO; GRPO's settings. With GRPO, `data` is optional: JSON lines with a
  /// `task_id` column naming the tasks to train on (default: every task of the first server).
  Trainer trainer = Trainer::kSft;
  GrpoSettings grpo;
  /// How its processes start. Default local (one plain Python process).
  Launcher launcher = Launcher::kLocal;
  /// The run folder, absolute; nothing is written outside it.
  std::filesystem::path out;
  /// Machines, and GPUs (processes) on each. Default 1 and 1. No GPU (0) is a CPU-only run: one
  /// process per machine, and no GPU asked of Slurm (a CPU partition, a smoke test of the pipeline).
  int nodes = 1;
  int gpus_per_node = 1;
  /// The trainer's settings that kforge's flags set.
  TrainingSettings training;
  /// A validation set (absolute; empty: none), evaluated at each epoch's end and after training.
  std::filesystem::path eval_data;
  /// A chat template (a .jinja file, absolute; empty: the tokenizer's own) for the check and training.
  std::string chat_template;
  /// That template's text (axolotl takes it inline), read by the caller.
  std::string chat_template_text;
  /// Continue from the last checkpoint in OUT/checkpoints instead of starting over. Default false.
  bool resume = false;
  /// Slurm's resources (the slurm launcher only).
  SlurmOptions slurm;
  /// Trainer settings from --config, merged over kforge's (an object; null values remove a key).
  nlohmann::json overrides = nlohmann::json::object();
  /// The Python that runs the TRL script (and whose folder holds accelerate, torchrun, axolotl).
  /// Default python3.
  std::string python = "python3";
  /// scripts/finetune/sft_trl.py, absolute; grpo_trl.py beside it runs GRPO.
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

/// Trainer processes per machine: one per GPU, and one on a CPU-only run (gpus_per_node 0).
inline int ProcessesPerNode(const LaunchOptions& o) { return o.gpus_per_node > 0 ? o.gpus_per_node : 1; }

/// The sequence length when none is given: the smallest histogram bound (a power of two) that
/// holds the longest record's approximate tokens plus a quarter (for the chat template's own
/// tokens), from 512 to 32768.
int64_t DefaultMaxSeqLen(const DatasetStats& stats);

/// The sequence length from measured token counts: the longest row's tokens (percentile 100: every
/// row fits whole) rounded up to a multiple of 64.
int64_t MeasuredMaxSeqLen(int64_t longest_tokens);

/// The sequence length a launch uses: TrainingSettings::max_seq_len, else DefaultMaxSeqLen.
int64_t MaxSeqLen(const TrainingSettings& training, const DatasetStats& stats);

/// Records longer than MaxSeqLen in approximate tokens: DatasetStats::cut when the length was
/// given (the check counted at it), else from the histogram (exact: the default is a bound).
int64_t RecordsCut(const TrainingSettings& training, const DatasetStats& stats);

/// Checks the options against each other and the data, and renders the launch. InvalidArgument
/// (one line, naming the flag) for combinations that cannot run: more than one process with the
/// local launcher, several nodes without a rendezvous address, axolotl with prompt/completion data,
/// a run folder or Slurm option that #SBATCH lines cannot hold.
StatusOr<LaunchPlan> PlanLaunch(const LaunchOptions& options, const DatasetStats& stats);

/// `value` quoted for a POSIX shell (single quotes; as is when it holds only safe characters).
std::string ShellQuote(std::string_view value);
/// `argv` as one shell command line, each argument quoted.
std::string ShellJoin(const std::vector<std::string>& argv);

}  // namespace kforge::finetune
