// The run manifest, OUT/manifest.json (docs/formats.md, "Fine-tuning run manifest"): what was
// trained on (the dataset's path, hash and counts), how (the config and the exact command), with
// what (versions), when, and how it ended. Written when the trainer starts and again when it ends.
#pragma once

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "finetune/dataset.h"
#include "finetune/process.h"
#include "kforge/common/status.h"
#include "kforge/finetune/launch.h"

namespace kforge::finetune {

inline constexpr const char* kManifestSchema = "kforge.finetune/1";
inline constexpr const char* kManifestFile = "manifest.json";

/// The manifest of a run that is about to start: `started_at` now, `ended_at` and `exit_status`
/// null. `versions` is what `sft_trl.py --versions` reported ({} when not probed); kforge's own
/// version is added.
nlohmann::json NewManifest(const LaunchOptions& options, const DatasetStats& stats, const LaunchPlan& plan,
                           const nlohmann::json& versions);

/// Records how the run ended: `ended_at`, `exit_status`, `signal`, and the trainer's last
/// `kforge-train` line with "done" (as `result`) or the Slurm job id (as `slurm_job_id`) when the
/// output holds one.
void FinishManifest(nlohmann::json& manifest, const ProcessResult& result);

/// Records a Slurm submission: `submitted_at`, `sbatch_exit_status` and the job id (`slurm_job_id`)
/// from sbatch's output. `ended_at` and `exit_status` stay as they are (the job writes them when it
/// ends: `sft_trl.py --finish-manifest`), except after a failed submission, which ends the run.
void RecordSubmissionIn(nlohmann::json& manifest, const ProcessResult& sbatch);

/// Writes OUT/manifest.json atomically.
Status WriteManifest(const std::filesystem::path& out, const nlohmann::json& manifest);

/// Now, as UTC ISO 8601 with seconds ("2025-01-31T12:00:00Z").
std::string UtcNow();

}  // namespace kforge::finetune
