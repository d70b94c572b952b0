// A real one-node Slurm cluster for end-to-end tests (scripts/slurm-local.sh: Debian's packages, its own
// munge key and socket, state under a folder of the test's), stopped when the object goes.
#pragma once

#include <filesystem>
#include <string>

#include "fakes/command.h"

namespace kforge::fakes {

class LocalSlurm {
 public:
  /// Starts the cluster with its files under `dir`; started() says whether it came up.
  explicit LocalSlurm(std::filesystem::path dir);
  ~LocalSlurm();
  LocalSlurm(const LocalSlurm&) = delete;
  LocalSlurm& operator=(const LocalSlurm&) = delete;

  /// What the start script printed and its exit code (0: the node is idle).
  const CommandResult& started() const { return started_; }
  /// "SLURM_CONF=... " to put before a command that talks to the cluster.
  std::string Env() const;
  /// Waits until no job is queued or running, at most `seconds`; false when some still is.
  bool WaitUntilIdle(double seconds) const;

 private:
  std::filesystem::path dir_;
  CommandResult started_;
};

}  // namespace kforge::fakes
