// DType names and sizes.
#include "kforge/common/dtype.h"

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

}  // namespace kforge::common
