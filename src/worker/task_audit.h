// No-work candidates against a task (`kforge tasks audit`): the judge must refuse each on every task
// whose outputs depend on its inputs.
#pragma once

#include "kforge/verify/worker_protocol.h"
#include "worker/check.h"

namespace kforge::worker {

/// Judges zeros, a byte pattern, a copy of each input, half the reference's outputs and the
/// reference's outputs on other inputs against the reference, on the trials a check of `request.trials`
/// would make (same variants, distributions and domains), with the check's judging rules.
verify::TaskAuditReply RunTaskAudit(GpuChecker& checker, const verify::TaskAuditRequest& request);

}  // namespace kforge::worker
