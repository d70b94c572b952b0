// Element types of task tensors and scratch buffers, by their PyTorch names.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

namespace kforge::common {

enum class Dtype { kFloat32, kFloat16, kBFloat16, kFloat64, kInt64, kInt32, kInt8, kUInt8, kBool };

/// "float32", "bfloat16", ... as in task.json.
std::string_view DtypeName(Dtype dtype);
std::optional<Dtype> ParseDtype(std::string_view name);
size_t DtypeSize(Dtype dtype);
bool IsFloating(Dtype dtype);

}  // namespace kforge::common
