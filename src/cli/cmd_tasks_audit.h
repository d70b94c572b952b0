// `kforge tasks audit`: candidates that do no work, judged against every task on a GPU.
#pragma once

#include <cstdint>
#include <string>

namespace kforge::cli {

struct TasksAuditOptions {
  std::string root;             ///< task root
  std::string filter;           ///< glob over task ids; empty: every task
  std::string device = "cuda";  ///< "cuda" or "cuda:N"
  uint64_t seed = 1;            ///< input seed
  int trials = 5;               ///< trials on the default variant, as verify's --trials
  int timeout_s = 900;          ///< per task
  bool json = false;            ///< one JSON record per task instead of text
  bool timing = false;          ///< correct candidates that cheat on speed instead of no-work ones
  std::string worker_program;   ///< empty: this executable's `worker` (tests name a fake)
};

/// Audits every task; exit 0 when no judgeable task accepted a candidate (with `timing`: and none was
/// timed faster than its honest kernel), 1 when one did, 2 on harness errors or without a GPU.
int AuditTasks(const TasksAuditOptions& options);

}  // namespace kforge::cli
