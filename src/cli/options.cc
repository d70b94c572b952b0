// Option helpers shared by subcommands.
#include "cli/options.h"

#include <CLI/CLI.hpp>

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

}  // namespace kforge::cli
