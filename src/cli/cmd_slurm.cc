// `kforge slurm generate --array N --out DIR -- GENERATE_ARGS...`: a generate run split over a Slurm job
// array, one shard per array task (`--shard i/N`), each into its own run folder DIR/shard-i, and a
// merge job (afterok) that joins the shards' records into DIR/trajectories.jsonl and reports on them.
// A shard that ended with exit 0 leaves DIR/shard-i/shard.done; a rerun submits only the shards
// without one. Without sbatch on PATH, or with --dry-run, the scripts are written and printed.
#include <CLI/CLI.hpp>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "cli/command.h"
#include "cli/options.h"
#include "kforge/common/subprocess.h"
#include "kforge/finetune/launch.h"

namespace kforge::cli {
namespace {

namespace fs = std::filesystem;

struct SlurmArgs {
  int array = 0;
  fs::path out;
  std::string partition, account, time, mem;
  int gpus_per_task = 1;
  int cpus_per_task = 8;
  bool dry_run = false;
  std::vector<std::string> generate_args;
};

/// A value that goes on an #SBATCH line: letters, digits and _.,:- only (no quoting there).
Status CheckSbatchValue(const char* flag, const std::string& value) {
  for (char c : value)
    if (!std::isalnum(static_cast<unsigned char>(c)) && std::string_view("_.,:-").find(c) == std::string_view::npos)
      return Status::InvalidArgument(std::string(flag) + " " + value + ": only letters, digits and _.,:-");
  return Status::Ok();
}

Status CheckArgs(const SlurmArgs& a) {
  for (const auto& [flag, value] : {std::pair<const char*, const std::string&>{"--partition", a.partition},
                                    {"--account", a.account}, {"--time", a.time}, {"--mem", a.mem}})
    KFORGE_RETURN_IF_ERROR(CheckSbatchValue(flag, value));
  for (const std::string& arg : a.generate_args)
    for (const char* own : {"--out", "--shard"})
      if (arg == own || arg.rfind(std::string(own) + "=", 0) == 0)
        return Status::InvalidArgument(std::string(own) + " after --: kforge slurm sets it for each shard");
  const std::string out = a.out.string();
  if (out.find_first_of("%\n\r\t \"'\\") != std::string::npos)
    return Status::InvalidArgument("--out " + out + ": an #SBATCH line cannot hold '%', quotes, spaces or newlines");
  return Status::Ok();
}

/// The shards without a shard.done marker, as an --array list of ranges ("0-3,5,7-9"); empty when all
/// are done.
std::string Incomplete(const SlurmArgs& a) {
  std::string list;
  for (int i = 0; i < a.array;) {
    if (fs::exists(a.out / ("shard-" + std::to_string(i)) / "shard.done")) {
      ++i;
      continue;
    }
    int last = i;
    while (last + 1 < a.array && !fs::exists(a.out / ("shard-" + std::to_string(last + 1)) / "shard.done")) ++last;
    list += (list.empty() ? "" : ",") + std::to_string(i) + (last > i ? "-" + std::to_string(last) : "");
    i = last + 1;
  }
  return list;
}

std::string Header(const SlurmArgs& a, const std::string& name) {
  std::string s = "#!/bin/bash\n#SBATCH --job-name=" + name + "\n";
  if (!a.partition.empty()) s += "#SBATCH --partition=" + a.partition + "\n";
  if (!a.account.empty()) s += "#SBATCH --account=" + a.account + "\n";
  if (!a.time.empty()) s += "#SBATCH --time=" + a.time + "\n";
  if (!a.mem.empty()) s += "#SBATCH --mem=" + a.mem + "\n";
  return s;
}

std::string ShardsScript(const SlurmArgs& a, const std::string& array_list) {
  using finetune::ShellQuote;
  const std::string out = a.out.string();
  std::string s = Header(a, "kforge-generate");
  s += "#SBATCH --array=" + array_list + "\n";
  s += "#SBATCH --ntasks=1\n#SBATCH --cpus-per-task=" + std::to_string(a.cpus_per_task) + "\n";
  if (a.gpus_per_task > 0) s += "#SBATCH --gpus-per-task=" + std::to_string(a.gpus_per_task) + "\n";
  s += "#SBATCH --output=" + out + "/slurm/shard-%a.log\n";
  s += "# Written by kforge slurm generate: shard $SLURM_ARRAY_TASK_ID of " + std::to_string(a.array) +
       " into its own run folder; shard.done marks a shard that ran to the end.\n";
  s += "set -uo pipefail\n";
  s += "shard=\"$SLURM_ARRAY_TASK_ID\"\n";
  s += "run=" + ShellQuote(out) + "/shard-\"$shard\"\n";
  std::string line = ShellQuote(SelfExecutable().string()) + " generate";
  for (const std::string& arg : a.generate_args) line += " " + ShellQuote(arg);
  line += " --shard \"$shard/" + std::to_string(a.array) + "\" --out \"$run\"";
  s += line + "\nstatus=$?\n";
  s += "[ \"$status\" = 0 ] && mkdir -p \"$run\" && date -u +%Y-%m-%dT%H:%M:%SZ > \"$run/shard.done\"\n";
  return s + "exit \"$status\"\n";
}

std::string MergeScript(const SlurmArgs& a) {
  using finetune::ShellQuote;
  const std::string out = ShellQuote(a.out.string());
  const std::string kforge = ShellQuote(SelfExecutable().string());
  std::string s = Header(a, "kforge-merge");
  s += "#SBATCH --ntasks=1\n#SBATCH --output=" + a.out.string() + "/slurm/merge.log\n";
  s += "# Written by kforge slurm generate: the shards' records in one file (shards hold disjoint\n"
       "# tasks, so no record is there twice), then the report over them.\n";
  s += "set -euo pipefail\n";
  s += "for f in " + out + "/shard-*/trajectories.jsonl; do [ ! -f \"$f\" ] || cat \"$f\"; done > " + out +
       "/trajectories.jsonl.tmp\n";
  s += "mv " + out + "/trajectories.jsonl.tmp " + out + "/trajectories.jsonl\n";
  s += kforge + " report " + out + " > " + out + "/report.txt\n";
  return s;
}

/// Whether `program` is an executable file in a folder of PATH.
bool OnPath(const std::string& program) {
  const char* path = std::getenv("PATH");
  std::string folders = path ? path : "";
  for (size_t start = 0; start <= folders.size();) {
    size_t end = folders.find(':', start);
    if (end == std::string::npos) end = folders.size();
    const fs::path candidate = fs::path(folders.substr(start, end - start)) / program;
    if (end > start && ::access(candidate.c_str(), X_OK) == 0) return true;
    start = end + 1;
  }
  return false;
}

/// Runs `sbatch --parsable ARGS...`: the job id it printed ("123" of "123;cluster"), or why it failed.
StatusOr<std::string> Sbatch(std::vector<std::string> args) {
  args.insert(args.begin(), {"sbatch", "--parsable"});
  common::SpawnOptions spawn;
  spawn.search_path = true;
  spawn.stdin_mode = common::SpawnOptions::Stream::kNull;
  spawn.stdout_mode = common::SpawnOptions::Stream::kPipe;
  KFORGE_ASSIGN_OR_RETURN(common::Subprocess child, common::Subprocess::Spawn(args, spawn));
  std::string printed;
  char buffer[4096];
  for (ssize_t n; (n = ::read(child.stdout_fd(), buffer, sizeof(buffer))) > 0;) printed.append(buffer, n);
  const int status = child.Wait();
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    return Status::Unavailable("sbatch " + args.back() + ": " + common::DescribeExit(status));
  std::string id = printed.substr(0, printed.find_first_of(";\n"));
  if (id.empty()) return Status::Unavailable("sbatch " + args.back() + " printed no job id");
  return id;
}

int Submit(const SlurmArgs& a) {
  const fs::path dir = a.out / "slurm";
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) {
    std::fprintf(stderr, "kforge slurm: --out %s: %s\n", a.out.c_str(), ec.message().c_str());
    return kExitUsage;
  }
  const std::string pending = Incomplete(a);
  if (pending.empty()) {
    std::fprintf(stderr, "slurm: every one of the %d shards is done; nothing to submit\n", a.array);
    return kExitOk;
  }
  std::ofstream(dir / "shards.sbatch") << ShardsScript(a, pending);
  std::ofstream(dir / "merge.sbatch") << MergeScript(a);
  const bool have_sbatch = OnPath("sbatch");
  if (a.dry_run || !have_sbatch) {
    std::printf("%s\n%s", ShardsScript(a, pending).c_str(), MergeScript(a).c_str());
    std::printf("sbatch --parsable %s\nsbatch --parsable --dependency=afterok:<shards job> %s\n",
                (dir / "shards.sbatch").c_str(), (dir / "merge.sbatch").c_str());
    if (!a.dry_run) {
      std::fprintf(stderr, "kforge slurm: sbatch is not on PATH: submit the scripts above\n");
      return kExitUsage;
    }
    return kExitOk;
  }
  auto shards = Sbatch({(dir / "shards.sbatch").string()});
  auto merge = shards.ok() ? Sbatch({"--dependency=afterok:" + *shards, (dir / "merge.sbatch").string()})
                           : StatusOr<std::string>(shards.status());
  if (!merge.ok()) {
    std::fprintf(stderr, "kforge slurm: %s\n", merge.status().message().c_str());
    return kExitFailed;
  }
  std::printf("%s %s\n", shards->c_str(), merge->c_str());
  std::fprintf(stderr, "slurm: submitted job %s (shards %s of %d) and merge job %s after it\n", shards->c_str(),
               pending.c_str(), a.array, merge->c_str());
  return kExitOk;
}

}  // namespace

Runner AttachSlurm(CLI::App& sub) {
  auto a = std::make_shared<SlurmArgs>();
  CLI::App* gen = sub.add_subcommand("generate", "A generate run split over a Slurm job array, then merged");
  sub.require_subcommand(1);
  gen->add_option("--array", a->array, "Shards (array tasks); each runs generate --shard i/N")
      ->required()
      ->check(CLI::Range(1, 100000));
  gen->add_option("--out", a->out, "Folder of the run: shard-i/ per shard, slurm/, the merged records")->required();
  gen->add_option("--partition", a->partition, "Slurm partition");
  gen->add_option("--account", a->account, "Slurm account");
  gen->add_option("--time", a->time, "Slurm time limit per shard");
  gen->add_option("--mem", a->mem, "Slurm memory per shard, e.g. 64G");
  gen->add_option("--gpus-per-task", a->gpus_per_task, "GPUs per shard (0: none, compile-only runs)")
      ->default_val(1)
      ->check(CLI::Range(0, 64));
  gen->add_option("--cpus-per-task", a->cpus_per_task, "CPUs per shard (compiles run on them)")
      ->default_val(8)
      ->check(CLI::Range(1, 1024));
  gen->add_flag("--dry-run", a->dry_run, "Write and print the scripts; submit nothing");
  gen->add_option("generate_args", a->generate_args, "kforge generate's arguments, after --")->required();
  return [a]() {
    a->out = fs::absolute(a->out).lexically_normal();
    if (Status usage = CheckArgs(*a); !usage.ok()) {
      std::fprintf(stderr, "kforge slurm generate: %s\n", usage.message().c_str());
      return kExitUsage;
    }
    return Submit(*a);
  };
}

}  // namespace kforge::cli
