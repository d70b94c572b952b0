// Tensor handles over ATen tensors.
#include <c10/util/Exception.h>
#include <cstdint>

#include <cstring>

#include "reference/torch_util.h"

namespace kforge::reference {

using common::DType;

at::ScalarType ToScalarType(DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
      return at::kFloat;
    case DType::kFloat16:
      return at::kHalf;
    case DType::kBFloat16:
      return at::kBFloat16;
    case DType::kFloat64:
      return at::kDouble;
    case DType::kInt64:
      return at::kLong;
    case DType::kInt32:
      return at::kInt;
    case DType::kInt8:
      return at::kChar;
    case DType::kUInt8:
      return at::kByte;
    case DType::kBool:
      return at::kBool;
  }
  return at::kFloat;
}

std::optional<DType> FromScalarType(at::ScalarType type) {
  for (DType d : {DType::kFloat32, DType::kFloat16, DType::kBFloat16, DType::kFloat64, DType::kInt64,
                  DType::kInt32, DType::kInt8, DType::kUInt8, DType::kBool})
    if (ToScalarType(d) == type) return d;
  return std::nullopt;
}

at::Device ToTorchDevice(Device device) {
  if (device.is_cuda()) return at::Device(at::kCUDA, static_cast<c10::DeviceIndex>(device.index));
  return at::Device(at::kCPU);
}

Device FromTorchDevice(const at::Device& device) {
  if (device.is_cuda()) return Device::Cuda(device.has_index() ? device.index() : 0);
  return Device::Cpu();
}

Tensor Wrap(at::Tensor t) {
  auto impl = std::make_shared<Tensor::Impl>();
  impl->t = t.contiguous();
  return Tensor(std::move(impl));
}

const at::Tensor& Unwrap(const Tensor& tensor) {
  TORCH_CHECK(tensor.defined(), "kforge: use of an undefined tensor handle");
  return tensor.impl()->t;
}

std::string Device::ToString() const { return is_cuda() ? "cuda:" + std::to_string(index) : "cpu"; }

StatusOr<Device> Device::Parse(std::string_view text) {
  if (text == "cpu") return Device::Cpu();
  if (text == "cuda") return Device::Cuda(0);
  if (text.rfind("cuda:", 0) == 0 && text.size() > 5 && text.size() < 9) {
    int index = 0;
    for (char c : text.substr(5)) {
      if (c < '0' || c > '9') return Status::InvalidArgument("bad device \"" + std::string(text) + "\"");
      index = index * 10 + (c - '0');
    }
    return Device::Cuda(index);
  }
  return Status::InvalidArgument("bad device \"" + std::string(text) + "\" (expected cpu, cuda or cuda:N)");
}

int64_t TensorView::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

DType Tensor::dtype() const { return *FromScalarType(Unwrap(*this).scalar_type()); }

std::vector<int64_t> Tensor::shape() const {
  auto sizes = Unwrap(*this).sizes();
  return {sizes.begin(), sizes.end()};
}

Device Tensor::device() const { return FromTorchDevice(Unwrap(*this).device()); }
int64_t Tensor::numel() const { return Unwrap(*this).numel(); }
size_t Tensor::bytes() const { return Unwrap(*this).nbytes(); }

TensorView Tensor::view() const {
  const at::Tensor& t = Unwrap(*this);
  return {t.data_ptr(), dtype(), shape(), device(), t.nbytes()};
}

Tensor Tensor::Clone() const { return Wrap(Unwrap(*this).clone()); }

Tensor Tensor::Borrow(const TensorView& view) {
  auto options = at::TensorOptions().dtype(ToScalarType(view.dtype)).device(ToTorchDevice(view.device));
  return Wrap(at::from_blob(view.data, view.shape, options));
}

std::string Tensor::HostBytes() const {
  at::Tensor host = Unwrap(*this).to(at::kCPU).contiguous();
  return std::string(static_cast<const char*>(host.data_ptr()), host.nbytes());
}

StatusOr<Tensor> Tensor::FromBytes(DType dtype, const std::vector<int64_t>& shape, std::string_view bytes,
                                   Device device) {
  uint64_t want = common::DTypeSize(dtype);
  for (int64_t d : shape) {
    if (d < 0) return Status::InvalidArgument("negative dimension");
    want *= static_cast<uint64_t>(d);
  }
  if (want != bytes.size())
    return Status::InvalidArgument(std::to_string(bytes.size()) + " bytes for a tensor of " +
                                   std::to_string(want));
  at::Tensor host = at::empty(shape, at::TensorOptions().dtype(ToScalarType(dtype)));
  if (!bytes.empty()) std::memcpy(host.data_ptr(), bytes.data(), bytes.size());
  return Wrap(device.is_cuda() ? host.to(ToTorchDevice(device)) : host);
}

StatusOr<Tensor> Empty(DType dtype, const std::vector<int64_t>& shape, Device device, Fill fill) {
  for (int64_t d : shape)
    if (d < 0) return Status::InvalidArgument("negative dimension");
  auto options = at::TensorOptions().dtype(ToScalarType(dtype)).device(ToTorchDevice(device));
  at::Tensor t;
  try {
    t = at::empty(shape, options);
  } catch (const c10::OutOfMemoryError& e) {
    std::string msg = e.what();
    return Status::ResourceExhausted("out of memory on " + device.ToString() + ": " + msg.substr(0, msg.find('\n')));
  }
  if (fill.kind == Fill::Kind::kNaN && common::IsFloating(dtype)) {
    t.fill_(std::numeric_limits<double>::quiet_NaN());
  } else {
    // Byte pattern through a uint8 view of the same storage.
    t.view({-1}).view(at::kByte).fill_(static_cast<int64_t>(fill.byte));
  }
  return Wrap(t);
}

StatusOr<Tensor> EmptyLike(const Tensor& like, Fill fill) {
  if (!like.defined()) return Status::InvalidArgument("EmptyLike of an undefined tensor");
  return Empty(like.dtype(), like.shape(), like.device(), fill);
}

bool BitwiseEqual(const Tensor& a, const Tensor& b) {
  if (!a.defined() || !b.defined()) return a.defined() == b.defined();
  if (a.dtype() != b.dtype() || a.shape() != b.shape()) return false;
  const at::Tensor& ta = Unwrap(a);
  at::Tensor tb = Unwrap(b).to(ta.device());
  if (ta.numel() == 0) return true;
  return at::equal(ta.view({-1}).view(at::kByte), tb.view({-1}).view(at::kByte));
}

void TensorSet::Set(const std::string& name, Tensor tensor) {
  for (auto& [n, t] : items_) {
    if (n == name) {
      t = std::move(tensor);
      return;
    }
  }
  items_.emplace_back(name, std::move(tensor));
}

const Tensor* TensorSet::Find(std::string_view name) const {
  for (const auto& [n, t] : items_)
    if (n == name) return &t;
  return nullptr;
}

Tensor* TensorSet::Find(std::string_view name) {
  for (auto& [n, t] : items_)
    if (n == name) return &t;
  return nullptr;
}

}  // namespace kforge::reference
