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

}  // namespace

Runner AttachFinetune(CLI::App& sub) {
  struct Args {
    finetune::RunRequest request;
    std::string data, backend = "trl", launcher = "local", out, config, python, eval_data, chat_template,
                      status, trainer = "sft", token_file;
    std::vector<std::string> reward_servers;
  };
  auto args = std::make_shared<Args>();
  finetune::LaunchOptions& o = args->request.launch;
  finetune::TrainingSettings& t = o.training;
  sub.add_option("--data", args->data,
                 "Dataset: JSONL of messages or prompt/completion records; - reads it from stdin (kept in the "
                 "cache)");
  sub.add_option("--model", o.model, "Base model: a local folder or a hub id org/name");
  sub.add_option("--backend", args->backend, "Trainer: trl or axolotl")
      ->check(CLI::IsMember(finetune::kBackendNames.Names()))
      ->default_val("trl");
  sub.add_option("--trainer", args->trainer,
                 "sft (a dataset) or grpo (reinforcement learning, kforge serve as the reward)")
      ->check(CLI::IsMember(finetune::kTrainerNames.Names()))
      ->default_val("sft");
  sub.add_option(
         "--reward-server", args->reward_servers,
         "--trainer grpo: a kforge serve socket or HOST:PORT (repeat, or comma-separate, for several)")
      ->delimiter(',');
  sub.add_option("--token-file", args->token_file, "--trainer grpo: the bearer token's file for TCP servers");
  sub.add_option("--rl-protocol", o.grpo.protocol,
                 "--trainer grpo: the protocol the model answers in: text or tools")
      ->check(CLI::IsMember({"text", "tools"}))
      ->default_val("text");
  sub.add_option("--num-generations", o.grpo.num_generations, "--trainer grpo: completions per prompt")
      ->default_val(4)
      ->check(CLI::Range(2, 1024));
  sub.add_option("--max-completion-len", o.grpo.max_completion_length,
                 "--trainer grpo: longest completion in tokens")
      ->default_val(1024)
      ->check(CLI::Range(16, 1 << 20));
  sub.add_option("--launcher", args->launcher, "local, accelerate, torchrun or slurm")
      ->check(CLI::IsMember(finetune::kLauncherNames.Names()))
      ->default_val("local");
  sub.add_option("--out", args->out, "Run folder: trainer config, logs, checkpoints, manifest.json");
  sub.add_option("--status", args->status,
                 "Print the state of the run in this folder (from its manifest) and exit");
  sub.add_option("--eval-data", args->eval_data,
                 "Validation set (in the format of --data), evaluated each epoch");
  sub.add_option("--chat-template", args->chat_template,
                 "Chat template (.jinja) for the check and training, instead of the tokenizer's");
  sub.add_flag("--resume", o.resume, "Continue the run in --out from its last checkpoint");
  sub.add_option("--report-to", t.report_to, "Where metrics go: none, tensorboard, wandb or trackio")
      ->check(CLI::IsMember({"none", "tensorboard", "wandb", "trackio"}))
      ->default_val("none");
  sub.add_flag("--packing", t.packing, "Pack several rows into each sequence");
  sub.add_option("--push-to-hub", args->request.push_to_hub,
                 "After training, upload DIR/model to this Hugging Face Hub model repository (org/name)");
  sub.add_option("--partition", o.slurm.partition, "Slurm partition");
  sub.add_option("--account", o.slurm.account, "Slurm account");
  sub.add_option("--time", o.slurm.time, "Slurm time limit (minutes, HH:MM:SS or D-HH:MM:SS)");
  sub.add_option("--mem", o.slurm.mem, "Slurm memory per node, e.g. 200G");
  sub.add_option("--cpus-per-task", o.slurm.cpus_per_task, "Slurm CPUs per node's task (default 8 per GPU)")
      ->check(CLI::Range(1, 4096));
  sub.add_flag("--lora", t.lora, "Train LoRA adapters (peft) instead of all weights");
  sub.add_option("--config", args->config, "Trainer settings (YAML or JSON) merged over kforge's");
  sub.add_flag("--dry-run", args->request.dry_run,
               "Check and render only; print the command (and sbatch script)");
  sub.add_option("--nodes", o.nodes, "Machines")->default_val(1)->check(CLI::Range(1, 4096));
  sub.add_option("--gpus-per-node", o.gpus_per_node, "GPUs (processes) per machine; 0: CPU only, one process")
      ->default_val(1)
      ->check(CLI::Range(0, 64));
  sub.add_option("--epochs", t.epochs, "Passes over the data")
      ->default_val(2)
      ->check(CLI::Range(0.01, 1000.0));
  sub.add_option("--lr", t.learning_rate, "Peak learning rate (default 2e-5, or 2e-4 with --lora)")
      ->check(CLI::Range(1e-12, 10.0));
  sub.add_option("--max-seq-len", t.max_seq_len, "Longest sequence in tokens (default: from the data)")
      ->check(CLI::Range(int64_t{16}, int64_t{1} << 22));
  sub.add_option("--batch-size", t.batch_size, "Sequences per GPU and step")
      ->default_val(1)
      ->check(CLI::Range(1, 4096));
  sub.add_option("--grad-accum", t.grad_accum, "Gradient accumulation steps")
      ->default_val(8)
      ->check(CLI::Range(1, 4096));
  sub.add_option("--max-steps", t.max_steps, "Stop after this many updates (default: the epochs decide)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 40));
  sub.add_option("--python", args->python,
                 "Python for the trainer (default: $KFORGE_PYTHON, the kforge venv, the build's Python, python3)");
  sub.add_flag("--force", args->request.force, "Replace a previous run in --out");

  return [args]() -> int {
    if (!args->status.empty()) {
      auto state = finetune::RunStatus(fs::absolute(args->status).lexically_normal());
      if (!state.ok()) {
        return Fail(kCommand, "--status: " + state.status().message());
      }
      std::printf("%s\n", state->first.c_str());
      return state->second;
    }
    finetune::LaunchOptions& o = args->request.launch;
    o.trainer = *finetune::kTrainerNames.Parse(args->trainer);  // checked by the flag
    const bool grpo = o.trainer == finetune::Trainer::kGrpo;
    if (!grpo && (!args->reward_servers.empty() || !args->token_file.empty())) {
      return Fail(kCommand, "--reward-server and --token-file need --trainer grpo");
    }
    for (const auto& [flag, value] : {std::pair<const char*, const std::string&>{"--data", args->data},
                                      {"--model", args->request.launch.model},
                                      {"--out", args->out}}) {
      if (grpo && std::string(flag) == "--data") continue;  // optional: the server's tasks by default
      if (value.empty()) {
        return Fail(kCommand, std::string(flag) + " is required (or --status RUN)");
      }
    }
    for (const std::string& server : args->reward_servers) {
      // A socket path is made absolute (the trainer may run elsewhere); HOST:PORT stays as given.
      const bool path = server.find('/') != std::string::npos || server.rfind("unix:", 0) == 0;
      o.grpo.servers.push_back(
          path && server.rfind("unix:", 0) != 0 ? fs::absolute(server).lexically_normal().string() : server);
    }
    if (!args->token_file.empty()) {
      std::error_code ec;
      if (!fs::is_regular_file(args->token_file, ec)) {
        return Fail(kCommand, std::string("--token-file ") + args->token_file + ": no such file");
      }
      o.grpo.token_file = fs::absolute(args->token_file).lexically_normal();
    }
    if (!args->eval_data.empty()) {
      o.eval_data = fs::absolute(args->eval_data).lexically_normal();
      if (finetune::IsConvertedData(args->eval_data)) o.eval_data_source = finetune::DataSource(args->eval_data);
    }
    if (!args->chat_template.empty()) {
      std::error_code ec;
      if (!fs::is_regular_file(args->chat_template, ec)) {
        return Fail(kCommand, std::string("--chat-template ") + args->chat_template + ": no such file");
      }
      o.chat_template = fs::absolute(args->chat_template).lexically_normal().string();
    }
    o.backend = *finetune::kBackendNames.Parse(args->backend);  // checked by the flag
    o.launcher = *finetune::kLauncherNames.Parse(args->launcher);
    StdinSpool stdin_data(StdinSpool::Keep::kInCache);  // a launched trainer reads it after kforge exits
    if (Status read = stdin_data.Replace(args->data); !read.ok()) {
      return Fail(kCommand, "--data " + read.message());
    }
    if (!args->data.empty()) o.data = fs::absolute(args->data).lexically_normal();
    if (!args->data.empty() && finetune::IsConvertedData(args->data))
      o.data_source = finetune::DataSource(args->data);
    o.out = fs::absolute(args->out).lexically_normal();
    o.python = args->python.empty() ? common::FindPython() : args->python;
    o.trl_script = TrlScript();
    args->request.hub_script = o.trl_script.parent_path().parent_path() / "hub_push.py";
    if (const char* addr = std::getenv("MASTER_ADDR")) o.master_addr = addr;
    if (const char* port = std::getenv("MASTER_PORT"); port && *port) o.master_port = std::atoi(port);
    if (const char* rank = std::getenv("NODE_RANK")) o.node_rank = rank;
    if (!args->config.empty()) {
      auto overrides = finetune::ReadOverrides(args->config, o);
      if (!overrides.ok()) {
        return Fail(kCommand, overrides.status());
      }
      o.overrides = std::move(*overrides);
    }
    finetune::RunOutput output;
    output.note = [](const std::string& line) {
      std::fprintf(stderr, "finetune-launch: %s\n", line.c_str());
    };
    output.print = [](const std::string& text) {
      std::fwrite(text.data(), 1, text.size(), stdout);
      std::fflush(stdout);
    };
    auto status = finetune::RunFinetune(args->request, output);
    if (!status.ok()) {
      return Fail(kCommand, status.status());
    }
    return *status;
  };
}

}  // namespace kforge::cli
