// The subcommand table: every `kforge <name>` is one row, registered in commands.cc.
#pragma once

#include <functional>
#include <span>
#include <string_view>

#include "kforge/common/status.h"

namespace CLI {
class App;
}

namespace kforge::cli {

/// Exit codes shared by every subcommand.
inline constexpr int kExitOk = 0;      // everything passed
inline constexpr int kExitFailed = 1;  // ran, and some result was not ok
inline constexpr int kExitUsage = 2;   // bad usage, bad input or a broken environment

/// Ends a command on a failure: prints "kforge COMMAND: MESSAGE" as one line on stderr and returns
/// `exit_code`. COMMAND is the command as typed ("generate", "tasks check"). Every command's failures
/// go through here, so they all read the same.
int Fail(std::string_view command, std::string_view message, int exit_code = kExitUsage);
int Fail(std::string_view command, const Status& status, int exit_code = kExitUsage);

/// Runs a subcommand after its options are parsed; returns the exit code.
using Runner = std::function<int()>;

/// One row of the table. `attach` adds the options to `sub` and returns the runner,
/// which reads the option values bound during attach.
struct Command {
  const char* name;
  const char* help;
  Runner (*attach)(CLI::App& sub);
  bool hidden = false;
};

/// All subcommands, in the order `--help` lists them.
std::span<const Command> Commands();

/// Parses argv, runs the chosen subcommand, maps exceptions to a one-line error and exit 2.
int Main(int argc, char** argv);

}  // namespace kforge::cli
