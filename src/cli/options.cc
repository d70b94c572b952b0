// Option helpers shared by subcommands.
#include "cli/options.h"

#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdio>
#include <sstream>

namespace kforge::cli {

void AddTasksRootOption(CLI::App& sub, std::filesystem::path& root) {
  root = "tasks";
  sub.add_option("--tasks", root, "Root of the task folders")->envname("KFORGE_TASKS")->default_val("tasks");
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

void AddGpuRunFlags(CLI::App& sub, GpuRunFlags& flags, std::string& arch) {
  flags.seed_option = sub.add_option("--seed", flags.seed, "Run seed (random by default; recorded)");
  sub.add_option("--devices", flags.devices, "GPUs to use, e.g. 0,1")->default_val("0");
  sub.add_option("--arch", arch, "NVRTC target architecture")->default_val("sm_90a");
  sub.add_option("--kernel-timeout", flags.kernel_timeout_s, "Seconds a candidate's launches may run")
      ->default_val(10)
      ->check(CLI::Range(0.01, 3600.0));
  sub.add_option("--compile-timeout", flags.compile_timeout_s, "Seconds one NVRTC compile may take")
      ->default_val(30)
      ->check(CLI::Range(0.1, 3600.0));
  sub.add_flag("--no-cache", flags.no_cache, "Do not use the on-disk CUBIN cache");
}

Status ApplyGpuRunFlags(const GpuRunFlags& flags, verify::VerifyOptions& options) {
  auto devices = ParseDeviceList(flags.devices);
  if (!devices.ok()) return Status::InvalidArgument("--devices: " + devices.status().message());
  if (flags.seed_option != nullptr && flags.seed_option->count() > 0) options.seed = flags.seed;
  options.devices = *devices;
  options.kernel_timeout = std::chrono::milliseconds(static_cast<int64_t>(flags.kernel_timeout_s * 1000));
  options.compile_timeout = std::chrono::milliseconds(static_cast<int64_t>(flags.compile_timeout_s * 1000));
  options.use_cache = !flags.no_cache;
  options.worker_program = SelfExecutable();
  return Status::Ok();
}

void PrintJsonLine(const nlohmann::json& record) {
  std::string line = record.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  std::fwrite(line.data(), 1, line.size(), stdout);
  std::fflush(stdout);
}

}  // namespace kforge::cli
