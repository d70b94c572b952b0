// Child processes of a launch, started with common::Subprocess: short probes whose stdout is read
// (the Python's versions, the chat template check), and the trainer, whose output goes to the
// terminal and to the run's log.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "kforge/common/status.h"
#include "kforge/common/subprocess.h"

namespace kforge::finetune {

struct ProcessResult {
  /// The exit code, or 128 + the signal's number when a signal ended the process.
  int exit_code = -1;
  /// The signal that ended the process; 0 when it exited.
  int signal = 0;
  /// Standard output (Capture: all of it, up to 16 MiB; RunLogged: its last 64 KiB).
  std::string out;
  /// Standard error (Capture only, up to 16 MiB).
  std::string err;
};

/// Runs `argv` (argv[0] looked up on PATH) with stdin from /dev/null and waits, capturing its
/// stdout and stderr. Unavailable when the program cannot be started.
StatusOr<ProcessResult> Capture(const std::vector<std::string>& argv);

/// Runs `argv` with stdin from /dev/null and PYTHONUNBUFFERED=1, copying its stdout and stderr to
/// ours and writing both to `log` (replacing it), and waits. SIGINT, SIGTERM and SIGHUP sent to kforge
/// meanwhile are passed to the child (which runs in its own process group), so that kforge outlives it.
/// `environment` ("NAME=value") is set on top of ours.
StatusOr<ProcessResult> RunLogged(const std::vector<std::string>& argv, const std::filesystem::path& log,
                                  const std::vector<std::string>& environment = {});

/// `program` found on PATH (or as given, when it holds a '/') and executable.
using common::OnPath;

}  // namespace kforge::finetune
