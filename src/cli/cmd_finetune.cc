// `kforge finetune-launch`: check a dataset, render a trainer launch (TRL or axolotl; local,
// accelerate, torchrun or Slurm) into a run folder, run it and record a manifest.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <utility>

#include "cli/command.h"
#include "cli/options.h"
#include "cli/run_inputs.h"
#include "kforge/common/python.h"
#include "kforge/finetune/run.h"

namespace kforge::cli {
namespace {

namespace fs = std::filesystem;
using finetune::Backend;
using finetune::Launcher;

constexpr const char* kCommand = "finetune-launch";

fs::path TrlScript() { return ScriptPath("finetune/sft_trl.py"); }

/// finetune-launch's flags: the request's options bound directly, and the texts turned into them.
struct FinetuneFlags {
  finetune::RunRequest request;
  std::string data, backend = "trl", launcher = "local", out, config, python, eval_data, chat_template, status,
                    trainer = "sft", token_file;
  std::vector<std::string> reward_servers;
};

/// What to train and where: --data, --model, --backend, --trainer, GRPO's flags ... --force.
void AddRunFlags(CLI::App& sub, FinetuneFlags& f) {
  finetune::LaunchOptions& o = f.request.launch;
  sub.add_option("--data", f.data,
                 "Dataset: JSONL of messages or prompt/completion records; - reads it from stdin (kept in the "
                 "cache)");
  sub.add_option("--model", o.model, "Base model: a local folder or a hub id org/name");
  sub.add_option("--backend", f.backend, "Trainer: trl or axolotl")
      ->check(CLI::IsMember(finetune::kBackendNames.Names()))
      ->default_val("trl");
  sub.add_option("--trainer", f.trainer, "sft (a dataset) or grpo (reinforcement learning, kforge serve as the reward)")
      ->check(CLI::IsMember(finetune::kTrainerNames.Names()))
      ->default_val("sft");
  sub.add_option("--reward-server", f.reward_servers,
                 "--trainer grpo: a kforge serve socket or HOST:PORT (repeat, or comma-separate, for several)")
      ->delimiter(',');
  sub.add_option("--token-file", f.token_file, "--trainer grpo: the bearer token's file for TCP servers");
  sub.add_option("--rl-protocol", o.grpo.protocol, "--trainer grpo: the protocol the model answers in: text or tools")
      ->check(CLI::IsMember({"text", "tools"}))
      ->default_val("text");
  sub.add_option("--num-generations", o.grpo.num_generations, "--trainer grpo: completions per prompt")
      ->default_val(4)
      ->check(CLI::Range(2, 1024));
  sub.add_option("--max-completion-len", o.grpo.max_completion_length, "--trainer grpo: longest completion in tokens")
      ->default_val(1024)
      ->check(CLI::Range(16, 1 << 20));
  sub.add_option("--out", f.out, "Run folder: trainer config, logs, checkpoints, manifest.json");
  sub.add_option("--status", f.status, "Print the state of the run in this folder (from its manifest) and exit");
  sub.add_option("--eval-data", f.eval_data, "Validation set (in the format of --data), evaluated each epoch");
  sub.add_option("--chat-template", f.chat_template,
                 "Chat template (.jinja) for the check and training, instead of the tokenizer's");
  sub.add_flag("--resume", o.resume, "Continue the run in --out from its last checkpoint");
  sub.add_option("--push-to-hub", f.request.push_to_hub,
                 "After training, upload DIR/model to this Hugging Face Hub model repository (org/name)");
  sub.add_option("--config", f.config, "Trainer settings (YAML or JSON) merged over kforge's");
  sub.add_flag("--dry-run", f.request.dry_run, "Check and render only; print the command (and sbatch script)");
  sub.add_option("--python", f.python,
                 "Python for the trainer (default: $KFORGE_PYTHON, the kforge venv, the build's Python, python3)");
  sub.add_flag("--force", f.request.force, "Replace a previous run in --out");
}

/// Where and how it runs: --launcher, Slurm's flags, machines and GPUs.
void AddLaunchFlags(CLI::App& sub, FinetuneFlags& f) {
  finetune::LaunchOptions& o = f.request.launch;
  sub.add_option("--launcher", f.launcher, "local, accelerate, torchrun or slurm")
      ->check(CLI::IsMember(finetune::kLauncherNames.Names()))
      ->default_val("local");
  sub.add_option("--partition", o.slurm.partition, "Slurm partition");
  sub.add_option("--account", o.slurm.account, "Slurm account");
  sub.add_option("--time", o.slurm.time, "Slurm time limit (minutes, HH:MM:SS or D-HH:MM:SS)");
  sub.add_option("--mem", o.slurm.mem, "Slurm memory per node, e.g. 200G");
  sub.add_option("--cpus-per-task", o.slurm.cpus_per_task, "Slurm CPUs per node's task (default 8 per GPU)")
      ->check(CLI::Range(1, 4096));
  sub.add_option("--nodes", o.nodes, "Machines")->default_val(1)->check(CLI::Range(1, 4096));
  sub.add_option("--gpus-per-node", o.gpus_per_node, "GPUs (processes) per machine; 0: CPU only, one process")
      ->default_val(1)
      ->check(CLI::Range(0, 64));
}

/// The training's settings: --epochs, --lr, --lora ... --report-to.
void AddTrainingFlags(CLI::App& sub, FinetuneFlags& f) {
  finetune::TrainingSettings& t = f.request.launch.training;
  sub.add_option("--report-to", t.report_to, "Where metrics go: none, tensorboard, wandb or trackio")
      ->check(CLI::IsMember({"none", "tensorboard", "wandb", "trackio"}))
      ->default_val("none");
  sub.add_flag("--packing", t.packing, "Pack several rows into each sequence");
  sub.add_flag("--lora", t.lora, "Train LoRA adapters (peft) instead of all weights");
  sub.add_option("--epochs", t.epochs, "Passes over the data")->default_val(2)->check(CLI::Range(0.01, 1000.0));
  sub.add_option("--lr", t.learning_rate, "Peak learning rate (default 2e-5, or 2e-4 with --lora)")
      ->check(CLI::Range(1e-12, 10.0));
  sub.add_option("--max-seq-len", t.max_seq_len, "Longest sequence in tokens (default: from the data)")
      ->check(CLI::Range(int64_t{16}, int64_t{1} << 22));
  sub.add_option("--batch-size", t.batch_size, "Sequences per GPU and step")->default_val(1)->check(CLI::Range(1, 4096));
  sub.add_option("--grad-accum", t.grad_accum, "Gradient accumulation steps")->default_val(8)->check(CLI::Range(1, 4096));
  sub.add_option("--max-steps", t.max_steps, "Stop after this many updates (default: the epochs decide)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 40));
}

fs::path Absolute(const std::string& path) { return fs::absolute(path).lexically_normal(); }

/// A file flag's value made absolute; InvalidArgument naming the flag when it is no file.
StatusOr<fs::path> ExistingFile(const char* flag, const std::string& path) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) return Status::InvalidArgument(std::string(flag) + " " + path + ": no such file");
  return Absolute(path);
}

/// Turns the flags into the request: names parsed, paths made absolute, stdin spooled, --config read.
/// The checks across options are the library's (finetune::CheckRunRequest), made before any input is
/// read.
Status ToRequest(FinetuneFlags& f, StdinSpool& stdin_data) {
  finetune::LaunchOptions& o = f.request.launch;
  o.trainer = *finetune::kTrainerNames.Parse(f.trainer);  // checked by the flag
  o.backend = *finetune::kBackendNames.Parse(f.backend);
  o.launcher = *finetune::kLauncherNames.Parse(f.launcher);
  for (const std::string& server : f.reward_servers) {
    // A socket path is made absolute (the trainer may run elsewhere); HOST:PORT stays as given.
    const bool path = server.find('/') != std::string::npos || server.rfind("unix:", 0) == 0;
    o.grpo.servers.push_back(path && server.rfind("unix:", 0) != 0 ? Absolute(server).string() : server);
  }
  if (!f.token_file.empty()) o.grpo.token_file = f.token_file;
  if (!f.data.empty()) o.data = f.data;
  if (!f.out.empty()) o.out = Absolute(f.out);
  KFORGE_RETURN_IF_ERROR(finetune::CheckRunRequest(f.request));
  if (!f.token_file.empty()) {
    KFORGE_ASSIGN_OR_RETURN(o.grpo.token_file, ExistingFile("--token-file", f.token_file));
  }
  if (!f.eval_data.empty()) {
    o.eval_data = Absolute(f.eval_data);
    if (finetune::IsConvertedData(f.eval_data)) o.eval_data_source = finetune::DataSource(f.eval_data);
  }
  if (!f.chat_template.empty()) {
    KFORGE_ASSIGN_OR_RETURN(fs::path chat_template, ExistingFile("--chat-template", f.chat_template));
    o.chat_template = chat_template.string();
  }
  if (Status read = stdin_data.Replace(f.data); !read.ok()) return Status::InvalidArgument("--data " + read.message());
  if (!f.data.empty()) o.data = Absolute(f.data);
  if (!f.data.empty() && finetune::IsConvertedData(f.data)) o.data_source = finetune::DataSource(f.data);
  o.python = f.python.empty() ? common::FindPython() : f.python;
  o.trl_script = TrlScript();
  f.request.hub_script = o.trl_script.parent_path().parent_path() / "hub_push.py";
  if (const char* addr = std::getenv("MASTER_ADDR")) o.master_addr = addr;
  if (const char* port = std::getenv("MASTER_PORT"); port && *port) o.master_port = std::atoi(port);
  if (const char* rank = std::getenv("NODE_RANK")) o.node_rank = rank;
  if (!f.config.empty()) {
    KFORGE_ASSIGN_OR_RETURN(o.overrides, finetune::ReadOverrides(f.config, o));
  }
  return Status::Ok();
}

int RunFinetuneCommand(FinetuneFlags& f) {
  if (!f.status.empty()) {
    auto state = finetune::RunStatus(Absolute(f.status));
    if (!state.ok()) return Fail(kCommand, state.status().WithContext("--status"));
    std::printf("%s\n", state->first.c_str());
    return state->second;
  }
  StdinSpool stdin_data(StdinSpool::Keep::kInCache);  // a launched trainer reads it after kforge exits
  if (Status usage = ToRequest(f, stdin_data); !usage.ok()) return Fail(kCommand, usage);
  finetune::RunOutput output;
  output.note = [](const std::string& line) { std::fprintf(stderr, "finetune-launch: %s\n", line.c_str()); };
  output.print = [](const std::string& text) {
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fflush(stdout);
  };
  auto status = finetune::RunFinetune(f.request, output);
  if (!status.ok()) return Fail(kCommand, status.status());
  return *status;
}

}  // namespace

Runner AttachFinetune(CLI::App& sub) {
  auto flags = std::make_shared<FinetuneFlags>();
  AddRunFlags(sub, *flags);
  AddLaunchFlags(sub, *flags);
  AddTrainingFlags(sub, *flags);
  return [flags] { return RunFinetuneCommand(*flags); };
}

}  // namespace kforge::cli
