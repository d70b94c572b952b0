// Trainer configurations: kforge's defaults for code SFT (loss on assistant turns, cosine schedule,
// short warmup, gradient checkpointing where the backend does not already default to it), the flags, then the
// --config overrides.
#include "finetune/trainer_config.h"

namespace kforge::finetune {
namespace {

using nlohmann::json;

constexpr double kWarmupRatio = 0.03;
constexpr int kLoggingSteps = 10;
constexpr int kSaveTotalLimit = 2;
constexpr int kSeed = 42;

/// TRL's LoRA settings (peft), for SFT and GRPO alike.
void AddLora(json& config) {
  config["use_peft"] = true;
  config["lora_r"] = kLoraRank;
  config["lora_alpha"] = kLoraAlpha;
  config["lora_dropout"] = kLoraDropout;
  config["lora_target_modules"] = "all-linear";
}

}  // namespace

double LearningRate(const TrainingSettings& training) {
  if (training.learning_rate > 0) return training.learning_rate;
  return training.lora ? 2e-4 : 2e-5;
}

json MergeOverrides(json base, const json& overrides) {
  for (const auto& [key, value] : overrides.items()) {
    if (value.is_null()) {
      base.erase(key);
    } else if (value.is_object() && base.contains(key) && base[key].is_object()) {
      base[key] = MergeOverrides(base[key], value);
    } else {
      base[key] = value;
    }
  }
  return base;
}

json TrlConfig(const LaunchOptions& o, const DatasetStats& stats) {
  const TrainingSettings& t = o.training;
  json config = {
      {"output_dir", (o.out / "checkpoints").string()},
      {"num_train_epochs", t.epochs},
      {"learning_rate", LearningRate(t)},
      {"lr_scheduler_type", "cosine"},
      {"warmup_steps", kWarmupRatio},  // below 1: a fraction of the steps
      {"per_device_train_batch_size", t.batch_size},
      {"gradient_accumulation_steps", t.grad_accum},
      {"max_length", MaxSeqLen(t, stats)},
      {"logging_steps", kLoggingSteps},
      {"save_total_limit", kSaveTotalLimit},
      {"report_to", t.report_to},
      {"seed", kSeed},
  };
  if (t.max_steps > 0) config["max_steps"] = t.max_steps;
  if (t.packing) config["packing"] = true;
  if (!o.eval_data.empty()) {
    config["eval_strategy"] = "epoch";
    config["per_device_eval_batch_size"] = t.batch_size;
  }
  if (stats.format == DatasetFormat::kMessages) {
    config["assistant_only_loss"] = true;
  } else {
    config["completion_only_loss"] = true;
  }
  if (t.lora) AddLora(config);
  return MergeOverrides(std::move(config), o.overrides);
}

json GrpoConfig(const LaunchOptions& o) {
  const TrainingSettings& t = o.training;
  json config = {
      {"output_dir", (o.out / "checkpoints").string()},
      {"num_train_epochs", t.epochs},
      {"learning_rate", t.learning_rate > 0 ? t.learning_rate
                        : t.lora            ? 1e-5
                                            : 1e-6},
      {"lr_scheduler_type", "constant"},
      {"per_device_train_batch_size", t.batch_size},
      {"gradient_accumulation_steps", t.grad_accum},
      {"num_generations", o.grpo.num_generations},
      {"max_completion_length", o.grpo.max_completion_length},
      {"logging_steps", 1},
      {"save_total_limit", kSaveTotalLimit},
      {"report_to", t.report_to},
      {"seed", kSeed},
  };
  if (t.max_steps > 0) config["max_steps"] = t.max_steps;
  if (t.lora) AddLora(config);
  return MergeOverrides(std::move(config), o.overrides);
}

json AxolotlConfig(const LaunchOptions& o, const DatasetStats& stats) {
  const TrainingSettings& t = o.training;
  json dataset = {
      {"path", o.data.string()},
      {"ds_type", "json"},
      {"type", "chat_template"},
      {"field_messages", "messages"},
      {"message_property_mappings", {{"role", "role"}, {"content", "content"}}},
      {"roles_to_train", {"assistant"}},
      {"train_on_eos", "turn"},
  };
  if (stats.records_with_tools > 0) dataset["field_tools"] = "tools";
  json config = {
      {"base_model", o.model},
      {"chat_template", "tokenizer_default"},
      {"datasets", json::array({dataset})},
      {"dataset_prepared_path", (o.out / "axolotl-prepared").string()},
      {"output_dir", (o.out / "model").string()},
      {"sequence_len", MaxSeqLen(t, stats)},
      {"sample_packing", t.packing},
      {"micro_batch_size", t.batch_size},
      {"gradient_accumulation_steps", t.grad_accum},
      {"num_epochs", t.epochs},
      {"learning_rate", LearningRate(t)},
      {"lr_scheduler", "cosine"},
      {"warmup_ratio", kWarmupRatio},
      {"optimizer", "adamw_torch"},
      {"bf16", o.bf16 ? json(*o.bf16) : json("auto")},
      {"gradient_checkpointing", true},
      {"logging_steps", kLoggingSteps},
      {"save_total_limit", kSaveTotalLimit},
      {"seed", kSeed},
  };
  if (t.max_steps > 0) config["max_steps"] = t.max_steps;
  // Packed samples stay apart only with an attention backend that reads their boundaries: PyTorch's SDPA,
  // which every install has (`flash_attention: true` in --config, with `sdp_attention: null`, for flash-attn).
  if (t.packing) config["sdp_attention"] = true;
  if (t.report_to != "none") {
    if (t.report_to == "wandb") config["wandb_project"] = "kforge";
    if (t.report_to == "tensorboard") config["use_tensorboard"] = true;
    if (t.report_to == "trackio") config["use_trackio"] = true;
  }
  if (!o.eval_data.empty()) {
    json eval = dataset;
    eval["path"] = o.eval_data.string();
    eval["split"] = "train";  // the file's only split
    config["test_datasets"] = json::array({eval});
    config["eval_strategy"] = "epoch";
  }
  if (!o.chat_template.empty()) {
    config["chat_template"] = "jinja";
    config["chat_template_jinja"] = o.chat_template_text;
  }
  if (o.resume) config["auto_resume_from_checkpoints"] = true;
  if (t.lora) {
    config["adapter"] = "lora";
    config["lora_r"] = kLoraRank;
    config["lora_alpha"] = kLoraAlpha;
    config["lora_dropout"] = kLoraDropout;
    config["lora_target_linear"] = true;
  }
  return MergeOverrides(std::move(config), o.overrides);
}

}  // namespace kforge::finetune
