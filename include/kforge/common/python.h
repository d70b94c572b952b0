// Which Python interpreter kforge runs (the task exporter, the trainer, the Parquet writer, the Hub
// push): one rule for every command.
#pragma once

#include <string>

namespace kforge::common {

/// What the rule reads, from the environment and the build; an empty field is unset.
struct PythonSearch {
  std::string kforge_python;   ///< $KFORGE_PYTHON
  std::string kforge_venv;     ///< $KFORGE_VENV
  std::string xdg_cache_home;  ///< $XDG_CACHE_HOME
  std::string home;            ///< $HOME
  std::string configured;      ///< the Python the build was configured with (cmake's KFORGE_PYTHON)
};

/// The search as this process sees it: its environment and the build's Python.
PythonSearch PythonSearchFromEnvironment();

/// The Python to run: `kforge_python` when set; else the venv scripts/setup.sh makes ($KFORGE_VENV,
/// else $XDG_CACHE_HOME/kforge/venv, else ~/.cache/kforge/venv) when its bin/python3 is executable;
/// else the build's Python when it is executable; else "python3" (looked up on PATH when run).
std::string FindPython(const PythonSearch& search);

/// FindPython(PythonSearchFromEnvironment()).
std::string FindPython();

}  // namespace kforge::common
