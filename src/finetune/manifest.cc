// The run manifest.
#include "finetune/manifest.h"

#include <ctime>
#include <sstream>

#include "finetune/trainer_config.h"
#include "kforge/common/files.h"

namespace kforge::finetune {
namespace {

using nlohmann::json;

constexpr const char* kProgressPrefix = "kforge-train ";

json Settings(const LaunchOptions& o, const DatasetStats& stats) {
  const TrainingSettings& t = o.training;
  json settings = {{"model", o.model},
                   {"trainer", std::string(TrainerName(o.trainer))},
                   {"lora", t.lora},
                   {"epochs", t.epochs},
                   {"learning_rate", LearningRate(t)},
                   {"max_seq_len", MaxSeqLen(t, stats)},
                   {"max_seq_len_from_data", t.max_seq_len_basis != "--max-seq-len"},
                   {"max_seq_len_basis", t.max_seq_len_basis},
                   {"packing", t.packing},
                   {"report_to", t.report_to},
                   {"eval_data", o.eval_data.empty() ? json(nullptr) : json(o.eval_data.string())},
                   {"chat_template", o.chat_template.empty() ? json(nullptr) : json(o.chat_template)},
                   {"resume", o.resume},
                   {"batch_size", t.batch_size},
                   {"grad_accum", t.grad_accum},
                   {"max_steps", t.max_steps > 0 ? json(t.max_steps) : json(nullptr)},
                   {"nodes", o.nodes},
                   {"gpus_per_node", o.gpus_per_node},
                   {"python", o.python},
                   {"overrides", o.overrides}};
  if (o.trainer == Trainer::kGrpo)
    settings["grpo"] = {{"servers", o.grpo.servers},
                        {"protocol", o.grpo.protocol},
                        {"num_generations", o.grpo.num_generations},
                        {"max_completion_length", o.grpo.max_completion_length}};
  return settings;
}

/// The last line of `out` that starts with kProgressPrefix and holds "done", parsed; null if none.
json LastDoneLine(const std::string& out) {
  std::istringstream lines(out);
  json done;
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind(kProgressPrefix, 0) != 0) continue;
    json parsed = json::parse(line.substr(std::string(kProgressPrefix).size()), nullptr, false);
    if (parsed.is_object() && parsed.value("done", false)) done = parsed;
  }
  return done;
}

/// The job id in sbatch's "Submitted batch job N"; empty when there is none.
std::string JobId(const std::string& out) {
  const std::string kSubmitted = "Submitted batch job ";
  size_t at = out.find(kSubmitted);
  if (at == std::string::npos) return "";
  std::string id = out.substr(at + kSubmitted.size());
  return id.substr(0, id.find_first_of(" \r\n"));
}

/// kforge's own command line (/proc/self/cmdline), so that `--status` can say how to resume the run;
/// empty where it cannot be read.
json Invocation() {
  StatusOr<std::string> text = common::ReadFile("/proc/self/cmdline");
  json argv = json::array();
  if (!text.ok()) return argv;
  for (size_t start = 0; start < text->size();) {
    size_t end = text->find('\0', start);
    if (end == std::string::npos) end = text->size();
    argv.push_back(text->substr(start, end - start));
    start = end + 1;
  }
  return argv;
}

/// The folder kforge ran in, which the invocation's relative paths are relative to.
std::string CurrentFolder() {
  std::error_code ec;
  const std::filesystem::path here = std::filesystem::current_path(ec);
  return ec ? "" : here.string();
}

}  // namespace

std::string UtcNow() {
  std::time_t now = std::time(nullptr);
  std::tm utc = {};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

json NewManifest(const LaunchOptions& o, const DatasetStats& stats, const LaunchPlan& plan,
                 const json& versions) {
  json dataset = stats.ToJson();
  dataset["path"] = o.data.string();
  if (!o.data_source.empty()) {
    dataset["source"] = o.data_source;  // a Parquet file or a Hub id, converted into `path`
    if (std::filesystem::path(o.data_source).extension() != ".parquet") {
      std::string id = o.data_source;
      if (size_t colon = id.rfind(':'); colon != std::string::npos) id.resize(colon);  // org/name:split
      dataset["hub_id"] = id;
    }
  }
  dataset["sha256"] = stats.sha256;
  dataset["cut_by_max_seq_len"] = RecordsCut(o.training, stats);
  json all_versions = versions.is_object() ? versions : json::object();
  all_versions["kforge"] = KFORGE_VERSION;
  return {{"schema", kManifestSchema},
          {"backend", BackendName(o.backend)},
          {"launcher", LauncherName(o.launcher)},
          {"dataset", dataset},
          {"settings", Settings(o, stats)},
          {"trainer_config", plan.trainer_config},
          {"command", plan.argv},
          {"environment", plan.environment},
          {"versions", all_versions},
          {"invocation", Invocation()},
          {"invocation_dir", CurrentFolder()},
          {"started_at", UtcNow()},
          {"ended_at", nullptr},
          {"exit_status", nullptr},
          {"signal", nullptr}};
}

void FinishManifest(json& manifest, const ProcessResult& result) {
  manifest["ended_at"] = UtcNow();
  manifest["exit_status"] = result.exit_code;
  manifest["signal"] = result.signal ? json(result.signal) : json(nullptr);
  if (json done = LastDoneLine(result.out); !done.is_null()) manifest["result"] = done;
  if (manifest.value("launcher", "") == LauncherName(Launcher::kSlurm)) {
    if (std::string id = JobId(result.out); !id.empty()) manifest["slurm_job_id"] = id;
  }
}

void RecordSubmissionIn(json& manifest, const ProcessResult& sbatch) {
  manifest["submitted_at"] = UtcNow();
  manifest["sbatch_exit_status"] = sbatch.exit_code;
  if (std::string id = JobId(sbatch.out); !id.empty()) manifest["slurm_job_id"] = id;
  if (sbatch.exit_code != 0 && manifest.value("ended_at", json()).is_null()) {
    manifest["ended_at"] = UtcNow();
    manifest["exit_status"] = sbatch.exit_code;
  }
}

Status WriteManifest(const std::filesystem::path& out, const json& manifest) {
  return common::WriteFileAtomic(out / kManifestFile, manifest.dump(2) + "\n");
}

}  // namespace kforge::finetune
