// Which inputs each trial of a check draws: the task's own distributions, then its measured domains
// (docs/worker.md, "Trials"). The GPU check and the audit follow the same plan.
#pragma once

#include <cstddef>

#include "kforge/common/task.h"

namespace kforge::worker {

/// Distribution `dist` of the inits of the task (domain < 0) or of its domain `domain`.
struct TrialDraw {
  int dist = 0;
  int domain = -1;
};

/// Trial `t` of variant `v` (0 = default) in a check of `count` trials on the default variant and one
/// on each other, for a task with `domains` measured domains: the default variant's last trials draw
/// from the domains (never its first, which keeps the task's own init); another variant's one trial
/// from the first domain.
TrialDraw TrialDrawFor(size_t v, int t, int count, int domains);

/// The task with the inits of `domain` in place of its inputs' own.
common::Task WithDomain(const common::Task& task, const common::InputDomain& domain);

}  // namespace kforge::worker
