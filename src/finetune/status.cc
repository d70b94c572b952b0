// `finetune-launch --status RUN`: a run's state from its manifest, and Slurm's view of a job that
// has not completed it yet.
#include <cstdio>
#include <string>
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

/// What Slurm says of a job: squeue's state while it is queued or running, else sacct's final
/// state and exit code; empty when neither is on PATH or knows the job.
std::string SlurmState(const std::string& job) {
  if (OnPath("squeue")) {
    StatusOr<ProcessResult> queued = Capture({"squeue", "-h", "-j", job, "-o", "%T"});
    if (queued.ok() && queued->exit_code == 0 && !Trim(queued->out).empty()) return Trim(queued->out);
  }
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
  if (exit_status.is_number_integer()) {
    const int status = exit_status.get<int>();
    return std::make_pair(head + "; ended " + manifest.value("ended_at", std::string("?")) +
                              " with exit status " + std::to_string(status) +
                              (status == 0 ? " (completed)" : " (failed)") + Result(manifest),
                          status == 0 ? 0 : 1);
  }
  std::string state = launcher == LauncherName(Launcher::kSlurm) && !job.empty() ? SlurmState(job) : "";
  return std::make_pair(head + "; not finished" + (state.empty() ? "" : " (Slurm: " + state + ")"), 3);
}

}  // namespace kforge::finetune
