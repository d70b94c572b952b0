// Option helpers shared by subcommands.
#pragma once

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
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

/// Adds --tasks (AddTasksRootOption) and `--task ID`, for solutions that do not name their task.
void AddSolutionTaskOptions(CLI::App& sub, std::filesystem::path& root, std::string& task);

/// How solutions are judged, the same on every command that judges (verify, serve): --tasks, --task,
/// --trials (default verify::kDefaultTrials, 1..1000) and --compile-only, into `options`.
void AddJudgeOptions(CLI::App& sub, verify::VerifyOptions& options);

/// OK when `root` is a folder with a task.json within 8 levels below it (the search stops at the
/// first); otherwise InvalidArgument naming --tasks, so a wrong root is a usage error rather than a
/// verdict blaming each solution.
Status CheckTasksRoot(const std::filesystem::path& root);

/// A CLI11 check: a finite number in [lo, hi] (CLI::Range lets NaN through).
std::function<std::string(const std::string&)> FiniteRange(double lo, double hi);

/// A CLI11 check for --filter: refuses an empty glob list, which would select every task.
std::string NonEmptyFilter(const std::string& text);

/// `--shard i/n` (0 <= i < n <= 100000) -> index i and count n; an empty text leaves them as they are.
/// InvalidArgument naming --shard otherwise.
Status ParseShard(const std::string& text, int& index, int& count);

/// "0,1,3" -> {0, 1, 3}; each a device index 0..255.
StatusOr<std::vector<int>> ParseDeviceList(const std::string& text);

/// Absolute path of the running kforge binary (to start workers).
std::filesystem::path SelfExecutable();

/// Where kforge's data is (prompts/, scripts/, tasks/, examples/): PREFIX/share/kforge for an installed
/// binary (PREFIX/bin/kforge, `cmake --install`), else the source tree it was built from.
std::filesystem::path DataDir();
/// scripts/RELATIVE: under $KFORGE_SCRIPTS when it is set, else under DataDir().
std::filesystem::path ScriptPath(const std::string& relative);
/// The prompt templates' folder, --prompts' default: $KFORGE_PROMPTS when it is set, else DataDir()/prompts.
std::string DefaultPromptsDir();

/// Flags of every command that runs candidates on GPUs.
struct GpuRunFlags {
  uint64_t seed = 0;
  CLI::Option* seed_option = nullptr;  ///< counts whether --seed was given
  std::string devices = "0";
  double kernel_timeout_s = std::chrono::duration<double>(verify::kDefaultKernelTimeout).count();
  double compile_timeout_s = 30;
  bool no_cache = false;
  std::string allow_ops = "library";
};

/// Adds --seed (digits only: "-1" no longer wraps), --devices, --arch (into `arch`), --kernel-timeout,
/// --compile-timeout, --no-cache and --allow-ops.
void AddGpuRunFlags(CLI::App& sub, GpuRunFlags& flags, std::string& arch);

/// Sets the seed (when given), devices, kernel and compile timeouts, cache use and worker program of
/// `options`; InvalidArgument naming the flag when --devices is malformed or NVRTC cannot target --arch.
Status ApplyGpuRunFlags(const GpuRunFlags& flags, verify::VerifyOptions& options);

/// Writes `record` to stdout as one JSON line (invalid UTF-8 replaced) and flushes.
void PrintJsonLine(const nlohmann::json& record);

}  // namespace kforge::cli
