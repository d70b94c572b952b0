// Private bridge between kforge tensor handles and ATen tensors (reference module only).
#pragma once

#include <ATen/ATen.h>

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

}  // namespace kforge::reference
