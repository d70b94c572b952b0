// `kforge tasks check`: tasks proved against the harness on a GPU.
#pragma once

#include <cstdint>
#include <string>

namespace kforge::cli {

struct TasksCheckOptions {
  std::string root;             ///< task root
  std::string filter;           ///< glob over task ids; empty: every task
  std::string device = "cuda";  ///< "cuda" or "cuda:N"
  uint64_t seed = 1;            ///< input seed
  int timeout_s = 900;          ///< per task
  bool json = false;            ///< one JSON record per task instead of a text line
  std::string worker_program;   ///< empty: this executable's `worker` (tests name a fake)
};

/// Checks every task; exit 0 all ok or ill_conditioned, 1 some failed, 2 harness errors or no GPU.
int CheckTasks(const TasksCheckOptions& options);

}  // namespace kforge::cli
