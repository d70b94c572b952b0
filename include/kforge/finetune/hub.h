// Uploads to a Hugging Face Hub repository (an export's dataset, a run's model) through
// scripts/hub_push.py in the trainer's Python (huggingface_hub; the Hub is $HF_ENDPOINT).
#pragma once

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "kforge/common/status.h"

namespace kforge::finetune {

struct HubPush {
  std::string python;            ///< a Python with huggingface_hub
  std::filesystem::path script;  ///< scripts/hub_push.py
  std::string repo;              ///< "org/name"
  std::string type = "dataset";  ///< "dataset" or "model"
  std::filesystem::path folder;  ///< every file of it is uploaded, in one commit
};

/// "org/name" as the Hub names repositories; InvalidArgument naming --push-to-hub otherwise.
Status CheckHubRepo(const std::string& repo);

/// Creates the repository if needed and uploads the folder. Returns what the script reports
/// ({"repo", "type", "url", "commit", "files"}); Unavailable with the script's one line when it fails.
StatusOr<nlohmann::json> PushToHub(const HubPush& push);

}  // namespace kforge::finetune
