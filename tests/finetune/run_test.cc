// The steps of a launch that need no trainer: resolving the model and choosing the Python.
#include "kforge/finetune/run.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace kforge::finetune {
namespace {

namespace fs = std::filesystem;

class RunTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("kforge_run_" + std::to_string(getpid()));
    fs::create_directories(dir_ / "model");
    std::ofstream(dir_ / "model/config.json") << "{}";
    for (const char* name : {"KFORGE_PYTHON", "KFORGE_VENV", "XDG_CACHE_HOME", "HOME"}) {
      const char* value = std::getenv(name);
      saved_.emplace_back(name, value ? std::optional<std::string>(value) : std::nullopt);
    }
  }
  void TearDown() override {
    for (const auto& [name, value] : saved_) {
      if (value) {
        setenv(name.c_str(), value->c_str(), 1);
      } else {
        unsetenv(name.c_str());
      }
    }
    fs::remove_all(dir_);
  }
  fs::path dir_;
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

TEST_F(RunTest, ModelsAreFoldersOrHubIds) {
  auto local = ResolveModel((dir_ / "model").string());
  ASSERT_TRUE(local.ok()) << local.status().message();
  EXPECT_EQ(*local, (dir_ / "model").string());
  const struct {
    std::string model;
    bool ok;
    std::string want;
  } cases[] = {
      {"Qwen/Qwen3-8B", true, "Qwen/Qwen3-8B"},
      {"meta-llama/Llama-3.1-8B-Instruct", true, "meta-llama/Llama-3.1-8B-Instruct"},
      {"./no/such/model", false, "no such folder (and not a hub id like org/name)"},
      {"no-slash", false, "no such folder"},
      {"a/b/c", false, "no such folder"},
      {"../up/model", false, "no such folder"},
      {dir_.string(), false, "no config.json in it"},
      {(dir_ / "model/config.json").string(), false, "not a model folder"},
  };
  for (const auto& c : cases) {
    auto resolved = ResolveModel(c.model);
    ASSERT_EQ(resolved.ok(), c.ok) << c.model;
    if (c.ok) {
      EXPECT_EQ(*resolved, c.want);
    } else {
      EXPECT_NE(resolved.status().message().find("--model " + c.model + ": " + c.want), std::string::npos)
          << resolved.status().message();
    }
  }
}

TEST_F(RunTest, ThePythonComesFromTheEnvironmentOrTheVenv) {
  const fs::path venv = dir_ / "venv";
  fs::create_directories(venv / "bin");
  std::ofstream(venv / "bin/python3") << "#!/bin/sh\n";
  chmod((venv / "bin/python3").c_str(), 0755);
  setenv("KFORGE_PYTHON", "/opt/py/bin/python3", 1);
  EXPECT_EQ(DefaultPython(), "/opt/py/bin/python3");
  unsetenv("KFORGE_PYTHON");
  setenv("KFORGE_VENV", venv.c_str(), 1);
  EXPECT_EQ(DefaultPython(), (venv / "bin/python3").string());
  unsetenv("KFORGE_VENV");
  setenv("XDG_CACHE_HOME", (dir_ / "nothing").c_str(), 1);
  EXPECT_EQ(DefaultPython(), "python3");
  fs::create_directories(dir_ / "xdg/kforge");
  fs::create_symlink(venv, dir_ / "xdg/kforge/venv");
  setenv("XDG_CACHE_HOME", (dir_ / "xdg").c_str(), 1);
  EXPECT_EQ(DefaultPython(), (dir_ / "xdg/kforge/venv/bin/python3").string());
}

}  // namespace
}  // namespace kforge::finetune
