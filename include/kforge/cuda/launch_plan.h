// Launch plans: a Solution's steps resolved against a task's tensors and a device's limits
// (ResolvePlan, no GPU needed), then bound to loaded kernels and run on a stream (BoundPlan).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kforge/common/dtype.h"
#include "kforge/common/library_ops.h"
#include "kforge/common/solution.h"
#include "kforge/common/status.h"
#include "kforge/cuda/device.h"
#include "kforge/cuda/kernel_library.h"

namespace kforge::cuda {

/// A tensor the candidate can name.
struct PlanTensor {
  common::DType dtype = common::DType::kFloat32;
  std::vector<int64_t> shape;
  bool writable = false;  ///< Outputs and scratch; inputs and params are read-only.
  size_t bytes() const;
};

/// What names mean in a plan: shape symbols and tensors.
struct PlanEnv {
  std::map<std::string, int64_t> symbols;
  std::map<std::string, PlanTensor> tensors;
};

/// Device limits plus kforge's own caps.
struct LaunchLimits {
  int max_threads_per_block = 1024;
  int max_block_dims[3] = {1024, 1024, 64};
  int max_grid_dims[3] = {2147483647, 65535, 65535};
  size_t max_shared_bytes = 227 * 1024;        ///< Dynamic shared memory per block.
  size_t max_scratch_bytes = size_t{4} << 30;  ///< All scratch buffers together.
  common::OpPolicy op_policy = common::OpPolicy::kLibrary;  ///< Which op steps are allowed (--allow-ops).
};

/// Limits of `device` (kforge caps unchanged).
LaunchLimits LimitsFor(const DeviceInfo& device);

/// Evaluates the scratch shapes and adds the buffers to `env` as writable tensors.
Status AddScratch(const common::Solution& solution, const LaunchLimits& limits, PlanEnv& env);

struct ResolvedArg {
  std::string tensor;  ///< Tensor name, or empty for a scalar.
  /// kItem: the tensor one element is read from when the step runs, at `item_offset` bytes; the
  /// value (`size` bytes, the tensor's element) is what the kernel gets.
  std::string item_tensor;
  size_t item_offset = 0;
  uint64_t bits = 0;  ///< Scalar value, little-endian in the low `size` bytes.
  size_t size = 8;    ///< Bytes the kernel parameter must have.
};

/// A tensor as a library op sees it: its name (pointers are looked up by it), dtype and shape.
struct OpOperand {
  std::string tensor;
  common::DType dtype = common::DType::kFloat32;
  std::vector<int64_t> shape;
};

/// A view step: `name` points `byte_offset` bytes into `base`.
struct ResolvedView {
  std::string name;
  std::string base;
  size_t byte_offset = 0;
};

struct ResolvedStep {
  common::LaunchStep::Kind kind = common::LaunchStep::Kind::kKernel;
  std::string kernel;
  dim3 grid, block;
  size_t shared_bytes = 0;
  std::vector<ResolvedArg> args;
  std::string memset_target;
  uint8_t memset_byte = 0;
  size_t memset_bytes = 0;
  std::string op;                  ///< kOp
  std::vector<OpOperand> op_args;  ///< kOp
  nlohmann::json op_attrs;         ///< kOp
  OpOperand target;                ///< kOp: the output; kFill: the tensor filled
  double fill_value = 0;           ///< kFill
  ResolvedView view;               ///< kView
};

struct ResolvedPlan {
  std::vector<ResolvedStep> steps;
  /// Whether any step is a library op or a fill (they need an OpRunner).
  bool has_library_steps = false;
};

/// Runs the op and fill steps of a plan. kforge's worker gives one backed by LibTorch; the launch
/// plan itself only knows kernels and memsets.
class OpRunner {
 public:
  virtual ~OpRunner() = default;
  /// Enqueues `step` on `stream`; `pointers` maps every tensor name (views included) to its address.
  virtual Status Run(const ResolvedStep& step, const std::map<std::string, void*>& pointers,
                     cudaStream_t stream) const = 0;
};

/// Checks every name, expression and limit. Errors name the step: `launches[1].grid[0]: ...`.
StatusOr<ResolvedPlan> ResolvePlan(const common::Solution& solution, const PlanEnv& env,
                                   const LaunchLimits& limits);

/// A resolved plan whose kernels are loaded and whose arguments match their parameter lists.
class BoundPlan {
 public:
  static StatusOr<BoundPlan> Bind(const ResolvedPlan& plan, const KernelLibrary& library);
  /// Enqueues every step on `stream`; `pointers` maps tensor names to device addresses (views are
  /// added here). `ops` runs op and fill steps; a plan with such steps and no runner fails.
  /// A failed launch (bad configuration, too many resources) is returned; the stream is not synchronised.
  Status Run(cudaStream_t stream, const std::map<std::string, void*>& pointers,
             const OpRunner* ops = nullptr) const;
  /// Runs steps [first, last) only (to time them one by one); same contract as Run.
  Status RunSteps(size_t first, size_t last, cudaStream_t stream, std::map<std::string, void*>& pointers,
                  const OpRunner* ops) const;
  size_t step_count() const { return plan_.steps.size(); }
  const ResolvedPlan& plan() const { return plan_; }

 private:
  Status RunStep(size_t i, cudaStream_t stream, const std::map<std::string, void*>& pointers,
                 const OpRunner* ops) const;

  ResolvedPlan plan_;
  std::vector<cudaKernel_t> kernels_;  ///< Per step; null for steps that are not kernels.
  bool has_views_ = false;
};

}  // namespace kforge::cuda
