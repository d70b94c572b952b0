// `finetune-launch --status RUN`: a run's state from its manifest, and Slurm's view of a job that
// has not completed it yet.
#include <cstdio>
#include <optional>
#include <string>
#include <vector>
#include <utility>

#include "finetune/manifest.h"
#include "finetune/process.h"
#include "kforge/common/files.h"
#include "kforge/common/json_fields.h"
#include "kforge/finetune/run.h"

namespace kforge::finetune {
namespace {

using nlohmann::json;

std::string Trim(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ' || text.back() == '\r')) text.pop_back();
  size_t start = text.find_first_not_of(' ');
  return start == std::string::npos ? "" : text.substr(start);
}

/// squeue's state of a job while it is queued or running; "" when the queue does not know it (any more);
/// nullopt when squeue cannot say (not on PATH, or it failed).
std::optional<std::string> QueueState(const std::string& job) {
  if (!OnPath("squeue")) return std::nullopt;
  StatusOr<ProcessResult> queued = Capture({"squeue", "-h", "-j", job, "-o", "%T"});
  if (!queued.ok()) return std::nullopt;
  // squeue fails for a job id it no longer knows ("Invalid job id specified").
  if (queued->exit_code != 0)
    return queued->err.find("Invalid job id") != std::string::npos ? std::optional<std::string>("") : std::nullopt;
  return Trim(queued->out);
}

/// sacct's final state and exit code of a job; empty when sacct is not on PATH or does not know it.
std::string AccountedState(const std::string& job) {
  if (OnPath("sacct")) {
    StatusOr<ProcessResult> done = Capture({"sacct", "-n", "-X", "-P", "-j", job, "-o", "State,ExitCode"});
    if (done.ok() && done->exit_code == 0) {
      std::string line = Trim(done->out);
      line = line.substr(0, line.find('\n'));
      if (!line.empty()) return "sacct: " + line;
    }
  }
  return "";
}

/// The command that continues the run from its last checkpoint: the launch's own command line with
/// --force and --dry-run dropped and --resume added; or what to do when there is no checkpoint.
std::string ResumeHint(const std::filesystem::path& run, const json& manifest) {
  bool checkpoint = false;
  for (const char* folder : {"checkpoints", "model"}) {
    std::error_code ec;
    for (std::filesystem::directory_iterator it(run / folder, ec), end; !ec && it != end; it.increment(ec))
      checkpoint = checkpoint || it->path().filename().string().rfind("checkpoint-", 0) == 0;
  }
  const json& invocation = manifest.value("invocation", json());
  std::vector<std::string> argv;
  if (invocation.is_array())
    for (const json& arg : invocation)
      if (arg.is_string() && arg != "--force" && arg != "--dry-run" && arg != "--resume")
        argv.push_back(arg.get<std::string>());
  if (!checkpoint)
    return "; no checkpoint-N was saved to resume from: start again with --force";
  if (argv.empty()) return "; resume from its last checkpoint: the launch's flags with --resume";
  argv.push_back("--resume");
  const std::string folder = manifest.value("invocation_dir", std::string());
  return "; resume from its last checkpoint: " + (folder.empty() ? "" : "cd " + ShellJoin({folder}) + " && ") +
         ShellJoin(argv);
}

std::string Result(const json& manifest) {
  const json& result = manifest.value("result", json());
  if (!result.is_object()) return "";
  std::string text = "; " + std::to_string(result.value("steps", 0)) + " steps";
  if (result.value("train_loss", json()).is_number()) {
    char loss[32];
    std::snprintf(loss, sizeof loss, "%.4g", result["train_loss"].get<double>());
    text += ", train loss " + std::string(loss);
  }
  return text;
}

}  // namespace

StatusOr<std::pair<std::string, int>> RunStatus(const std::filesystem::path& run) {
  const std::filesystem::path path = run / kManifestFile;
  KFORGE_ASSIGN_OR_RETURN(std::string text, common::ReadFile(path));
  KFORGE_ASSIGN_OR_RETURN(json manifest, common::ParseJson(text, path.string()));
  if (!manifest.is_object() || manifest.value("schema", "") != kManifestSchema)
    return Status::InvalidArgument(path.string() + ": not a " + std::string(kManifestSchema) + " manifest");
  const std::string launcher = manifest.value("launcher", "");
  const std::string job =
      manifest.value("slurm_job_id", json()).is_string() ? manifest["slurm_job_id"].get<std::string>() : "";
  std::string head = run.string() + ": " + manifest.value("backend", "?") + " via " + launcher +
                     (job.empty() ? "" : " (job " + job + ")") + ", started " +
                     manifest.value("started_at", std::string("?"));
  const json& exit_status = manifest.value("exit_status", json());
  const bool slurm = launcher == LauncherName(Launcher::kSlurm) && !job.empty();
  if (exit_status.is_number_integer()) {
    const int status = exit_status.get<int>();
    if (status == 0)
      return std::make_pair(head + "; ended " + manifest.value("ended_at", std::string("?")) +
                                " with exit status 0 (completed)" + Result(manifest),
                            0);
    const std::string signal = manifest.value("job_signal", std::string());
    std::string how = signal.empty() ? " (failed)"
                                     : " (stopped by SIG" + signal +
                                           ": the time limit's warning, or scancel)";
    if (slurm && signal.empty())
      if (std::string state = AccountedState(job); !state.empty()) how += " (Slurm: " + state + ")";
    return std::make_pair(head + "; ended " + manifest.value("ended_at", std::string("?")) + " with exit status " +
                              std::to_string(status) + how + Result(manifest) + ResumeHint(run, manifest),
                          1);
  }
  if (!slurm) return std::make_pair(head + "; not finished", 3);
  const std::optional<std::string> queued = QueueState(job);
  if (!queued || !queued->empty())
    return std::make_pair(head + "; not finished" + (queued ? " (Slurm: " + *queued + ")" : std::string()), 3);
  // The queue no longer knows the job and the job did not record its end: killed before it could (a
  // time limit without the warning, scancel --signal=KILL, a node failure).
  const std::string state = AccountedState(job);
  return std::make_pair(head + "; ended without recording its end: the job left the queue" +
                            (state.empty() ? "" : " (Slurm: " + state + ")") + ResumeHint(run, manifest),
                        1);
}

}  // namespace kforge::finetune
