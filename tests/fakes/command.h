// Runs a shell command for end-to-end CLI tests: its exit code, its stdout, and stdout as JSON lines.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kforge::fakes {

struct CommandResult {
  int exit_code = -1;  ///< -1 when the command did not exit normally.
  std::string out;     ///< Standard output; stderr goes wherever the command sends it.
};

/// Runs `command` with /bin/sh and waits for it.
CommandResult RunCommand(const std::string& command);

/// One JSON value per non-empty line; a line that does not parse becomes a discarded value.
std::vector<nlohmann::json> JsonLines(const std::string& text);

}  // namespace kforge::fakes
