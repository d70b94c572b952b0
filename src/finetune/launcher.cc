// PlanLaunch: the option checks, the trainer's config file and the launcher's argument vector.
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <regex>
#include <string>
#include <utility>

#include "finetune/launchers.h"
#include "finetune/trainer_config.h"

namespace kforge::finetune {
namespace {

namespace fs = std::filesystem;

/// #SBATCH lines are not read by a shell (no quoting) and '%' starts a Slurm file pattern.
bool SbatchSafePath(const std::string& path) {
  return std::all_of(path.begin(), path.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) ||
           std::string_view("._/+-").find(c) != std::string_view::npos;
  });
}

Status CheckCombination(const LaunchOptions& o, const DatasetStats& stats) {
  const int processes = o.nodes * ProcessesPerNode(o);
  if (o.launcher == Launcher::kLocal && processes > 1)
    return Status::InvalidArgument(
        "--launcher local runs one process; use accelerate, torchrun or slurm for " +
        std::to_string(processes) + " GPUs");
  if (o.nodes > 1 && (o.launcher == Launcher::kAccelerate || o.launcher == Launcher::kTorchrun)) {
    if (o.master_addr.empty())
      return Status::InvalidArgument(
          std::string("--nodes ") + std::to_string(o.nodes) + " with --launcher " +
          std::string(LauncherName(o.launcher)) +
          " needs MASTER_ADDR (the first node's address) in the environment of every "
          "node; or use --launcher slurm");
    if (o.launcher == Launcher::kAccelerate && o.node_rank.empty())
      return Status::InvalidArgument(
          "--nodes " + std::to_string(o.nodes) +
          " with --launcher accelerate needs NODE_RANK (this node's index, 0 on the "
          "first) in the environment");
  }
  if (o.trainer == Trainer::kGrpo && o.backend != Backend::kTrl)
    return Status::InvalidArgument("--trainer grpo runs with --backend trl");
  if (o.trainer == Trainer::kGrpo && o.grpo.servers.empty())
    return Status::InvalidArgument(
        "--trainer grpo needs --reward-server (a kforge serve socket or HOST:PORT)");
  if (o.trainer == Trainer::kSft && o.backend == Backend::kAxolotl &&
      stats.format != DatasetFormat::kMessages)
    return Status::InvalidArgument("--backend axolotl takes messages records; " + o.data.string() +
                                   " holds prompt/completion records (use --backend trl)");
  if (o.launcher == Launcher::kSlurm && !SbatchSafePath(o.out.string()))
    return Status::InvalidArgument(
        "--out " + o.out.string() +
        ": with --launcher slurm the folder's path may hold only letters, digits and "
        "._/+- (#SBATCH lines are not shell-quoted)");
  const SlurmOptions& slurm = o.slurm;
  const bool any_slurm = !slurm.partition.empty() || !slurm.account.empty() || !slurm.time.empty() ||
                         !slurm.mem.empty() || slurm.cpus_per_task > 0;
  if (any_slurm && o.launcher != Launcher::kSlurm)
    return Status::InvalidArgument(
        "--partition, --account, --time, --mem and --cpus-per-task need --launcher slurm");
  for (const auto& [flag, value] :
       {std::pair<const char*, const std::string&>{"--partition", slurm.partition},
        {"--account", slurm.account}}) {
    if (!std::all_of(value.begin(), value.end(), [](char c) {
          return std::isalnum(static_cast<unsigned char>(c)) ||
                 std::string_view("_.,-").find(c) != std::string_view::npos;
        }))
      return Status::InvalidArgument(std::string(flag) + " " + value +
                                     ": only letters, digits and _.,- (an #SBATCH line holds it)");
  }
  if (!std::all_of(slurm.time.begin(), slurm.time.end(), [](char c) {
        return std::isdigit(static_cast<unsigned char>(c)) || c == ':' || c == '-';
      }))
    return Status::InvalidArgument("--time " + slurm.time + ": expected minutes, HH:MM:SS or D-HH:MM:SS");
  static const std::regex kMem(R"([0-9]+[KMGT]?)");
  if (!slurm.mem.empty() && !std::regex_match(slurm.mem, kMem))
    return Status::InvalidArgument("--mem " + slurm.mem + ": expected a size such as 200G");
  return Status::Ok();
}

std::vector<std::string> Concat(std::vector<std::string> head, const std::vector<std::string>& tail) {
  head.insert(head.end(), tail.begin(), tail.end());
  return head;
}

std::vector<std::string> LauncherArgv(const LaunchOptions& o, const fs::path& config) {
  const std::vector<std::string> trainer = TrainerArgs(o, config);
  const std::string gpus = std::to_string(ProcessesPerNode(o));
  const std::string nodes = std::to_string(o.nodes);
  switch (o.launcher) {
    case Launcher::kLocal:
      if (o.backend == Backend::kAxolotl) return {Beside(o.python, "axolotl"), "train", config.string()};
      return Concat({o.python}, trainer);
    case Launcher::kAccelerate: {
      std::vector<std::string> argv = {Beside(o.python, "accelerate"), "launch", "--num_processes",
                                       std::to_string(o.nodes * ProcessesPerNode(o))};
      if (o.nodes > 1)
        argv = Concat(argv, {"--num_machines", nodes, "--machine_rank", o.node_rank, "--main_process_ip",
                             o.master_addr, "--main_process_port", std::to_string(o.master_port)});
      return Concat(argv, trainer);
    }
    case Launcher::kTorchrun: {
      std::vector<std::string> argv = {Beside(o.python, "torchrun"), "--nproc_per_node", gpus, "--nnodes",
                                       nodes};
      if (o.nodes > 1)
        argv = Concat(argv,
                      {"--rdzv_backend", "c10d", "--rdzv_endpoint",
                       o.master_addr + ":" + std::to_string(o.master_port), "--rdzv_id", "kforge-finetune"});
      return Concat(argv, trainer);
    }
    case Launcher::kSlurm:
      return {"sbatch", (o.out / kSbatchFile).string()};
  }
  return {};
}

}  // namespace

int64_t DefaultMaxSeqLen(const DatasetStats& stats) {
  const int64_t longest = ApproxTokens(stats.max_chars) * 5 / 4;  // the chat template's tokens too
  for (int64_t bound : kHistogramBounds)
    if (bound >= 512 && bound >= longest) return std::min<int64_t>(bound, 32768);
  return 32768;
}

int64_t MeasuredMaxSeqLen(int64_t longest_tokens) {
  return std::max<int64_t>(64, (longest_tokens + 63) / 64 * 64);
}

int64_t MaxSeqLen(const TrainingSettings& training, const DatasetStats& stats) {
  return training.max_seq_len > 0 ? training.max_seq_len : DefaultMaxSeqLen(stats);
}

int64_t RecordsCut(const TrainingSettings& training, const DatasetStats& stats) {
  return training.max_seq_len > 0 ? stats.cut : stats.LongerThan(DefaultMaxSeqLen(stats));
}

std::string PythonFolder(const std::string& python) {
  const fs::path interpreter(python);
  return interpreter.has_parent_path() ? interpreter.parent_path().string() : std::string();
}

std::string Beside(const std::string& python, const char* program) {
  const std::string folder = PythonFolder(python);
  if (folder.empty()) return program;
  const fs::path candidate = fs::path(folder) / program;
  return access(candidate.c_str(), X_OK) == 0 ? candidate.string() : std::string(program);
}

std::vector<std::string> TrainerArgs(const LaunchOptions& o, const fs::path& config) {
  if (o.backend == Backend::kAxolotl) return {"-m", "axolotl.cli.train", config.string()};
  if (o.trainer == Trainer::kGrpo) {
    std::string servers;
    for (const std::string& s : o.grpo.servers) servers += (servers.empty() ? "" : ",") + s;
    std::vector<std::string> args = {(o.trl_script.parent_path() / "grpo_trl.py").string(),
                                     "--model",
                                     o.model,
                                     "--servers",
                                     servers,
                                     "--config",
                                     config.string(),
                                     "--save",
                                     (o.out / "model").string(),
                                     "--protocol",
                                     o.grpo.protocol};
    if (!o.data.empty()) args = Concat(args, {"--data", o.data.string()});
    if (!o.grpo.token_file.empty()) args = Concat(args, {"--token-file", o.grpo.token_file.string()});
    if (o.training.lora) args = Concat(args, {"--adapter-out", (o.out / "adapter").string()});
    if (o.resume) args.push_back("--resume");
    return args;
  }
  std::vector<std::string> args = {o.trl_script.string(),     "--model",  o.model,         "--data",
                                   o.data.string(),           "--config", config.string(), "--save",
                                   (o.out / "model").string()};
  if (o.training.lora) args = Concat(args, {"--adapter-out", (o.out / "adapter").string()});
  if (!o.eval_data.empty()) args = Concat(args, {"--eval-data", o.eval_data.string()});
  if (!o.chat_template.empty()) args = Concat(args, {"--chat-template", o.chat_template});
  if (o.resume) args.push_back("--resume");
  return args;
}

StatusOr<LaunchPlan> PlanLaunch(const LaunchOptions& o, const DatasetStats& stats) {
  KFORGE_RETURN_IF_ERROR(CheckCombination(o, stats));
  LaunchPlan plan;
  fs::path config;
  if (o.backend == Backend::kTrl) {
    config = o.out / kTrlConfigFile;
    plan.trainer_config = o.trainer == Trainer::kGrpo ? GrpoConfig(o) : TrlConfig(o, stats);
    plan.files.emplace_back(config, plan.trainer_config.dump(2) + "\n");
  } else {
    config = o.out / kAxolotlConfigFile;
    plan.trainer_config = AxolotlConfig(o, stats);
    plan.files.emplace_back(config, "# Written by kforge finetune-launch.\n" + ToYaml(plan.trainer_config));
  }
  if (o.launcher == Launcher::kSlurm) {
    plan.sbatch = RenderSbatch(o, config);
    plan.files.emplace_back(o.out / kSbatchFile, plan.sbatch);
  }
  plan.argv = LauncherArgv(o, config);
  if (const std::string folder = PythonFolder(o.python); !folder.empty()) {
    const char* path = std::getenv("PATH");
    plan.environment.push_back("PATH=" + folder + (path && *path ? ":" + std::string(path) : ""));
  }
  return plan;
}

}  // namespace kforge::finetune
