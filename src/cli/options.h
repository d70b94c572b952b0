// Option helpers shared by subcommands.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "kforge/common/status.h"
#include "kforge/verify/verifier.h"

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace kforge::cli {

/// Adds `--tasks ROOT` (env KFORGE_TASKS, default "tasks").
void AddTasksRootOption(CLI::App& sub, std::filesystem::path& root);

/// "0,1,3" -> {0, 1, 3}; each a device index 0..255.
StatusOr<std::vector<int>> ParseDeviceList(const std::string& text);

/// Absolute path of the running kforge binary (to start workers).
std::filesystem::path SelfExecutable();

/// Flags of every command that runs candidates on GPUs.
struct GpuRunFlags {
  uint64_t seed = 0;
  CLI::Option* seed_option = nullptr;  ///< counts whether --seed was given
  std::string devices = "0";
  double kernel_timeout_s = 10;
  double compile_timeout_s = 30;
  bool no_cache = false;
};

/// Adds --seed, --devices, --arch (into `arch`), --kernel-timeout, --compile-timeout and --no-cache.
void AddGpuRunFlags(CLI::App& sub, GpuRunFlags& flags, std::string& arch);

/// Sets the seed (when given), devices, kernel and compile timeouts, cache use and worker program of
/// `options`;
/// InvalidArgument naming the flag when --devices is malformed.
Status ApplyGpuRunFlags(const GpuRunFlags& flags, verify::VerifyOptions& options);

/// Writes `record` to stdout as one JSON line (invalid UTF-8 replaced) and flushes.
void PrintJsonLine(const nlohmann::json& record);

}  // namespace kforge::cli
