// Test helper: runs a task's package on the golden inputs and compares with the golden outputs.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "kforge/common/task.h"
#include "kforge/reference/compare.h"
#include "kforge/reference/runner.h"

namespace kforge::reference::testing {

/// Task folders (holding task.json) under $KFORGE_PARITY_ROOT and the repository's tasks/.
inline std::vector<std::string> ParityTaskDirs() {
  std::vector<std::string> dirs;
  // Tasks built by `kforge tasks build tasks --out build/tasks` (scripts/setup.sh does this).
  std::vector<std::filesystem::path> roots = {std::filesystem::path(KFORGE_BINARY).parent_path() / "tasks"};
  if (const char* env = std::getenv("KFORGE_PARITY_ROOT"); env && *env) roots.emplace_back(env);
  for (const auto& root : roots) {
    std::error_code ec;
    if (!std::filesystem::is_directory(root, ec)) continue;
    for (auto it = std::filesystem::recursive_directory_iterator(root, ec);
         !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
      if (it->path().filename() == "task.json") dirs.push_back(it->path().parent_path().string());
    }
  }
  return dirs;
}

/// gtest-safe parameter name for a folder.
inline std::string ParityName(const std::string& dir) {
  std::string name;
  for (char c : dir.substr(dir.size() > 60 ? dir.size() - 60 : 0))
    name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return name;
}

/// Loads golden inputs onto `device`, runs the package, compares within the task's tolerance.
inline void CheckParity(const std::filesystem::path& dir, Device device) {
  auto task = common::LoadTask(dir);
  ASSERT_TRUE(task.ok()) << task.status().ToString();
  const auto& golden = task->artifacts.golden;
  if (!golden || !std::filesystem::exists(golden->file))
    GTEST_SKIP() << task->id << ": no golden file built (run `kforge tasks build`)";
  auto packages = task->artifacts.packages.find(golden->variant);
  if (packages == task->artifacts.packages.end() || !packages->second.count(std::string(device.KindName())) ||
      !std::filesystem::exists(packages->second.at(std::string(device.KindName()))))
    GTEST_SKIP() << task->id << ": no " << device.KindName() << " package built (run `kforge tasks build`)";
  auto program = ReferenceProgram::Load(*task, golden->variant, device);
  ASSERT_TRUE(program.ok()) << program.status().ToString();
  auto inputs = LoadTensors(golden->file, "input.", device);
  ASSERT_TRUE(inputs.ok()) << inputs.status().ToString();
  auto want = LoadTensors(golden->file, "output.", device);
  ASSERT_TRUE(want.ok()) << want.status().ToString();
  ASSERT_EQ(want->size(), task->outputs.size()) << task->id << ": golden outputs";
  auto got = (*program)->Run(*inputs);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  auto results = CompareAll(*want, *got, task->tolerance);
  ASSERT_TRUE(results.ok()) << results.status().ToString();
  for (const CompareResult& r : *results) {
    EXPECT_TRUE(r.ok()) << task->id << " " << r.name << ": " << r.mismatches << "/" << r.numel
                        << " mismatches, first at " << r.first_mismatch << " (golden " << r.ref_at_first
                        << ", runner " << r.cand_at_first << "), max abs err " << r.max_abs_err;
  }
}

}  // namespace kforge::reference::testing
