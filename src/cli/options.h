// Option helpers shared by subcommands.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "kforge/common/status.h"

namespace CLI {
class App;
}

namespace kforge::cli {

/// Adds `--tasks ROOT` (env KFORGE_TASKS, default "tasks").
void AddTasksRootOption(CLI::App& sub, std::filesystem::path& root);

/// "0,1,3" -> {0, 1, 3}; each a device index 0..255.
StatusOr<std::vector<int>> ParseDeviceList(const std::string& text);

/// Absolute path of the running kforge binary (to start workers).
std::filesystem::path SelfExecutable();

}  // namespace kforge::cli
