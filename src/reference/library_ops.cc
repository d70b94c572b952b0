// Library ops with LibTorch, on the caller's stream and buffers.
#include "kforge/reference/library_ops.h"

#include <ATen/ATen.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#include <functional>
#include <map>

#include "reference/torch_util.h"

namespace kforge::reference {
namespace {

using Args = std::vector<at::Tensor>;
using nlohmann::json;

at::Tensor Borrow(const DeviceTensorRef& t, int device) {
  return at::from_blob(t.data, t.shape,
                       at::TensorOptions().dtype(ToScalarType(t.dtype)).device(at::kCUDA, device));
}

std::vector<int64_t> Ints(const json& attrs, const char* key, std::vector<int64_t> fallback) {
  if (!attrs.contains(key)) return fallback;
  const json& v = attrs[key];
  if (v.is_number_integer()) return {v.get<int64_t>()};
  return v.get<std::vector<int64_t>>();
}
int64_t Int(const json& attrs, const char* key, int64_t fallback) { return attrs.value(key, fallback); }
double Number(const json& attrs, const char* key, double fallback) { return attrs.value(key, fallback); }
bool Bool(const json& attrs, const char* key, bool fallback) { return attrs.value(key, fallback); }
c10::optional<at::Tensor> Optional(const Args& a, size_t i) {
  return i < a.size() ? c10::optional<at::Tensor>(a[i]) : c10::nullopt;
}

/// Reductions: no `dim` reduces everything.
at::Tensor Reduce(const std::string& name, const Args& a, const json& attrs) {
  bool keepdim = Bool(attrs, "keepdim", false);
  std::vector<int64_t> dims = Ints(attrs, "dim", {});
  if (name == "sum") return dims.empty() ? at::sum(a[0]) : at::sum(a[0], dims, keepdim);
  if (name == "mean") return dims.empty() ? at::mean(a[0]) : at::mean(a[0], dims, keepdim);
  if (name == "amax") return at::amax(a[0], dims, keepdim);
  return at::amin(a[0], dims, keepdim);
}

using OpFn = std::function<at::Tensor(const Args&, const json&)>;

const std::map<std::string, OpFn>& Ops() {
  static const std::map<std::string, OpFn> ops = {
      {"matmul", [](const Args& a, const json&) { return at::matmul(a[0], a[1]); }},
      {"mm", [](const Args& a, const json&) { return at::mm(a[0], a[1]); }},
      {"bmm", [](const Args& a, const json&) { return at::bmm(a[0], a[1]); }},
      {"addmm",
       [](const Args& a, const json& j) {
         return at::addmm(a[0], a[1], a[2], Number(j, "beta", 1), Number(j, "alpha", 1));
       }},
      {"linear", [](const Args& a, const json&) { return at::linear(a[0], a[1], Optional(a, 2)); }},
      {"conv1d",
       [](const Args& a, const json& j) {
         return at::conv1d(a[0], a[1], Optional(a, 2), Ints(j, "stride", {1}), Ints(j, "padding", {0}),
                           Ints(j, "dilation", {1}), Int(j, "groups", 1));
       }},
      {"conv2d",
       [](const Args& a, const json& j) {
         return at::conv2d(a[0], a[1], Optional(a, 2), Ints(j, "stride", {1}), Ints(j, "padding", {0}),
                           Ints(j, "dilation", {1}), Int(j, "groups", 1));
       }},
      {"conv3d",
       [](const Args& a, const json& j) {
         return at::conv3d(a[0], a[1], Optional(a, 2), Ints(j, "stride", {1}), Ints(j, "padding", {0}),
                           Ints(j, "dilation", {1}), Int(j, "groups", 1));
       }},
      {"conv_transpose1d",
       [](const Args& a, const json& j) {
         return at::conv_transpose1d(a[0], a[1], Optional(a, 2), Ints(j, "stride", {1}),
                                     Ints(j, "padding", {0}), Ints(j, "output_padding", {0}),
                                     Int(j, "groups", 1), Ints(j, "dilation", {1}));
       }},
      {"conv_transpose2d",
       [](const Args& a, const json& j) {
         return at::conv_transpose2d(a[0], a[1], Optional(a, 2), Ints(j, "stride", {1}),
                                     Ints(j, "padding", {0}), Ints(j, "output_padding", {0}),
                                     Int(j, "groups", 1), Ints(j, "dilation", {1}));
       }},
      {"conv_transpose3d",
       [](const Args& a, const json& j) {
         return at::conv_transpose3d(a[0], a[1], Optional(a, 2), Ints(j, "stride", {1}),
                                     Ints(j, "padding", {0}), Ints(j, "output_padding", {0}),
                                     Int(j, "groups", 1), Ints(j, "dilation", {1}));
       }},
      {"sum", [](const Args& a, const json& j) { return Reduce("sum", a, j); }},
      {"mean", [](const Args& a, const json& j) { return Reduce("mean", a, j); }},
      {"amax", [](const Args& a, const json& j) { return Reduce("amax", a, j); }},
      {"amin", [](const Args& a, const json& j) { return Reduce("amin", a, j); }},
      {"softmax", [](const Args& a, const json& j) { return at::softmax(a[0], Int(j, "dim", -1)); }},
      {"log_softmax", [](const Args& a, const json& j) { return at::log_softmax(a[0], Int(j, "dim", -1)); }},
      {"layer_norm",
       [](const Args& a, const json& j) {
         std::vector<int64_t> shape = Ints(j, "normalized_shape", {a[0].size(-1)});
         return at::layer_norm(a[0], shape, Optional(a, 1), Optional(a, 2), Number(j, "eps", 1e-5));
       }},
      {"group_norm",
       [](const Args& a, const json& j) {
         return at::group_norm(a[0], Int(j, "num_groups", 1), Optional(a, 1), Optional(a, 2),
                               Number(j, "eps", 1e-5));
       }},
      {"batch_norm",
       [](const Args& a, const json& j) {
         return at::batch_norm(a[0], a[3], a[4], a[1], a[2], /*training=*/false, /*momentum=*/0.1,
                               Number(j, "eps", 1e-5), /*cudnn_enabled=*/true);
       }},
      {"add", [](const Args& a, const json& j) { return at::add(a[0], a[1], Number(j, "alpha", 1)); }},
      {"sub", [](const Args& a, const json& j) { return at::sub(a[0], a[1], Number(j, "alpha", 1)); }},
      {"mul", [](const Args& a, const json&) { return at::mul(a[0], a[1]); }},
      {"div", [](const Args& a, const json&) { return at::div(a[0], a[1]); }},
      {"relu", [](const Args& a, const json&) { return at::relu(a[0]); }},
      {"gelu", [](const Args& a, const json&) { return at::gelu(a[0]); }},
      {"sigmoid", [](const Args& a, const json&) { return at::sigmoid(a[0]); }},
      {"tanh", [](const Args& a, const json&) { return at::tanh(a[0]); }},
      {"exp", [](const Args& a, const json&) { return at::exp(a[0]); }},
      {"cat", [](const Args& a, const json& j) { return at::cat(a, Int(j, "dim", 0)); }},
      {"stack", [](const Args& a, const json& j) { return at::stack(a, Int(j, "dim", 0)); }},
  };
  return ops;
}

std::string Shape(at::IntArrayRef sizes) {
  std::string text = "[";
  for (size_t i = 0; i < sizes.size(); ++i) text += (i ? ", " : "") + std::to_string(sizes[i]);
  return text + "]";
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
    Args tensors;
    for (const DeviceTensorRef& arg : args) tensors.push_back(Borrow(arg, device));
    at::Tensor target = Borrow(out, device);
    if (name == "copy") {
      if (tensors[0].sizes() != target.sizes())
        return Status::InvalidArgument("copy: the source is " + Shape(tensors[0].sizes()) + ", out is " +
                                       Shape(target.sizes()));
      target.copy_(tensors[0], /*non_blocking=*/true);
      return Status::Ok();
    }
    auto op = Ops().find(name);
    if (op == Ops().end())
      return Status::InvalidArgument("op \"" + name + "\" is not a library op kforge runs");
    at::Tensor result = op->second(tensors, attrs);
    if (result.sizes() != target.sizes())
      return Status::InvalidArgument(name + " gives " + Shape(result.sizes()) + ", out is " +
                                     Shape(target.sizes()));
    target.copy_(result, /*non_blocking=*/true);
    return Status::Ok();
  } catch (const c10::Error& e) {
    return Status::InvalidArgument(name + ": " + FirstLine(e));
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
