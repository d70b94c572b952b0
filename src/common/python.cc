// The one rule for which Python kforge runs.
#include "kforge/common/python.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#ifndef KFORGE_CONFIGURED_PYTHON
#define KFORGE_CONFIGURED_PYTHON ""
#endif

namespace kforge::common {
namespace {

namespace fs = std::filesystem;

std::string Env(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

bool Executable(const std::string& path) { return !path.empty() && access(path.c_str(), X_OK) == 0; }

/// The folder scripts/setup.sh makes its venv in, or empty when no variable names one.
fs::path VenvFolder(const PythonSearch& search) {
  if (!search.kforge_venv.empty()) return search.kforge_venv;
  if (!search.xdg_cache_home.empty()) return fs::path(search.xdg_cache_home) / "kforge/venv";
  if (!search.home.empty()) return fs::path(search.home) / ".cache/kforge/venv";
  return {};
}

}  // namespace

PythonSearch PythonSearchFromEnvironment() {
  return {Env("KFORGE_PYTHON"), Env("KFORGE_VENV"), Env("XDG_CACHE_HOME"), Env("HOME"), KFORGE_CONFIGURED_PYTHON};
}

std::string FindPython(const PythonSearch& search) {
  if (!search.kforge_python.empty()) return search.kforge_python;
  if (const fs::path venv = VenvFolder(search); !venv.empty()) {
    const std::string python = (venv / "bin/python3").string();
    if (Executable(python)) return python;
  }
  if (Executable(search.configured)) return search.configured;
  return "python3";
}

std::string FindPython() { return FindPython(PythonSearchFromEnvironment()); }

}  // namespace kforge::common
