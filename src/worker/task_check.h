// The worker's "task_check" request: does a task's reference run through the real harness within
// its memory budget, agree with itself, and match its golden file? (`kforge tasks check`.)
#pragma once

#include "kforge/verify/worker_protocol.h"
#include "worker/check.h"

namespace kforge::worker {

/// Answers one task_check request: status ok, fail (the task's problem) or harness_error, with
/// per-variant memory, timing and checks (docs/worker.md).
verify::TaskCheckReply RunTaskCheck(GpuChecker& checker, const verify::TaskCheckRequest& request);

}  // namespace kforge::worker
