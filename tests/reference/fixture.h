// Test helper: builds the exported fixture task (tests/reference/make_fixture.py) once per process.
#pragma once

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

namespace kforge::reference::testing {

/// Root holding fixture/affine with packages for `devices` ("cpu" or "cpu,cuda"), or empty when
/// the exporter could not run (the caller skips). Built under the system temp folder.
inline std::filesystem::path FixtureRoot(const std::string& devices) {
  static std::string built_for;
  static std::filesystem::path root;
  if (built_for == devices) return root;
  std::filesystem::path dir =
      std::filesystem::temp_directory_path() /
      ("kforge_ref_fixture_" + std::to_string(::getpid()) + "_" + std::to_string(devices.size()));
  std::string cmd = std::string("'") + KFORGE_TORCH_PYTHON + "' '" + KFORGE_SOURCE_DIR +
                    "/tests/reference/make_fixture.py' '" + dir.string() + "' " + devices + " > /dev/null";
  built_for = devices;
  root = std::system(cmd.c_str()) == 0 ? dir : std::filesystem::path();
  return root;
}

}  // namespace kforge::reference::testing
