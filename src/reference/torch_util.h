// Private bridge between kforge tensor handles and ATen tensors (reference module only).
#pragma once

#include <ATen/ATen.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <functional>

#include "kforge/common/dtype.h"
#include "kforge/reference/tensor.h"

namespace kforge::reference {

struct Tensor::Impl {
  at::Tensor t;  // always contiguous
};

at::ScalarType ToScalarType(common::DType dtype);
/// nullopt for scalar types tasks do not use.
std::optional<common::DType> FromScalarType(at::ScalarType type);
at::Device ToTorchDevice(Device device);
Device FromTorchDevice(const at::Device& device);

/// Wraps (a contiguous copy of) `t`.
Tensor Wrap(at::Tensor t);
/// The ATen tensor behind a defined handle.
const at::Tensor& Unwrap(const Tensor& tensor);

/// Runs `launch` (a kernel that leaves the digest partials of `t`'s bytes in the workspace it is given,
/// kernels::DigestBlocksFor of them) on `t`'s device and current stream, and returns the digest.
/// `what` names the kernel in errors.
StatusOr<uint64_t> DigestByKernel(
    const at::Tensor& t, const char* what,
    const std::function<cudaError_t(unsigned long long*, cudaStream_t)>& launch);

}  // namespace kforge::reference
