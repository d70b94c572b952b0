#include "fakes/task_root.h"

#include <stdlib.h>

#include <cstdlib>
#include <stdexcept>

#include <gtest/gtest.h>

namespace kforge::fakes {

namespace fs = std::filesystem;

TaskRoot::TaskRoot(const std::vector<std::string>& suites) {
  std::string pattern = (fs::path(testing::TempDir()) / "kforge_tasks_XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  root_ = pattern;
  const fs::path built = fs::path(KFORGE_BINARY).parent_path() / "tasks";
  const fs::path source = KFORGE_SOURCE_DIR;
  for (const std::string& suite : suites) {
    fs::path target = built / suite;
    if (!fs::exists(target)) {
      target = fs::exists(source / "tasks" / suite) ? source / "tasks" / suite : source / "tests/verify/tasks" / suite;
    }
    fs::create_directory_symlink(target, root_ / suite);
  }
}

TaskRoot::~TaskRoot() {
  std::error_code ignored;
  fs::remove_all(root_, ignored);
}

bool HasCudaDevice() { return std::system("nvidia-smi -L >/dev/null 2>&1") == 0; }

std::string ShellQuote(const std::string& s) {
  std::string quoted = "'";
  for (char c : s) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

}  // namespace kforge::fakes
