// Library ops with LibTorch, on the caller's stream and buffers.
#include "kforge/reference/library_ops.h"

#include <ATen/ATen.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#include <ATen/core/dispatch/Dispatcher.h>

#include <map>
#include <string>
#include <vector>

#include "reference/torch_util.h"

namespace kforge::reference {
namespace {

#include "reference/library_op_calls.inc"

at::Tensor Borrow(const DeviceTensorRef& t, int device) {
  return at::from_blob(t.data, t.shape,
                       at::TensorOptions().dtype(ToScalarType(t.dtype)).device(at::kCUDA, device));
}

/// A step's JSON attributes as the op calls take them (checked before: see common/library_ops.h).
KfOpAttrs OpAttrsOf(const nlohmann::json& attrs) {
  KfOpAttrs out;
  for (const auto& [key, value] : attrs.items()) {
    if (value.is_boolean()) {
      out.bools[key] = value.get<bool>();
    } else if (value.is_number_integer()) {
      out.ints[key] = {value.get<int64_t>()};
    } else if (value.is_number()) {
      out.numbers[key] = value.get<double>();
    } else if (value.is_array()) {
      out.ints[key] = value.get<std::vector<int64_t>>();
    }
  }
  return out;
}

/// The first line of a LibTorch error, without its C++ stack.
std::string FirstLine(const c10::Error& e) {
  std::string text = e.what_without_backtrace();
  return text.substr(0, std::min(text.find('\n'), size_t{300}));
}

}  // namespace

Status RunLibraryOp(const std::string& name, const std::vector<DeviceTensorRef>& args,
                    const nlohmann::json& attrs, const DeviceTensorRef& out, int device,
                    cudaStream_t stream) {
  try {
    c10::cuda::CUDAStreamGuard guard(c10::cuda::getStreamFromExternal(stream, device));
    std::vector<at::Tensor> tensors;
    for (const DeviceTensorRef& arg : args) tensors.push_back(Borrow(arg, device));
    at::Tensor target = Borrow(out, device);
    KfRunOp(name, tensors, OpAttrsOf(attrs), target);
    return Status::Ok();
  } catch (const c10::Error& e) {
    std::string message = FirstLine(e);
    return Status::InvalidArgument(message.rfind(name, 0) == 0 ? message : name + ": " + message);
  } catch (const std::exception& e) {
    return Status::InvalidArgument(name + ": " + std::string(e.what()).substr(0, 300));
  }
}

Status FillTensor(const DeviceTensorRef& tensor, double value, int device, cudaStream_t stream) {
  try {
    c10::cuda::CUDAStreamGuard guard(c10::cuda::getStreamFromExternal(stream, device));
    Borrow(tensor, device).fill_(value);
    return Status::Ok();
  } catch (const c10::Error& e) {
    return Status::InvalidArgument("fill: " + FirstLine(e));
  }
}

}  // namespace kforge::reference
