// LocalSlurm: scripts/slurm-local.sh start and stop around a test.
#include "fakes/local_slurm.h"

#include <unistd.h>

namespace kforge::fakes {

namespace {
std::string Script() { return std::string(KFORGE_SOURCE_DIR) + "/scripts/slurm-local.sh"; }
}  // namespace

LocalSlurm::LocalSlurm(std::filesystem::path dir) : dir_(std::move(dir)) {
  started_ = RunCommand(Script() + " start " + dir_.string() + " 2>&1");
}

LocalSlurm::~LocalSlurm() { RunCommand(Script() + " stop " + dir_.string()); }

std::string LocalSlurm::Env() const { return "SLURM_CONF=" + (dir_ / "slurm.conf").string() + " "; }

bool LocalSlurm::WaitUntilIdle(double seconds) const {
  for (int i = 0; i < static_cast<int>(seconds * 4); ++i) {
    CommandResult queue = RunCommand(Env() + "squeue -h 2>&1");
    if (queue.exit_code == 0 && queue.out.empty()) return true;
    usleep(250000);
  }
  return false;
}

}  // namespace kforge::fakes
