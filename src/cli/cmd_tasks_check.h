// `kforge tasks check`: tasks proved against the harness on a GPU.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "cli/ci_report.h"
#include "kforge/common/status.h"
#include "kforge/common/verdict_parts.h"
#include "kforge/verify/worker_session.h"

namespace kforge::cli {

struct TasksCheckOptions {
  std::string root;             ///< task root
  std::string filter;           ///< glob over task ids; empty: every task
  std::string shard;            ///< "i/n": the tasks whose position among those the filter keeps is i mod n
  std::string device = "cuda";  ///< "cuda" or "cuda:N"
  uint64_t seed = 1;            ///< input seed
  int timeout_s = 900;          ///< per task
  bool json = false;            ///< one JSON record per task instead of a text line
  std::string worker_program;   ///< empty: this executable's `worker` (tests name a fake)
  CiFlags ci;                   ///< --junit FILE, --annotations
};

/// Checks every task; exit 0 all ok or flagged by the import (ill_conditioned, degenerate,
/// nondeterministic), 1 some failed, 2 harness errors or no GPU.
int CheckTasks(const TasksCheckOptions& options);

/// A worker on `device` ("cuda" or "cuda:N"; `worker_program` or this executable's `worker`) that
/// answered hello with a GPU; one-line error otherwise. With `peak`, hello asks for the device's
/// peaks and stores them there (none when unknown).
StatusOr<std::unique_ptr<verify::WorkerSession>> StartTaskWorker(
    const std::string& device, const std::string& worker_program,
    std::optional<common::DevicePeak>* peak = nullptr);

}  // namespace kforge::cli
