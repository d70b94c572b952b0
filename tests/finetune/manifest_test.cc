// The run manifest: what a run records when it starts and when it ends.
#include "finetune/manifest.h"

#include <gtest/gtest.h>

#include <regex>
#include <string>

namespace kforge::finetune {
namespace {

using nlohmann::json;

TEST(ManifestTest, RecordsTheDatasetConfigCommandAndVersions) {
  LaunchOptions o;
  o.data = "/data/train.jsonl";
  o.model = "/models/tiny";
  o.out = "/runs/a";
  o.training.max_seq_len = 100;
  DatasetStats stats;
  stats.records = 4;
  stats.sha256 = std::string(64, 'a');
  stats.cut = 1;
  stats.max_chars = 700;
  LaunchPlan plan;
  plan.trainer_config = {{"learning_rate", 2e-5}};
  plan.argv = {"python3", "sft_trl.py", "--model", "/models/tiny"};
  json manifest = NewManifest(o, stats, plan, {{"trl", "1.16.0"}, {"torch", "2.11.0"}});
  EXPECT_EQ(manifest["schema"], "kforge.finetune/1");
  EXPECT_EQ(manifest["backend"], "trl");
  EXPECT_EQ(manifest["launcher"], "local");
  EXPECT_EQ(manifest["dataset"]["path"], "/data/train.jsonl");
  EXPECT_EQ(manifest["dataset"]["sha256"], stats.sha256);
  EXPECT_EQ(manifest["dataset"]["records"], 4);
  EXPECT_EQ(manifest["dataset"]["cut_by_max_seq_len"], 1);
  EXPECT_EQ(manifest["settings"]["max_seq_len"], 100);
  EXPECT_EQ(manifest["trainer_config"], plan.trainer_config);
  EXPECT_EQ(manifest["command"], json(plan.argv));
  EXPECT_EQ(manifest["versions"]["trl"], "1.16.0");
  EXPECT_EQ(manifest["versions"]["kforge"], KFORGE_VERSION);
  EXPECT_TRUE(std::regex_match(manifest["started_at"].get<std::string>(),
                               std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)")))
      << manifest["started_at"];
  EXPECT_TRUE(manifest["ended_at"].is_null());
  EXPECT_TRUE(manifest["exit_status"].is_null());

  ProcessResult result;
  result.exit_code = 0;
  result.out =
      "kforge-train {\"step\": 1, \"loss\": 2.5}\nnoise\nkforge-train {\"done\": true, \"train_loss\": "
      "1.5}\n";
  FinishManifest(manifest, result);
  EXPECT_EQ(manifest["exit_status"], 0);
  EXPECT_TRUE(manifest["signal"].is_null());
  EXPECT_FALSE(manifest["ended_at"].is_null());
  EXPECT_EQ(manifest["result"]["train_loss"], 1.5);
}

TEST(ManifestTest, SlurmJobIdAndSignals) {
  LaunchOptions o;
  o.launcher = Launcher::kSlurm;
  json manifest = NewManifest(o, DatasetStats{}, LaunchPlan{}, json());
  ProcessResult result;
  result.exit_code = 128 + 15;
  result.signal = 15;
  result.out = "Submitted batch job 123456\n";
  FinishManifest(manifest, result);
  EXPECT_EQ(manifest["slurm_job_id"], "123456");
  EXPECT_EQ(manifest["signal"], 15);
  EXPECT_EQ(manifest["exit_status"], 143);
  EXPECT_FALSE(manifest.contains("result"));
}

TEST(ManifestTest, ASlurmSubmissionLeavesTheEndToTheJob) {
  LaunchOptions o;
  o.launcher = Launcher::kSlurm;
  json manifest = NewManifest(o, DatasetStats{}, LaunchPlan{}, json());
  ProcessResult sbatch;
  sbatch.exit_code = 0;
  sbatch.out = "Submitted batch job 77\n";
  RecordSubmissionIn(manifest, sbatch);
  EXPECT_EQ(manifest["slurm_job_id"], "77");
  EXPECT_EQ(manifest["sbatch_exit_status"], 0);
  EXPECT_TRUE(manifest["submitted_at"].is_string());
  EXPECT_TRUE(manifest["ended_at"].is_null()) << "not the submission's time: the job records its end";
  EXPECT_TRUE(manifest["exit_status"].is_null());

  // A job that already completed the manifest keeps what it wrote.
  manifest["ended_at"] = "2026-01-01T00:00:00Z";
  manifest["exit_status"] = 0;
  sbatch.exit_code = 1;
  RecordSubmissionIn(manifest, sbatch);
  EXPECT_EQ(manifest["ended_at"], "2026-01-01T00:00:00Z");

  json failed = NewManifest(o, DatasetStats{}, LaunchPlan{}, json());
  sbatch.out = "sbatch: error: invalid partition\n";
  RecordSubmissionIn(failed, sbatch);
  EXPECT_EQ(failed["exit_status"], 1) << "a refused submission ends the run";
  EXPECT_FALSE(failed["ended_at"].is_null());
  EXPECT_FALSE(failed.contains("slurm_job_id"));
}

}  // namespace
}  // namespace kforge::finetune
