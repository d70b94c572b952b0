// A temporary task root for end-to-end tests: links to suites built by `kforge tasks build ... --out
// build/tasks` (scripts/setup.sh, scripts/gpu-test.sh), or to their sources when a suite is not built
// (no LibTorch here; enough for --compile-only).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace kforge::fakes {

class TaskRoot {
 public:
  /// Links each of `suites` ("demo", "core", "adversarial", ...) into a fresh temporary folder.
  explicit TaskRoot(const std::vector<std::string>& suites);
  /// Removes the links, not their targets.
  ~TaskRoot();
  TaskRoot(const TaskRoot&) = delete;
  TaskRoot& operator=(const TaskRoot&) = delete;

  const std::filesystem::path& path() const { return root_; }

 private:
  std::filesystem::path root_;
};

/// True when nvidia-smi lists a device.
bool HasCudaDevice();

/// `s` quoted for /bin/sh.
std::string ShellQuote(const std::string& s);

}  // namespace kforge::fakes
