// Option helpers shared by subcommands.
#include "cli/options.h"

#include <CLI/CLI.hpp>

#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "kforge/common/json_fields.h"
#include "kforge/common/library_ops.h"
#include "kforge/common/task_tree.h"
#include "kforge/cuda/versions.h"

namespace kforge::cli {

void AddTasksRootOption(CLI::App& sub, std::filesystem::path& root) {
  root = "tasks";
  sub.add_option("--tasks", root, "Root of the task folders")->envname("KFORGE_TASKS")->default_val("tasks");
}

void AddSolutionTaskOptions(CLI::App& sub, std::filesystem::path& root, std::string& task) {
  AddTasksRootOption(sub, root);
  sub.add_option("--task", task, "Task id for solutions that do not name one");
}

void AddJudgeOptions(CLI::App& sub, verify::VerifyOptions& options) {
  AddSolutionTaskOptions(sub, options.tasks_root, options.task);
  sub.add_option("--trials", options.trials, "Trials on fresh inputs (default shape)")
      ->default_val(verify::kDefaultTrials)
      ->check(CLI::Range(1, 1000));
  sub.add_flag("--compile-only", options.compile_only, "Compile and check plans only; no GPU needed");
}

std::string NonEmptyFilter(const std::string& text) {
  return text.find_first_not_of(", ") == std::string::npos
             ? "empty: name at least one glob, or leave --filter out to select every task"
             : "";
}

Status ParseShard(const std::string& text, int& index, int& count) {
  if (text.empty()) return Status::Ok();
  size_t slash = text.find('/');
  char* end = nullptr;
  long i = slash == std::string::npos ? -1 : std::strtol(text.c_str(), &end, 10);
  bool ok_i = slash != std::string::npos && end == text.c_str() + slash;
  long n = ok_i ? std::strtol(text.c_str() + slash + 1, &end, 10) : 0;
  if (!ok_i || *end != '\0' || slash + 1 == text.size() || i < 0 || n < 1 || i >= n || n > 100000)
    return Status::InvalidArgument("--shard " + (text.size() <= 80 ? text : text.substr(0, 80) + "...") +
                                   ": expected i/n with 0 <= i < n <= 100000");
  index = static_cast<int>(i);
  count = static_cast<int>(n);
  return Status::Ok();
}

Status CheckTasksRoot(const std::filesystem::path& root) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const std::string build =
      "; `kforge tasks build tasks --out build/tasks` builds the bundled tasks, then "
      "pass --tasks build/tasks";
  if (!fs::is_directory(root, ec))
    return Status::InvalidArgument("--tasks " + root.string() +
                                   ": no such folder (set --tasks or KFORGE_TASKS" + build + ")");
  bool found = false;
  // A walk that fails or runs long has found no task either: the message below says so.
  (void)common::WalkTaskTree(root, [&found](const fs::path&) {
    found = true;
    return false;  // one is enough
  });
  if (found) return Status::Ok();
  return Status::InvalidArgument("--tasks " + root.string() + ": no task.json below it (not a task root" +
                                 build + ")");
}

std::function<std::string(const std::string&)> FiniteRange(double lo, double hi) {
  return [lo, hi](const std::string& text) -> std::string {
    char* end = nullptr;
    double value = std::strtod(text.c_str(), &end);
    if (text.empty() || *end != '\0' || !std::isfinite(value) || value < lo || value > hi) {
      std::ostringstream out;
      out << "expected a number in [" << lo << ", " << hi << "], got \"" << text.substr(0, 20) << "\"";
      return out.str();
    }
    return "";
  };
}

StatusOr<std::vector<int>> ParseDeviceList(const std::string& text) {
  std::vector<int> devices;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    if (item.empty() || item.size() > 3 || item.find_first_not_of("0123456789") != std::string::npos) {
      return Status::InvalidArgument("\"" + item.substr(0, 20) + "\" is not a device index");
    }
    devices.push_back(std::stoi(item));
  }
  if (devices.empty()) return Status::InvalidArgument("no device given");
  return devices;
}

std::filesystem::path SelfExecutable() { return std::filesystem::read_symlink("/proc/self/exe"); }

std::filesystem::path DataDir() {
  std::error_code ec;
  const std::filesystem::path installed = SelfExecutable().parent_path().parent_path() / "share/kforge";
  if (std::filesystem::is_directory(installed / "prompts", ec)) return installed;
  return KFORGE_SOURCE_DIR;
}

std::filesystem::path ScriptPath(const std::string& relative) {
  if (const char* env = std::getenv("KFORGE_SCRIPTS"); env && *env) return std::filesystem::path(env) / relative;
  return DataDir() / "scripts" / relative;
}

std::string DefaultPromptsDir() {
  const char* env = std::getenv("KFORGE_PROMPTS");
  return env && *env ? std::string(env) : (DataDir() / "prompts").string();
}

void AddGpuRunFlags(CLI::App& sub, GpuRunFlags& flags, std::string& arch) {
  flags.seed_option = sub.add_option("--seed", flags.seed, "Run seed (random by default; recorded)")
                          ->check(
                              [](const std::string& text) -> std::string {
                                uint64_t value = 0;
                                auto [end, error] =
                                    std::from_chars(text.data(), text.data() + text.size(), value);
                                bool whole = !text.empty() && text[0] != '-' && text[0] != '+' &&
                                             error == std::errc() && end == text.data() + text.size();
                                return whole ? "" : "expected an integer from 0 to 2^64-1";
                              },
                              "UINT64");
  sub.add_option("--devices", flags.devices, "GPUs to use, e.g. 0,1")->default_val("0");
  sub.add_option("--arch", arch, "NVRTC target architecture")->default_val("sm_90a");
  sub.add_option("--kernel-timeout", flags.kernel_timeout_s, "Seconds a candidate's launches may run")
      ->default_val(std::chrono::duration<double>(verify::kDefaultKernelTimeout).count())
      ->check(FiniteRange(0.01, 3600.0), "[0.01, 3600]");
  sub.add_option("--compile-timeout", flags.compile_timeout_s, "Seconds one NVRTC compile may take")
      ->default_val(30)
      ->check(FiniteRange(0.1, 3600.0), "[0.1, 3600]");
  sub.add_flag("--no-cache", flags.no_cache, "Do not use the on-disk CUBIN cache");
  sub.add_option("--allow-ops", flags.allow_ops,
                 "Library ops in plans: library (the allowlist), all (also any aten:: operator) or none")
      ->default_val("library")
      ->check(CLI::IsMember(common::kOpPolicyNames.Names()));
}

Status ApplyGpuRunFlags(const GpuRunFlags& flags, verify::VerifyOptions& options) {
  auto devices = ParseDeviceList(flags.devices);
  if (!devices.ok()) return Status::InvalidArgument("--devices: " + devices.status().message());
  if (Status arch = cuda::CheckArch(options.arch); !arch.ok())
    return Status::InvalidArgument("--arch " + arch.message());
  if (flags.seed_option != nullptr && flags.seed_option->count() > 0) options.seed = flags.seed;
  options.devices = *devices;
  options.op_policy = common::kOpPolicyNames.Parse(flags.allow_ops).value_or(common::OpPolicy::kLibrary);
  options.kernel_timeout = std::chrono::milliseconds(static_cast<int64_t>(flags.kernel_timeout_s * 1000));
  options.compile_timeout = std::chrono::milliseconds(static_cast<int64_t>(flags.compile_timeout_s * 1000));
  options.use_cache = !flags.no_cache;
  options.worker_program = SelfExecutable();
  return Status::Ok();
}

void PrintJsonLine(const nlohmann::json& record) {
  std::string line = common::JsonText(record) + "\n";
  std::fwrite(line.data(), 1, line.size(), stdout);
  std::fflush(stdout);
}

}  // namespace kforge::cli
