// The trainers' configurations as kforge renders them: SFTConfig fields for scripts/finetune/sft_trl.py
// and axolotl's YAML keys, with --config overrides merged in.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "finetune/dataset.h"
#include "kforge/finetune/launch.h"

namespace kforge::finetune {

/// LoRA defaults for both backends.
inline constexpr int kLoraRank = 16;
inline constexpr int kLoraAlpha = 32;
inline constexpr double kLoraDropout = 0.05;

/// The learning rate after defaults: the given one, else 2e-4 with LoRA and 2e-5 without.
double LearningRate(const TrainingSettings& training);

/// `base` with `overrides` merged in: objects merge key by key, other values replace, null removes.
nlohmann::json MergeOverrides(nlohmann::json base, const nlohmann::json& overrides);

/// SFTConfig fields (plus use_peft and lora_* for peft) for sft_trl.py, overrides merged.
nlohmann::json TrlConfig(const LaunchOptions& options, const DatasetStats& stats);

/// GRPOConfig fields (plus use_peft and lora_*) for grpo_trl.py, overrides merged.
nlohmann::json GrpoConfig(const LaunchOptions& options);

/// axolotl's configuration, overrides merged.
nlohmann::json AxolotlConfig(const LaunchOptions& options, const DatasetStats& stats);

/// `value` as block-style YAML that PyYAML reads back as the same value: strings as JSON strings,
/// floats always with a decimal point (PyYAML reads "2e-05" as a string).
std::string ToYaml(const nlohmann::json& value);

}  // namespace kforge::finetune
