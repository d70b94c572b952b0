// Candidates prepared for a variant, and their memory plan.
#include "worker/prepared_candidate.h"

#include <cstdio>

#include "kforge/cuda/guarded_buffer.h"
#include "kforge/cuda/plan_env.h"

namespace kforge::worker {
namespace {

bool Lists(const std::vector<common::TensorSpec>& specs, const std::string& name) {
  for (const common::TensorSpec& spec : specs)
    if (spec.name == name) return true;
  return false;
}

}  // namespace

nlohmann::json MemoryPlan::ToJson() const {
  return {{"inputs_bytes", inputs},   {"params_bytes", params},       {"outputs_bytes", outputs},
          {"scratch_bytes", scratch}, {"footprint_bytes", footprint()}, {"budget_bytes", budget()}};
}

MemoryPlan PlanMemory(const common::Task& task, const cuda::PlanEnv& env) {
  MemoryPlan plan;
  for (const auto& [name, tensor] : env.tensors) {
    auto bytes = static_cast<int64_t>(tensor.bytes());
    if (Lists(task.inputs, name)) {
      plan.inputs += bytes;
    } else if (Lists(task.params, name)) {
      plan.params += bytes;
    } else if (Lists(task.outputs, name)) {
      plan.outputs += bytes;
    } else {
      plan.scratch += bytes;
    }
    plan.guards += 2 * static_cast<int64_t>(cuda::GuardedBuffer::kGuardBytes);
  }
  return plan;
}

std::string FormatBytes(int64_t bytes) {
  char text[32];
  if (bytes >= (int64_t{1} << 30)) {
    std::snprintf(text, sizeof text, "%.2f GiB", static_cast<double>(bytes) / (1 << 30));
  } else if (bytes >= (int64_t{1} << 20)) {
    std::snprintf(text, sizeof text, "%.1f MiB", static_cast<double>(bytes) / (1 << 20));
  } else {
    std::snprintf(text, sizeof text, "%lld bytes", static_cast<long long>(bytes));
  }
  return text;
}

StatusOr<PreparedCandidate> PrepareCandidate(const common::Task& task, const common::Variant& variant,
                                             const common::Solution& solution, const cuda::KernelLibrary& library,
                                             const cuda::LaunchLimits& limits) {
  KFORGE_ASSIGN_OR_RETURN(cuda::PlanEnv env, cuda::PlanEnvFor(task, variant));
  KFORGE_RETURN_IF_ERROR(cuda::AddScratch(solution, limits, env));
  KFORGE_ASSIGN_OR_RETURN(cuda::ResolvedPlan resolved, cuda::ResolvePlan(solution, env, limits));
  KFORGE_ASSIGN_OR_RETURN(cuda::BoundPlan bound, cuda::BoundPlan::Bind(resolved, library));
  MemoryPlan memory = PlanMemory(task, env);
  return PreparedCandidate{std::move(env), std::move(bound), memory};
}

}  // namespace kforge::worker
