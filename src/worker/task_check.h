// The worker's "task_check" request: does a task's reference run through the real harness within
// its memory budget, agree with itself, and match its golden file? (`kforge tasks check`.)
#pragma once

#include <nlohmann/json.hpp>

#include "worker/check.h"

namespace kforge::worker {

/// Answers one task_check request {task_dir, seed}: status ok, fail (the task's problem) or
/// harness_error, with per-variant memory, timing and checks (docs/worker.md).
nlohmann::json RunTaskCheck(GpuChecker& checker, const nlohmann::json& request);

}  // namespace kforge::worker
