// Tensor element types shared by task specs, safetensors files and the reference runner.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace kforge::common {

/// The element types a task may use (docs/formats.md, TensorSpec).
enum class DType { kFloat32, kFloat16, kBFloat16, kFloat64, kInt64, kInt32, kInt8, kUInt8, kBool };

/// Task spelling: "float32", "bfloat16", ...
std::string_view DTypeName(DType dtype);
/// Parses the task spelling; nullopt for anything else.
std::optional<DType> ParseDType(std::string_view name);
/// Bytes per element.
size_t DTypeSize(DType dtype);
/// True for float32/float16/bfloat16/float64.
bool IsFloating(DType dtype);
/// The byte a memset writes so that every element of `dtype` equals `value`, when there is one (0 for
/// any dtype, -1 for integers, some float64 patterns...); nullopt when the value needs a fill.
std::optional<uint8_t> MemsetByte(double value, DType dtype);

}  // namespace kforge::common
