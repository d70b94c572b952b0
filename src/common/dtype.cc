// DType names and sizes.
#include "kforge/common/dtype.h"

#include <cmath>
#include <cstring>
#include <limits>

namespace kforge::common {
namespace {

struct DTypeInfo {
  DType dtype;
  std::string_view name;
  size_t size;
};

constexpr DTypeInfo kDTypes[] = {
    {DType::kFloat32, "float32", 4}, {DType::kFloat16, "float16", 2}, {DType::kBFloat16, "bfloat16", 2},
    {DType::kFloat64, "float64", 8}, {DType::kInt64, "int64", 8},     {DType::kInt32, "int32", 4},
    {DType::kInt8, "int8", 1},       {DType::kUInt8, "uint8", 1},     {DType::kBool, "bool", 1},
};

}  // namespace

std::string_view DTypeName(DType dtype) {
  for (const DTypeInfo& info : kDTypes)
    if (info.dtype == dtype) return info.name;
  return "?";
}

std::optional<DType> ParseDType(std::string_view name) {
  for (const DTypeInfo& info : kDTypes)
    if (info.name == name) return info.dtype;
  return std::nullopt;
}

size_t DTypeSize(DType dtype) {
  for (const DTypeInfo& info : kDTypes)
    if (info.dtype == dtype) return info.size;
  return 0;
}

bool IsFloating(DType dtype) {
  return dtype == DType::kFloat32 || dtype == DType::kFloat16 || dtype == DType::kBFloat16 ||
         dtype == DType::kFloat64;
}

std::optional<uint8_t> MemsetByte(double value, DType dtype) {
  uint8_t bytes[8] = {};
  size_t n = DTypeSize(dtype);
  switch (dtype) {
    case DType::kFloat32: {
      if (std::fabs(value) > std::numeric_limits<float>::max()) return std::nullopt;
      float f = static_cast<float>(value);
      std::memcpy(bytes, &f, 4);
      break;
    }
    case DType::kFloat64:
      std::memcpy(bytes, &value, 8);
      break;
    case DType::kFloat16:
    case DType::kBFloat16:
      if (value != 0) return std::nullopt;  // only zero is exact in both encodings
      break;
    default: {
      // Integral and in int64's range, or the cast below would be undefined.
      if (value != std::floor(value) || !(value >= -9223372036854775808.0 && value < 9223372036854775808.0))
        return std::nullopt;
      int64_t i = static_cast<int64_t>(value);
      std::memcpy(bytes, &i, 8);
      if (n < 8 && i != (i << (64 - 8 * n)) >> (64 - 8 * n)) return std::nullopt;
      break;
    }
  }
  for (size_t i = 1; i < n; ++i) {
    if (bytes[i] != bytes[0]) return std::nullopt;
  }
  return bytes[0];
}

}  // namespace kforge::common
