// Library ops of plan v2 (common/library_ops.h) run with LibTorch on a caller's stream: the worker's
// way to run `op` and `fill` steps between a candidate's kernels, on the candidate's own buffers.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kforge/common/dtype.h"
#include "kforge/common/status.h"

namespace kforge::reference {

/// A contiguous device tensor someone else owns.
struct DeviceTensorRef {
  void* data = nullptr;
  common::DType dtype = common::DType::kFloat32;
  std::vector<int64_t> shape;
};

/// Computes op `name` of `args` with `attrs` on `stream` of `device` and writes the result into `out`,
/// whose shape must be the result's (its dtype may differ: the result is converted). Errors (an op
/// that refuses its arguments, a shape that does not match) are one line, InvalidArgument.
Status RunLibraryOp(const std::string& name, const std::vector<DeviceTensorRef>& args,
                    const nlohmann::json& attrs, const DeviceTensorRef& out, int device, cudaStream_t stream);

/// Sets every element of `tensor` to `value` (converted to its dtype; inf and NaN included).
Status FillTensor(const DeviceTensorRef& tensor, double value, int device, cudaStream_t stream);

}  // namespace kforge::reference
