// The inputs of each trial.
#include "worker/trial_plan.h"

#include "kforge/reference/runner.h"

namespace kforge::worker {

TrialDraw TrialDrawFor(size_t v, int t, int count, int domains) {
  int domain = v == 0 ? t - (count - domains) : (domains > 0 ? 0 : -1);
  if (domain >= 0 && (t > 0 || v > 0)) return {0, domain};
  return {t % reference::kNumDistributions, -1};
}

common::Task WithDomain(const common::Task& task, const common::InputDomain& domain) {
  common::Task copy = task;
  for (common::TensorSpec& input : copy.inputs) {
    auto it = domain.inputs.find(input.name);
    if (it != domain.inputs.end()) input.init = it->second;
  }
  return copy;
}

}  // namespace kforge::worker
