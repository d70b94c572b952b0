// The names a launch plan may use for one variant of a task: shape symbols (with integral
// constants) and every input, param and output with its resolved shape.
#pragma once

#include "kforge/common/status.h"
#include "kforge/common/task.h"
#include "kforge/cuda/launch_plan.h"

namespace kforge::cuda {

/// Inputs and params are read-only, outputs writable; scratch is added later by AddScratch.
StatusOr<PlanEnv> PlanEnvFor(const common::Task& task, const common::Variant& variant);

}  // namespace kforge::cuda
