// Dtype names and sizes.
#include "kforge/common/dtype.h"

#include <array>

namespace kforge::common {
namespace {

struct DtypeRow {
  Dtype dtype;
  std::string_view name;
  size_t size;
};
constexpr std::array<DtypeRow, 9> kDtypes = {{{Dtype::kFloat32, "float32", 4},
                                              {Dtype::kFloat16, "float16", 2},
                                              {Dtype::kBFloat16, "bfloat16", 2},
                                              {Dtype::kFloat64, "float64", 8},
                                              {Dtype::kInt64, "int64", 8},
                                              {Dtype::kInt32, "int32", 4},
                                              {Dtype::kInt8, "int8", 1},
                                              {Dtype::kUInt8, "uint8", 1},
                                              {Dtype::kBool, "bool", 1}}};

}  // namespace

std::string_view DtypeName(Dtype dtype) { return kDtypes[static_cast<size_t>(dtype)].name; }

std::optional<Dtype> ParseDtype(std::string_view name) {
  for (const DtypeRow& row : kDtypes) {
    if (row.name == name) return row.dtype;
  }
  return std::nullopt;
}

size_t DtypeSize(Dtype dtype) { return kDtypes[static_cast<size_t>(dtype)].size; }

bool IsFloating(Dtype dtype) {
  return dtype == Dtype::kFloat32 || dtype == Dtype::kFloat16 || dtype == Dtype::kBFloat16 || dtype == Dtype::kFloat64;
}

}  // namespace kforge::common
