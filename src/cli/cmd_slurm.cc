// `kforge slurm generate|verify|tasks-check --array N --out DIR -- ARGS...`: a batch command split over a
// Slurm job array, one shard per array task (`--shard i/N`), each into its own folder DIR/shard-i, and a
// merge job (afterok) that joins the shards' output: generate's records into DIR/trajectories.jsonl and
// a report on them; verify's verdict lines into DIR/verdicts.jsonl and tasks check's lines into
// DIR/checks.txt, with the shards' summaries added up. A shard that ran to the end leaves
// DIR/shard-i/shard.done; a rerun submits only the shards without one. Without sbatch on PATH, or with
// --dry-run, the scripts are written and printed.
// `kforge slurm serve --nodes N --out DIR --token-file FILE -- ARGS...`: a job of one judge server per
// node (kforge serve --listen), each writing its address into DIR/servers/, where clients find them.
#include <CLI/CLI.hpp>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

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

/// What differs between the batch commands a job array runs.
struct ArrayCommand {
  const char* name;     ///< subcommand of `kforge slurm`
  const char* command;  ///< the kforge command each array task runs
  const char* help;
  /// The file each shard's stdout goes to (DIR/shard-i/FILE) and the merged one (DIR/FILE); empty for
  /// generate, which writes its own run folder (--out DIR/shard-i).
  const char* output;
  const char* summary;  ///< the start of the stderr line that sums a shard up
};

constexpr ArrayCommand kGenerate = {"generate", "generate", "A generate run split over a Slurm job array, then merged",
                                    "", ""};
constexpr ArrayCommand kVerify = {"verify", "verify",
                                  "A verify batch split over a Slurm job array; the verdict lines merged into one file",
                                  "verdicts.jsonl", "verify: "};
constexpr ArrayCommand kTasksCheck = {"tasks-check", "tasks check",
                                      "A tasks check split over a Slurm job array; the check lines merged into one file",
                                      "checks.txt", "tasks check: "};

struct SlurmArgs {
  const ArrayCommand* command = &kGenerate;
  int array = 0;
  fs::path out;
  std::string partition, account, time, mem;
  int gpus_per_task = 1;
  int cpus_per_task = 8;
  bool dry_run = false;
  std::vector<std::string> command_args;  ///< after --
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
  const bool generate = a.command == &kGenerate;
  for (const std::string& arg : a.command_args)
    for (const char* own : {"--out", "--shard", "--junit"}) {
      if (arg != own && arg.rfind(std::string(own) + "=", 0) != 0) continue;
      if (std::string_view(own) == "--shard" || (generate && std::string_view(own) == "--out"))
        return Status::InvalidArgument(std::string(own) + " after --: kforge slurm sets it for each shard");
      if (!generate && std::string_view(own) == "--junit")
        return Status::InvalidArgument("--junit after --: every shard would write the same file");
    }
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

/// The line of an array task that runs its shard and sets `status`, and what follows: generate writes
/// its run folder; verify and tasks check write their lines into the shard's output file, and exit 1
/// there (some solution or task failed) is a shard that ran to the end, which the merge reports.
std::string ShardCommand(const SlurmArgs& a) {
  using finetune::ShellQuote;
  std::string line = ShellQuote(SelfExecutable().string()) + " " + a.command->command;
  for (const std::string& arg : a.command_args) line += " " + ShellQuote(arg);
  line += " --shard \"$shard/" + std::to_string(a.array) + "\"";
  const std::string done = "date -u +%Y-%m-%dT%H:%M:%SZ > \"$run/shard.done\"";
  if (a.command == &kGenerate) {
    line += " --out \"$run\"\nstatus=$?\n";
    return line + "[ \"$status\" = 0 ] && mkdir -p \"$run\" && " + done + "\nexit \"$status\"\n";
  }
  std::string s = "mkdir -p \"$run\"\n";
  s += line + " > \"$run/" + a.command->output + "\" 2> \"$run/stderr.log\"\nstatus=$?\n";
  s += "cat \"$run/stderr.log\" >&2\n";
  s += "# Exit 1: some failed, and their lines say so; 2: a usage or harness error, the shard runs again.\n";
  s += "if [ \"$status\" = 0 ] || [ \"$status\" = 1 ]; then\n";
  s += "  grep '^" + std::string(a.command->summary) + "' \"$run/stderr.log\" > \"$run/summary.txt\" || true\n";
  s += "  " + done + "\n  exit 0\nfi\nexit \"$status\"\n";
  return s;
}

std::string ShardsScript(const SlurmArgs& a, const std::string& array_list) {
  using finetune::ShellQuote;
  const std::string out = a.out.string();
  std::string s = Header(a, std::string("kforge-") + a.command->name);
  s += "#SBATCH --array=" + array_list + "\n";
  s += "#SBATCH --ntasks=1\n#SBATCH --cpus-per-task=" + std::to_string(a.cpus_per_task) + "\n";
  if (a.gpus_per_task > 0) s += "#SBATCH --gpus-per-task=" + std::to_string(a.gpus_per_task) + "\n";
  s += "#SBATCH --output=" + out + "/slurm/shard-%a.log\n";
  s += "# Written by kforge slurm " + std::string(a.command->name) + ": shard $SLURM_ARRAY_TASK_ID of " +
       std::to_string(a.array) + " into its own folder; shard.done marks a shard that ran to the end.\n";
  s += "set -uo pipefail\n";
  s += "shard=\"$SLURM_ARRAY_TASK_ID\"\n";
  s += "run=" + ShellQuote(out) + "/shard-\"$shard\"\n";
  return s + ShardCommand(a);
}

/// The merge of verify or tasks check: the shards' lines in shard order into one file, and their
/// summary lines added up ("verify: 10 solutions, 8 ok, 2 compile_error") into DIR/summary.txt.
std::string MergeLinesScript(const SlurmArgs& a) {
  using finetune::ShellQuote;
  const std::string out = ShellQuote(a.out.string());
  const std::string output = a.command->output;
  const std::string shards = "$(seq 0 " + std::to_string(a.array - 1) + ")";
  std::string s = Header(a, "kforge-merge");
  s += "#SBATCH --ntasks=1\n#SBATCH --output=" + a.out.string() + "/slurm/merge.log\n";
  s += "# Written by kforge slurm " + std::string(a.command->name) + ": the shards' lines in one file, then the sum of\n"
       "# their summaries.\n";
  s += "set -euo pipefail\n";
  s += "for i in " + shards + "; do f=" + out + "/shard-$i/" + output + "; [ ! -f \"$f\" ] || cat \"$f\"; done > " +
       out + "/" + output + ".tmp\n";
  s += "mv " + out + "/" + output + ".tmp " + out + "/" + output + "\n";
  s += "for i in " + shards + "; do f=" + out + "/shard-$i/summary.txt; [ ! -f \"$f\" ] || cat \"$f\"; done |\n";
  s += "  awk -v head=" + ShellQuote(std::string(a.command->summary, std::strlen(a.command->summary) - 1)) +
       " '{ for (i = 1; i < NF; i++) if ($i ~ /^[0-9]+$/) { w = $(i + 1); sub(/[,;]$/, \"\", w);\n"
       "      if (w == \"solution\") w = \"solutions\"; if (!(w in sum)) order[n++] = w; sum[w] += $i } }\n"
       "    END { line = head; for (k = 0; k < n; k++) line = line (k ? \", \" : \" \") sum[order[k]] \" \" order[k];\n"
       "          print line \" (\" NR \" shards)\" }' | tee " + out + "/summary.txt\n";
  return s;
}

std::string MergeScript(const SlurmArgs& a) {
  if (a.command != &kGenerate) return MergeLinesScript(a);
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
    return Fail("slurm", "--out " + a.out.string() + ": " + ec.message());
  }
  const std::string pending = Incomplete(a);
  if (pending.empty()) {
    std::fprintf(stderr, "slurm: every one of the %d shards is done; nothing to submit\n", a.array);
    return kExitOk;
  }
  std::ofstream(dir / "shards.sbatch") << ShardsScript(a, pending);
  std::ofstream(dir / "merge.sbatch") << MergeScript(a);
  const bool have_sbatch = common::OnPath("sbatch");
  if (a.dry_run || !have_sbatch) {
    std::printf("%s\n%s", ShardsScript(a, pending).c_str(), MergeScript(a).c_str());
    std::printf("sbatch --parsable %s\nsbatch --parsable --dependency=afterok:<shards job> %s\n",
                (dir / "shards.sbatch").c_str(), (dir / "merge.sbatch").c_str());
    if (!a.dry_run) {
      return Fail("slurm", "sbatch is not on PATH: submit the scripts above");
    }
    return kExitOk;
  }
  auto shards = Sbatch({(dir / "shards.sbatch").string()});
  auto merge = shards.ok() ? Sbatch({"--dependency=afterok:" + *shards, (dir / "merge.sbatch").string()})
                           : StatusOr<std::string>(shards.status());
  if (!merge.ok()) {
    return Fail("slurm", merge.status(), kExitFailed);
  }
  std::printf("%s %s\n", shards->c_str(), merge->c_str());
  std::fprintf(stderr, "slurm: submitted job %s (shards %s of %d) and merge job %s after it\n", shards->c_str(),
               pending.c_str(), a.array, merge->c_str());
  return kExitOk;
}

/// `kforge slurm NAME` with the flags every array command shares.
CLI::App* AddArrayCommand(CLI::App& sub, const ArrayCommand& command, SlurmArgs& a) {
  a.command = &command;
  CLI::App* app = sub.add_subcommand(command.name, command.help);
  app->add_option("--array", a.array, std::string("Shards (array tasks); each runs ") + command.command + " --shard i/N")
      ->required()
      ->check(CLI::Range(1, 100000));
  app->add_option("--out", a.out, "Folder of the run: shard-i/ per shard, slurm/, the merged output")->required();
  app->add_option("--partition", a.partition, "Slurm partition");
  app->add_option("--account", a.account, "Slurm account");
  app->add_option("--time", a.time, "Slurm time limit per shard");
  app->add_option("--mem", a.mem, "Slurm memory per shard, e.g. 64G");
  app->add_option("--gpus-per-task", a.gpus_per_task, "GPUs per shard (0: none, compile-only runs)")
      ->default_val(1)
      ->check(CLI::Range(0, 64));
  app->add_option("--cpus-per-task", a.cpus_per_task, "CPUs per shard (compiles run on them)")
      ->default_val(8)
      ->check(CLI::Range(1, 1024));
  app->add_flag("--dry-run", a.dry_run, "Write and print the scripts; submit nothing");
  app->add_option("command_args", a.command_args, std::string("kforge ") + command.command + "'s arguments, after --")
      ->required();
  return app;
}

/// `kforge slurm serve`: judge servers on N nodes of one job.
struct SlurmServeArgs {
  int nodes = 1;
  int port = 8765;
  fs::path out, token_file;
  std::string partition, account, time, mem;
  int gpus_per_node = 1;
  int cpus_per_task = 16;
  bool dry_run = false;
  std::vector<std::string> serve_args;  ///< after --
};

Status CheckServeArgs(const SlurmServeArgs& a) {
  for (const auto& [flag, value] : {std::pair<const char*, const std::string&>{"--partition", a.partition},
                                    {"--account", a.account},
                                    {"--time", a.time},
                                    {"--mem", a.mem}})
    KFORGE_RETURN_IF_ERROR(CheckSbatchValue(flag, value));
  for (const std::string& arg : a.serve_args)
    for (const char* own : {"--listen", "--socket", "--token-file", "--address-file", "--idle-timeout"})
      if (arg == own || arg.rfind(std::string(own) + "=", 0) == 0)
        return Status::InvalidArgument(std::string(own) +
                                       " after --: kforge slurm serve sets it on every node");
  const std::string out = a.out.string();
  if (out.find_first_of("%\n\r\t \"'\\") != std::string::npos)
    return Status::InvalidArgument("--out " + out +
                                   ": an #SBATCH line cannot hold '%', quotes, spaces or newlines");
  std::error_code ec;
  if (!fs::is_regular_file(a.token_file, ec))
    return Status::InvalidArgument("--token-file " + a.token_file.string() + ": no such file");
  return Status::Ok();
}

/// What each node runs: kforge serve on every interface, its address written under DIR/servers/ (one
/// file per node and task: `hostname`-`SLURM_PROCID`.addr), no idle timeout (the job's time limit ends it).
std::string ServeNodeScript(const SlurmServeArgs& a) {
  using finetune::ShellQuote;
  std::string s = "#!/bin/bash\n# Written by kforge slurm serve: one judge server on this node.\n";
  s += "exec " + ShellQuote(SelfExecutable().string()) + " serve --listen 0.0.0.0:" + std::to_string(a.port) +
       " --token-file " + ShellQuote(a.token_file.string()) + " --idle-timeout 0 --address-file " +
       ShellQuote((a.out / "servers").string()) + "/\"$(hostname)-${SLURM_PROCID:-0}.addr\"";
  for (const std::string& arg : a.serve_args) s += " " + ShellQuote(arg);
  return s + "\n";
}

std::string ServeJobScript(const SlurmServeArgs& a) {
  using finetune::ShellQuote;
  std::string s = "#!/bin/bash\n#SBATCH --job-name=kforge-serve\n";
  if (!a.partition.empty()) s += "#SBATCH --partition=" + a.partition + "\n";
  if (!a.account.empty()) s += "#SBATCH --account=" + a.account + "\n";
  if (!a.time.empty()) s += "#SBATCH --time=" + a.time + "\n";
  if (!a.mem.empty()) s += "#SBATCH --mem=" + a.mem + "\n";
  s += "#SBATCH --nodes=" + std::to_string(a.nodes) + "\n#SBATCH --ntasks-per-node=1\n";
  s += "#SBATCH --cpus-per-task=" + std::to_string(a.cpus_per_task) + "\n";
  if (a.gpus_per_node > 0) s += "#SBATCH --gpus-per-node=" + std::to_string(a.gpus_per_node) + "\n";
  s += "#SBATCH --output=" + a.out.string() + "/slurm/serve.log\n";
  s += "# Written by kforge slurm serve: a judge server per node; each writes HOST:PORT into\n"
       "# servers/ once it listens, and clients read that folder (kforge_client.Client(\"" +
       a.out.string() + "/servers\")).\n";
  s += "set -uo pipefail\nmkdir -p " + ShellQuote((a.out / "servers").string()) + "\n";
  s += "srun --ntasks-per-node=1 bash " + ShellQuote((a.out / "slurm" / "serve-node.sh").string()) + "\n";
  return s;
}

int SubmitServe(const SlurmServeArgs& a) {
  const fs::path dir = a.out / "slurm";
  std::error_code ec;
  fs::create_directories(dir, ec);
  fs::create_directories(a.out / "servers", ec);
  if (ec) {
    return Fail("slurm serve", "--out " + a.out.string() + ": " + ec.message());
  }
  std::ofstream(dir / "serve.sbatch") << ServeJobScript(a);
  std::ofstream(dir / "serve-node.sh") << ServeNodeScript(a);
  const bool have_sbatch = common::OnPath("sbatch");
  if (a.dry_run || !have_sbatch) {
    std::printf("%s\n%s\nsbatch --parsable %s\n", ServeJobScript(a).c_str(), ServeNodeScript(a).c_str(),
                (dir / "serve.sbatch").c_str());
    if (!a.dry_run) {
      return Fail("slurm serve", "sbatch is not on PATH: submit the script above");
    }
    return kExitOk;
  }
  auto job = Sbatch({(dir / "serve.sbatch").string()});
  if (!job.ok()) {
    return Fail("slurm serve", job.status(), kExitFailed);
  }
  std::printf("%s\n", job->c_str());
  std::fprintf(stderr, "slurm: submitted job %s: %d judge servers; their addresses appear in %s/servers/\n",
               job->c_str(), a.nodes, a.out.c_str());
  return kExitOk;
}

CLI::App* AddServeCommand(CLI::App& sub, SlurmServeArgs& a) {
  CLI::App* app =
      sub.add_subcommand("serve", "Judge servers (kforge serve --listen) on the nodes of one Slurm job");
  app->add_option("--nodes", a.nodes, "Nodes, one judge server each")->required()->check(CLI::Range(1, 4096));
  app->add_option("--out", a.out,
                  "Folder of the job: slurm/ (scripts, log) and servers/ (one address file per server)")
      ->required();
  app->add_option("--token-file", a.token_file, "The bearer token's file, on a filesystem every node reads")
      ->required();
  app->add_option("--port", a.port, "TCP port of every server (0: any free one, written in its address file)")
      ->default_val(8765)
      ->check(CLI::Range(0, 65535));
  app->add_option("--partition", a.partition, "Slurm partition");
  app->add_option("--account", a.account, "Slurm account");
  app->add_option("--time", a.time, "Slurm time limit (the servers run until it)");
  app->add_option("--mem", a.mem, "Slurm memory per node, e.g. 200G");
  app->add_option("--gpus-per-node", a.gpus_per_node, "GPUs per node (0: compile-only servers)")
      ->default_val(1)
      ->check(CLI::Range(0, 64));
  app->add_option("--cpus-per-task", a.cpus_per_task, "CPUs per node (the servers' compiles run on them)")
      ->default_val(16)
      ->check(CLI::Range(1, 4096));
  app->add_flag("--dry-run", a.dry_run, "Write and print the scripts; submit nothing");
  app->add_option("serve_args", a.serve_args,
                  "kforge serve's arguments, after --: how solutions are judged (tasks, devices, caps)");
  return app;
}

}  // namespace

Runner AttachSlurm(CLI::App& sub) {
  std::vector<std::pair<CLI::App*, std::shared_ptr<SlurmArgs>>> commands;
  for (const ArrayCommand* command : {&kGenerate, &kVerify, &kTasksCheck}) {
    auto a = std::make_shared<SlurmArgs>();
    commands.emplace_back(AddArrayCommand(sub, *command, *a), a);
  }
  auto serve = std::make_shared<SlurmServeArgs>();
  CLI::App* serve_app = AddServeCommand(sub, *serve);
  sub.require_subcommand(1);
  return [commands, serve, serve_app]() {
    if (serve_app->parsed()) {
      serve->out = fs::absolute(serve->out).lexically_normal();
      serve->token_file = fs::absolute(serve->token_file).lexically_normal();
      if (Status usage = CheckServeArgs(*serve); !usage.ok()) {
        return Fail("slurm serve", usage);
      }
      return SubmitServe(*serve);
    }
    for (const auto& [app, a] : commands) {
      if (!app->parsed()) continue;
      a->out = fs::absolute(a->out).lexically_normal();
      if (Status usage = CheckArgs(*a); !usage.ok()) {
        return Fail(std::string("slurm ") + a->command->name, usage);
      }
      return Submit(*a);
    }
    return kExitUsage;
  };
}

}  // namespace kforge::cli
