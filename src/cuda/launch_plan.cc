// Launch plan resolution (names, expressions, limits) and execution.
#include "kforge/cuda/launch_plan.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "kforge/common/expr.h"
#include "kforge/cuda/check.h"

namespace kforge::cuda {
namespace {

using common::LaunchArg;
using common::LaunchStep;

std::string StepPath(size_t i) { return "launches[" + std::to_string(i) + "]"; }

common::ExprEnv ExprEnvFor(const PlanEnv& env) {
  common::ExprEnv e;
  e.symbol = [&env](std::string_view name) -> std::optional<int64_t> {
    auto it = env.symbols.find(std::string(name));
    if (it == env.symbols.end()) return std::nullopt;
    return it->second;
  };
  e.shape = [&env](std::string_view name) -> std::optional<std::vector<int64_t>> {
    auto it = env.tensors.find(std::string(name));
    if (it == env.tensors.end()) return std::nullopt;
    return it->second.shape;
  };
  return e;
}

StatusOr<int64_t> Eval(const std::string& text, const common::ExprEnv& env, const std::string& path) {
  auto value = common::EvalExpr(text, env);
  if (!value.ok()) return Status::InvalidArgument(path + ": " + value.status().message());
  return *value;
}

Status ResolveDims(const std::vector<std::string>& exprs, const common::ExprEnv& env, const std::string& path,
                   const int* max_dims, dim3& out) {
  unsigned int* fields[3] = {&out.x, &out.y, &out.z};
  for (int d = 0; d < 3; ++d) {
    std::string at = path + "[" + std::to_string(d) + "]";
    KFORGE_ASSIGN_OR_RETURN(int64_t v, Eval(exprs[d], env, at));
    if (v < 1 || v > max_dims[d]) {
      return Status::InvalidArgument(at + ": " + std::to_string(v) + " is outside 1.." +
                                     std::to_string(max_dims[d]));
    }
    *fields[d] = static_cast<unsigned int>(v);
  }
  return Status::Ok();
}

StatusOr<ResolvedArg> ResolveArg(const LaunchArg& arg, const PlanEnv& env, const common::ExprEnv& eval_env,
                                 const std::string& path) {
  ResolvedArg out;
  switch (arg.kind) {
    case LaunchArg::Kind::kTensor:
      if (!env.tensors.count(arg.text))
        return Status::InvalidArgument(path + ": unknown tensor \"" + arg.text + "\"");
      out.tensor = arg.text;
      out.size = sizeof(void*);
      return out;
    case LaunchArg::Kind::kF32: {
      float f = static_cast<float>(arg.number);
      uint32_t bits;
      std::memcpy(&bits, &f, 4);
      return ResolvedArg{"", "", 0, bits, 4};
    }
    case LaunchArg::Kind::kF64: {
      uint64_t bits;
      std::memcpy(&bits, &arg.number, 8);
      return ResolvedArg{"", "", 0, bits, 8};
    }
    case LaunchArg::Kind::kItem: {
      auto it = env.tensors.find(arg.text);
      if (it == env.tensors.end())
        return Status::InvalidArgument(path + ": unknown tensor \"" + arg.text + "\"");
      KFORGE_ASSIGN_OR_RETURN(int64_t index, Eval(arg.index, eval_env, path));
      int64_t numel = 1;
      for (int64_t d : it->second.shape) numel *= d;
      if (index < 0 || index >= numel)
        return Status::InvalidArgument(path + ": element " + std::to_string(index) + " is outside \"" +
                                       arg.text + "\" (" + std::to_string(numel) + " elements)");
      size_t size = common::DTypeSize(it->second.dtype);
      if (size > 8) return Status::InvalidArgument(path + ": elements of more than 8 bytes cannot be passed");
      return ResolvedArg{"", arg.text, static_cast<size_t>(index) * size, 0, size};
    }
    default:
      break;
  }
  KFORGE_ASSIGN_OR_RETURN(int64_t v, Eval(arg.text, eval_env, path));
  bool is32 = arg.kind == LaunchArg::Kind::kI32 || arg.kind == LaunchArg::Kind::kU32;
  bool is_signed = arg.kind == LaunchArg::Kind::kI32 || arg.kind == LaunchArg::Kind::kI64;
  int64_t lo = is_signed ? (is32 ? INT32_MIN : INT64_MIN) : 0;
  int64_t hi = is32 ? (is_signed ? INT32_MAX : int64_t{UINT32_MAX}) : INT64_MAX;
  if (v < lo || v > hi)
    return Status::InvalidArgument(path + ": " + std::to_string(v) + " does not fit the type");
  return ResolvedArg{"", "", 0, is32 ? uint64_t(uint32_t(v)) : uint64_t(v), is32 ? size_t{4} : size_t{8}};
}

}  // namespace

size_t PlanTensor::bytes() const {
  size_t n = common::DTypeSize(dtype);
  for (int64_t d : shape) n *= static_cast<size_t>(d);
  return n;
}

LaunchLimits LimitsFor(const DeviceInfo& device) {
  LaunchLimits limits;
  limits.max_threads_per_block = device.max_threads_per_block;
  for (int i = 0; i < 3; ++i) {
    limits.max_block_dims[i] = device.max_block_dims[i];
    limits.max_grid_dims[i] = device.max_grid_dims[i];
  }
  limits.max_shared_bytes = device.shared_per_block_optin;
  return limits;
}

Status AddScratch(const common::Solution& solution, const LaunchLimits& limits, PlanEnv& env) {
  common::ExprEnv eval_env = ExprEnvFor(env);
  size_t total = 0;
  for (size_t i = 0; i < solution.scratch.size(); ++i) {
    const common::ScratchBuffer& buffer = solution.scratch[i];
    std::string path = "scratch[" + std::to_string(i) + "]";
    if (env.tensors.count(buffer.name)) {
      return Status::InvalidArgument(path + ".name: \"" + buffer.name + "\" is already a task tensor");
    }
    PlanTensor tensor;
    tensor.dtype = *common::ParseDType(buffer.dtype);
    tensor.writable = true;
    size_t bytes = common::DTypeSize(tensor.dtype);
    for (size_t d = 0; d < buffer.shape.size(); ++d) {
      std::string at = path + ".shape[" + std::to_string(d) + "]";
      KFORGE_ASSIGN_OR_RETURN(int64_t v, Eval(buffer.shape[d], eval_env, at));
      if (v < 0) return Status::InvalidArgument(at + ": negative size " + std::to_string(v));
      if (v > 0 && bytes > limits.max_scratch_bytes / static_cast<size_t>(v)) {
        return Status::InvalidArgument(path + ": larger than the scratch limit");
      }
      bytes *= static_cast<size_t>(v);
      tensor.shape.push_back(v);
    }
    total += bytes;
    if (total > limits.max_scratch_bytes) {
      return Status::InvalidArgument("scratch: " + std::to_string(total) + " bytes in all, over the " +
                                     std::to_string(limits.max_scratch_bytes) + "-byte limit");
    }
    env.tensors[buffer.name] = std::move(tensor);
  }
  return Status::Ok();
}

namespace {

StatusOr<OpOperand> Operand(const PlanEnv& env, const std::string& name, const std::string& path,
                            bool write) {
  auto it = env.tensors.find(name);
  if (it == env.tensors.end()) return Status::InvalidArgument(path + ": unknown tensor \"" + name + "\"");
  if (write && !it->second.writable) return Status::InvalidArgument(path + ": \"" + name + "\" is read-only");
  return OpOperand{name, it->second.dtype, it->second.shape};
}

/// Resolves an op, fill or view step; a view adds its name to `env`.
Status ResolveV2Step(const LaunchStep& step, const std::string& path, const common::ExprEnv& eval_env,
                     const LaunchLimits& limits, PlanEnv& env, ResolvedStep& out) {
  if (step.kind == LaunchStep::Kind::kOp) {
    if (limits.op_policy == common::OpPolicy::kNone)
      return Status::InvalidArgument(path + ".op: library ops are not allowed here (--allow-ops none)");
    if (common::IsAtenOpName(step.op) && limits.op_policy != common::OpPolicy::kAll)
      return Status::InvalidArgument(
          path + ".op: " + step.op +
          " is outside kforge's allowlist of library ops; it needs --allow-ops all");
    out.op = step.op;
    out.op_attrs = step.op_attrs;
    for (size_t a = 0; a < step.op_args.size(); ++a) {
      KFORGE_ASSIGN_OR_RETURN(
          OpOperand arg, Operand(env, step.op_args[a], path + ".args[" + std::to_string(a) + "]", false));
      out.op_args.push_back(std::move(arg));
    }
    KFORGE_ASSIGN_OR_RETURN(out.target, Operand(env, step.op_out, path + ".out", true));
    return Status::Ok();
  }
  if (step.kind == LaunchStep::Kind::kFill) {
    KFORGE_ASSIGN_OR_RETURN(out.target, Operand(env, step.fill_target, path + ".fill", true));
    out.fill_value = step.fill_value;
    return Status::Ok();
  }
  // A view: a contiguous window of its base, inside it, possibly with another element type.
  if (env.tensors.count(step.view_name))
    return Status::InvalidArgument(path + ".view: \"" + step.view_name + "\" already names a tensor");
  auto base = env.tensors.find(step.view_of);
  if (base == env.tensors.end())
    return Status::InvalidArgument(path + ".of: unknown tensor \"" + step.view_of + "\"");
  PlanTensor view;
  view.writable = base->second.writable;
  view.dtype = step.view_dtype.empty() ? base->second.dtype : *common::ParseDType(step.view_dtype);
  KFORGE_ASSIGN_OR_RETURN(int64_t offset, Eval(step.view_offset, eval_env, path + ".offset"));
  if (offset < 0) return Status::InvalidArgument(path + ".offset: negative");
  uint64_t elements = 1;
  for (size_t d = 0; d < step.view_shape.size(); ++d) {
    std::string at = path + ".shape[" + std::to_string(d) + "]";
    KFORGE_ASSIGN_OR_RETURN(int64_t v, Eval(step.view_shape[d], eval_env, at));
    if (v < 0 || (v > 0 && elements > (uint64_t{1} << 62) / static_cast<uint64_t>(v)))
      return Status::InvalidArgument(at + ": " + std::to_string(v) + " is not a usable size");
    elements *= static_cast<uint64_t>(v);
    view.shape.push_back(v);
  }
  const uint64_t base_bytes = base->second.bytes();
  const uint64_t start = static_cast<uint64_t>(offset) * common::DTypeSize(base->second.dtype);
  const uint64_t size = elements * common::DTypeSize(view.dtype);
  if (start > base_bytes || size > base_bytes - start)
    return Status::InvalidArgument(path + ": bytes [" + std::to_string(start) + ", " +
                                   std::to_string(start + size) + ") lie outside \"" + step.view_of + "\" (" +
                                   std::to_string(base_bytes) + " bytes)");
  if (start % common::DTypeSize(view.dtype) != 0)
    return Status::InvalidArgument(path + ".offset: not aligned to the view's element size");
  out.view = {step.view_name, step.view_of, static_cast<size_t>(start)};
  env.tensors[step.view_name] = std::move(view);
  return Status::Ok();
}

}  // namespace

StatusOr<ResolvedPlan> ResolvePlan(const common::Solution& solution, const PlanEnv& task_env,
                                   const LaunchLimits& limits) {
  PlanEnv env = task_env;  // views add names as the plan goes
  common::ExprEnv eval_env = ExprEnvFor(env);
  ResolvedPlan plan;
  for (size_t i = 0; i < solution.launches.size(); ++i) {
    const LaunchStep& step = solution.launches[i];
    std::string path = StepPath(i);
    ResolvedStep out;
    out.kind = step.kind;
    if (step.kind == LaunchStep::Kind::kOp || step.kind == LaunchStep::Kind::kFill ||
        step.kind == LaunchStep::Kind::kView) {
      KFORGE_RETURN_IF_ERROR(ResolveV2Step(step, path, eval_env, limits, env, out));
      plan.has_library_steps |= step.kind != LaunchStep::Kind::kView;
      plan.steps.push_back(std::move(out));
      continue;
    }
    if (step.kind == LaunchStep::Kind::kMemset) {
      auto it = env.tensors.find(step.memset_target);
      if (it == env.tensors.end()) {
        return Status::InvalidArgument(path + ".memset: unknown tensor \"" + step.memset_target + "\"");
      }
      if (!it->second.writable) {
        return Status::InvalidArgument(path + ".memset: \"" + step.memset_target + "\" is read-only");
      }
      std::optional<uint8_t> byte = common::MemsetByte(step.memset_value, it->second.dtype);
      if (!byte) {
        return Status::InvalidArgument(path +
                                       ".value: memset fills bytes; use 0 (or a kernel) for this value");
      }
      out.memset_target = step.memset_target;
      out.memset_byte = *byte;
      out.memset_bytes = it->second.bytes();
      plan.steps.push_back(std::move(out));
      continue;
    }
    out.kernel = step.kernel;
    KFORGE_RETURN_IF_ERROR(ResolveDims(step.grid, eval_env, path + ".grid", limits.max_grid_dims, out.grid));
    KFORGE_RETURN_IF_ERROR(
        ResolveDims(step.block, eval_env, path + ".block", limits.max_block_dims, out.block));
    uint64_t threads = uint64_t(out.block.x) * out.block.y * out.block.z;
    if (threads > static_cast<uint64_t>(limits.max_threads_per_block)) {
      return Status::InvalidArgument(path + ".block: " + std::to_string(threads) +
                                     " threads per block, over " +
                                     std::to_string(limits.max_threads_per_block));
    }
    KFORGE_ASSIGN_OR_RETURN(int64_t shared, Eval(step.shared_bytes, eval_env, path + ".shared_bytes"));
    if (shared < 0 || static_cast<uint64_t>(shared) > limits.max_shared_bytes) {
      return Status::InvalidArgument(path + ".shared_bytes: " + std::to_string(shared) + " is outside 0.." +
                                     std::to_string(limits.max_shared_bytes));
    }
    out.shared_bytes = static_cast<size_t>(shared);
    for (size_t a = 0; a < step.args.size(); ++a) {
      KFORGE_ASSIGN_OR_RETURN(ResolvedArg arg, ResolveArg(step.args[a], env, eval_env,
                                                          path + ".args[" + std::to_string(a) + "]"));
      out.args.push_back(std::move(arg));
    }
    plan.steps.push_back(std::move(out));
  }
  return plan;
}

StatusOr<BoundPlan> BoundPlan::Bind(const ResolvedPlan& plan, const KernelLibrary& library) {
  BoundPlan bound;
  bound.plan_ = plan;
  for (const ResolvedStep& step : plan.steps) bound.has_views_ |= step.kind == LaunchStep::Kind::kView;
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const ResolvedStep& step = plan.steps[i];
    if (step.kind != LaunchStep::Kind::kKernel) {
      bound.kernels_.push_back(nullptr);
      continue;
    }
    std::string path = StepPath(i);
    auto kernel = library.Kernel(step.kernel);
    if (!kernel.ok()) return Status::InvalidArgument(path + ".kernel: " + kernel.status().message());
    KFORGE_ASSIGN_OR_RETURN(std::vector<size_t> sizes, library.ParamSizes(*kernel));
    if (sizes.size() != step.args.size()) {
      return Status::InvalidArgument(path + ".args: kernel \"" + step.kernel + "\" takes " +
                                     std::to_string(sizes.size()) + " parameters, the plan passes " +
                                     std::to_string(step.args.size()));
    }
    for (size_t a = 0; a < sizes.size(); ++a) {
      if (sizes[a] != step.args[a].size) {
        return Status::InvalidArgument(path + ".args[" + std::to_string(a) + "]: the kernel parameter has " +
                                       std::to_string(sizes[a]) + " bytes, the argument " +
                                       std::to_string(step.args[a].size));
      }
    }
    if (step.shared_bytes > 48 * 1024) {
      KFORGE_CUDA_RETURN_IF_ERROR(cudaKernelSetAttributeForDevice(
          *kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(step.shared_bytes), 0));
    }
    bound.kernels_.push_back(*kernel);
  }
  return bound;
}

Status BoundPlan::Run(cudaStream_t stream, const std::map<std::string, void*>& pointers,
                      const OpRunner* ops) const {
  if (!has_views_) {  // the common case: no copy of the pointer map
    for (size_t i = 0; i < plan_.steps.size(); ++i) KFORGE_RETURN_IF_ERROR(RunStep(i, stream, pointers, ops));
    return Status::Ok();
  }
  std::map<std::string, void*> with_views = pointers;
  return RunSteps(0, plan_.steps.size(), stream, with_views, ops);
}

Status BoundPlan::RunSteps(size_t first, size_t last, cudaStream_t stream,
                           std::map<std::string, void*>& pointers, const OpRunner* ops) const {
  for (size_t i = first; i < last && i < plan_.steps.size(); ++i) {
    const ResolvedStep& step = plan_.steps[i];
    if (step.kind == LaunchStep::Kind::kView) {
      pointers[step.view.name] = static_cast<char*>(pointers.at(step.view.base)) + step.view.byte_offset;
      continue;
    }
    KFORGE_RETURN_IF_ERROR(RunStep(i, stream, pointers, ops));
  }
  return Status::Ok();
}

Status BoundPlan::RunStep(size_t i, cudaStream_t stream, const std::map<std::string, void*>& pointers,
                          const OpRunner* ops) const {
  const ResolvedStep& step = plan_.steps[i];
  if (step.kind == LaunchStep::Kind::kView) return Status::Ok();  // applied by RunSteps
  if (step.kind == LaunchStep::Kind::kOp || step.kind == LaunchStep::Kind::kFill) {
    if (!ops) return Status::Unavailable(StepPath(i) + ": library ops need kforge's worker");
    Status ran = ops->Run(step, pointers, stream);
    if (!ran.ok()) return Status::Unavailable(StepPath(i) + ": " + ran.message());
    return Status::Ok();
  }
  if (step.kind == LaunchStep::Kind::kMemset) {
    cudaError_t error =
        cudaMemsetAsync(pointers.at(step.memset_target), step.memset_byte, step.memset_bytes, stream);
    if (error != cudaSuccess) {
      return Status::Unavailable(StepPath(i) + ": memset failed: " + cudaGetErrorName(error));
    }
    return Status::Ok();
  }
  std::vector<void*> values(step.args.size());
  std::vector<uint64_t> storage(step.args.size());
  bool items = false;
  for (size_t a = 0; a < step.args.size(); ++a) {
    const ResolvedArg& arg = step.args[a];
    if (!arg.item_tensor.empty()) {  // a device scalar: read after the steps before this one
      items = true;
      const char* at = static_cast<const char*>(pointers.at(arg.item_tensor)) + arg.item_offset;
      if (cudaMemcpyAsync(&storage[a], at, arg.size, cudaMemcpyDeviceToHost, stream) != cudaSuccess)
        return Status::Unavailable(StepPath(i) + ".args[" + std::to_string(a) +
                                   "]: reading the element failed");
    } else if (!arg.tensor.empty()) {
      std::memcpy(&storage[a], &pointers.at(arg.tensor), sizeof(void*));
    } else {
      storage[a] = arg.bits;
    }
    values[a] = &storage[a];
  }
  if (items && cudaStreamSynchronize(stream) != cudaSuccess)
    return Status::Unavailable(StepPath(i) +
                               ": the steps before it failed: " + cudaGetErrorName(cudaGetLastError()));
  cudaError_t error = cudaLaunchKernel(reinterpret_cast<const void*>(kernels_[i]), step.grid, step.block,
                                       values.data(), step.shared_bytes, stream);
  if (error != cudaSuccess) {
    return Status::Unavailable(StepPath(i) + ": launch of \"" + step.kernel +
                               "\" failed: " + cudaGetErrorName(error) + ": " + cudaGetErrorString(error));
  }
  return Status::Ok();
}

}  // namespace kforge::cuda
