// Candidates prepared for a variant, and their memory plan.
#include "worker/prepared_candidate.h"

#include <cstdio>

#include "kforge/cuda/guarded_buffer.h"
#include "kforge/cuda/plan_env.h"
#include "kforge/reference/library_ops.h"

namespace kforge::worker {
namespace {

bool Lists(const std::vector<common::TensorSpec>& specs, const std::string& name) {
  for (const common::TensorSpec& spec : specs)
    if (spec.name == name) return true;
  return false;
}

}  // namespace

common::MemoryRecord MemoryPlan::Record(std::optional<int64_t> peak_device_bytes) const {
  common::MemoryRecord record;
  record.inputs_bytes = inputs;
  record.params_bytes = params;
  record.outputs_bytes = outputs;
  record.scratch_bytes = scratch;
  record.footprint_bytes = footprint();
  record.budget_bytes = budget();
  if (peak_device_bytes) {
    record.peak_device_bytes = *peak_device_bytes;
  } else {
    record.absent_keys.push_back("/peak_device_bytes");
  }
  return record;
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

Status TorchOpRunner::Run(const cuda::ResolvedStep& step, const std::map<std::string, void*>& pointers,
                          cudaStream_t stream) const {
  auto ref = [&pointers](const cuda::OpOperand& operand) {
    return reference::DeviceTensorRef{pointers.at(operand.tensor), operand.dtype, operand.shape};
  };
  if (step.kind == common::LaunchStep::Kind::kFill)
    return reference::FillTensor(ref(step.target), step.fill_value, device_, stream);
  std::vector<reference::DeviceTensorRef> args;
  for (const cuda::OpOperand& arg : step.op_args) args.push_back(ref(arg));
  return reference::RunLibraryOp(step.op, args, step.op_attrs, ref(step.target), device_, stream);
}

std::optional<common::PlanSplit> TimePlanSplit(const PreparedCandidate& candidate, const std::map<std::string, void*>& pointers,
                             cudaStream_t stream) {
  const cuda::ResolvedPlan& plan = candidate.plan.plan();
  if (!plan.has_library_steps) return std::nullopt;
  std::vector<cudaEvent_t> events(plan.steps.size() + 1);
  for (cudaEvent_t& e : events) cudaEventCreate(&e);
  std::map<std::string, void*> with_views = pointers;
  Status ran = Status::Ok();
  cudaEventRecord(events[0], stream);
  for (size_t i = 0; i < plan.steps.size() && ran.ok(); ++i) {
    ran = candidate.plan.RunSteps(i, i + 1, stream, with_views, &candidate.ops);
    cudaEventRecord(events[i + 1], stream);
  }
  std::optional<common::PlanSplit> split;
  if (ran.ok() && cudaStreamSynchronize(stream) == cudaSuccess) {
    double kernels = 0, ops = 0;
    for (size_t i = 0; i < plan.steps.size(); ++i) {
      float ms = 0;
      cudaEventElapsedTime(&ms, events[i], events[i + 1]);
      auto kind = plan.steps[i].kind;
      if (kind == common::LaunchStep::Kind::kOp || kind == common::LaunchStep::Kind::kFill) {
        ops += ms;
      } else {
        kernels += ms;
      }
    }
    split = common::MakePlanSplit(kernels, ops);
  }
  for (cudaEvent_t& e : events) cudaEventDestroy(e);
  return split;
}

StatusOr<PreparedCandidate> PrepareCandidate(const common::Task& task, const common::Variant& variant,
                                             const common::Solution& solution,
                                             const cuda::KernelLibrary& library,
                                             const cuda::LaunchLimits& device_limits, int device) {
  // Which ops a plan may call (--allow-ops) is the verify service's to decide before a request is
  // sent; the worker runs every op step it is given.
  cuda::LaunchLimits limits = device_limits;
  limits.op_policy = common::OpPolicy::kAll;
  KFORGE_ASSIGN_OR_RETURN(cuda::PlanEnv env, cuda::PlanEnvFor(task, variant));
  KFORGE_RETURN_IF_ERROR(cuda::AddScratch(solution, limits, env));
  KFORGE_ASSIGN_OR_RETURN(cuda::ResolvedPlan resolved, cuda::ResolvePlan(solution, env, limits));
  KFORGE_ASSIGN_OR_RETURN(cuda::BoundPlan bound, cuda::BoundPlan::Bind(resolved, library));
  MemoryPlan memory = PlanMemory(task, env);
  return PreparedCandidate{std::move(env), std::move(bound), memory, TorchOpRunner(device), &library};
}

}  // namespace kforge::worker
