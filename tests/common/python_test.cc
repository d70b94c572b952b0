// The one rule for which Python kforge runs: $KFORGE_PYTHON, the setup venv, the build's Python, python3.
#include "kforge/common/python.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace kforge::common {
namespace {

namespace fs = std::filesystem;

/// An executable file at `path` (its folders made).
void MakeExecutable(const fs::path& path) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << "#!/bin/sh\n";
  chmod(path.c_str(), 0755);
}

class PythonTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("kforge_python_" + std::to_string(getpid()));
    fs::create_directories(dir_);
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

TEST_F(PythonTest, EachPlaceInTheRuleWinsOverTheOnesAfterIt) {
  const std::string venv = (dir_ / "venv").string(), configured = (dir_ / "built/bin/python3").string();
  MakeExecutable(dir_ / "venv/bin/python3");
  MakeExecutable(dir_ / "xdg/kforge/venv/bin/python3");
  MakeExecutable(dir_ / "home/.cache/kforge/venv/bin/python3");
  MakeExecutable(configured);
  fs::create_directories(dir_ / "empty/kforge/venv/bin");
  const std::string xdg = (dir_ / "xdg").string(), home = (dir_ / "home").string(), empty = (dir_ / "empty").string();
  const struct {
    PythonSearch search;
    std::string want;
  } cases[] = {
      {{"/opt/py/bin/python3", venv, xdg, home, configured}, "/opt/py/bin/python3"},
      {{"", venv, xdg, home, configured}, venv + "/bin/python3"},
      {{"", "", xdg, home, configured}, xdg + "/kforge/venv/bin/python3"},
      {{"", "", "", home, configured}, home + "/.cache/kforge/venv/bin/python3"},
      // $XDG_CACHE_HOME names the venv's place even when it holds none: $HOME is not looked at then.
      {{"", "", empty, home, configured}, configured},
      {{"", (dir_ / "no-venv").string(), "", "", configured}, configured},
      {{"", "", "", "", configured}, configured},
      {{"", "", "", "", (dir_ / "built/bin/missing").string()}, "python3"},
      {{"", "", "", "", ""}, "python3"},
  };
  for (const auto& c : cases) EXPECT_EQ(FindPython(c.search), c.want) << c.want;
}

TEST_F(PythonTest, TheSearchReadsTheEnvironment) {
  MakeExecutable(dir_ / "venv/bin/python3");
  setenv("KFORGE_PYTHON", "/opt/py/bin/python3", 1);
  setenv("KFORGE_VENV", (dir_ / "venv").c_str(), 1);
  setenv("XDG_CACHE_HOME", (dir_ / "xdg").c_str(), 1);
  setenv("HOME", (dir_ / "home").c_str(), 1);
  const PythonSearch search = PythonSearchFromEnvironment();
  EXPECT_EQ(search.kforge_python, "/opt/py/bin/python3");
  EXPECT_EQ(search.kforge_venv, (dir_ / "venv").string());
  EXPECT_EQ(search.xdg_cache_home, (dir_ / "xdg").string());
  EXPECT_EQ(search.home, (dir_ / "home").string());
  EXPECT_EQ(FindPython(), "/opt/py/bin/python3");
  setenv("KFORGE_PYTHON", "", 1);  // set but empty counts as unset
  EXPECT_EQ(FindPython(), (dir_ / "venv/bin/python3").string());
  unsetenv("KFORGE_PYTHON");
  unsetenv("KFORGE_VENV");
  EXPECT_EQ(PythonSearchFromEnvironment().kforge_venv, "");
  const std::string configured = PythonSearchFromEnvironment().configured;
  EXPECT_EQ(FindPython(), access(configured.c_str(), X_OK) == 0 && !configured.empty() ? configured : "python3");
}

}  // namespace
}  // namespace kforge::common
