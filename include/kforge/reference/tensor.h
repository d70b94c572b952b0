// Device tensors without torch types: an owning handle (Tensor), a plain view of its buffer
// (TensorView) for candidate kernels, and a name-ordered set of them (TensorSet).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kforge/common/dtype.h"
#include "kforge/common/status.h"

namespace kforge::reference {

struct Device {
  enum class Kind { kCpu, kCuda };
  Kind kind = Kind::kCpu;
  int index = 0;

  static Device Cpu() { return {}; }
  static Device Cuda(int index = 0) { return {Kind::kCuda, index}; }
  bool is_cuda() const { return kind == Kind::kCuda; }
  /// "cpu" or "cuda:0".
  std::string ToString() const;
  /// The device part of an artifact key: "cpu" or "cuda".
  std::string_view KindName() const { return is_cuda() ? "cuda" : "cpu"; }
  /// Parses "cpu", "cuda", "cuda:N".
  static StatusOr<Device> Parse(std::string_view text);
  bool operator==(const Device&) const = default;
};

/// A contiguous buffer as a kernel sees it. Valid while the owning Tensor lives.
struct TensorView {
  void* data = nullptr;
  common::DType dtype = common::DType::kFloat32;
  std::vector<int64_t> shape;
  Device device;
  size_t bytes = 0;

  int64_t numel() const;
};

/// Owns one contiguous device (or host) tensor. Copies share the buffer; Clone() copies it.
class Tensor {
 public:
  struct Impl;  // defined by the reference module only

  Tensor() = default;
  explicit Tensor(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}

  bool defined() const { return impl_ != nullptr; }
  common::DType dtype() const;
  std::vector<int64_t> shape() const;
  Device device() const;
  int64_t numel() const;
  size_t bytes() const;
  /// Pointer, dtype, shape and size for handing to a kernel.
  TensorView view() const;
  /// A deep copy on the same device.
  Tensor Clone() const;
  /// The bytes, copied to the host (synchronises).
  std::string HostBytes() const;
  /// A tensor over memory owned elsewhere (a candidate's guarded buffer): no copy, valid while
  /// that memory lives.
  static Tensor Borrow(const TensorView& view);
  /// A tensor on `device` holding `bytes` (numel * element size, little-endian).
  static StatusOr<Tensor> FromBytes(common::DType dtype, const std::vector<int64_t>& shape,
                                    std::string_view bytes, Device device);

  const Impl* impl() const { return impl_.get(); }

 private:
  std::shared_ptr<Impl> impl_;
};

/// What fresh buffers are filled with before a candidate writes them.
struct Fill {
  enum class Kind { kNaN, kByte };
  /// kNaN: quiet NaN in floating dtypes, `byte` repeated in the others. kByte: `byte` everywhere.
  Kind kind = Kind::kNaN;
  uint8_t byte = 0xff;
};

/// A buffer of `dtype` and `shape` on `device`, filled per `fill`.
StatusOr<Tensor> Empty(common::DType dtype, const std::vector<int64_t>& shape, Device device, Fill fill = {});
/// Same shape, dtype and device as `like`.
StatusOr<Tensor> EmptyLike(const Tensor& like, Fill fill = {});
/// True when dtype, shape and every byte agree (NaN payloads included).
bool BitwiseEqual(const Tensor& a, const Tensor& b);

/// Tensors by name, in insertion order (a task's inputs, params or outputs order).
class TensorSet {
 public:
  /// Adds or replaces `name`.
  void Set(const std::string& name, Tensor tensor);
  const Tensor* Find(std::string_view name) const;
  Tensor* Find(std::string_view name);
  const std::vector<std::pair<std::string, Tensor>>& items() const { return items_; }
  size_t size() const { return items_.size(); }
  bool empty() const { return items_.empty(); }

 private:
  std::vector<std::pair<std::string, Tensor>> items_;
};

}  // namespace kforge::reference
