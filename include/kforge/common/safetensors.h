// A small reader and writer of the safetensors format (8-byte little-endian header length, a JSON
// header {name: {dtype, shape, data_offsets}}, then raw little-endian bytes). No torch needed.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kforge/common/dtype.h"
#include "kforge/common/status.h"

namespace kforge::common {

/// One tensor of a safetensors file; `data` holds numel * DTypeSize(dtype) bytes.
struct SafeTensor {
  DType dtype = DType::kFloat32;
  std::vector<int64_t> shape;
  std::string data;

  int64_t numel() const;
};

/// safetensors dtype names ("F32", "BF16", "I64", "BOOL", ...) for the dtypes tasks use.
std::string_view SafetensorsDTypeName(DType dtype);
std::optional<DType> ParseSafetensorsDType(std::string_view name);

/// Parses a whole file image. Validates the header (size, JSON, dtypes, shapes, offsets in
/// bounds, contiguous and non-overlapping, byte counts matching shapes); never allocates more
/// than the input's size. `__metadata__` is returned in `metadata` when given.
StatusOr<std::map<std::string, SafeTensor>> ParseSafetensors(
    std::string_view bytes, std::map<std::string, std::string>* metadata = nullptr);

/// Reads and parses `path`; errors start with the path.
StatusOr<std::map<std::string, SafeTensor>> ReadSafetensors(
    const std::filesystem::path& path, std::map<std::string, std::string>* metadata = nullptr);

/// Serialises tensors (sorted by name, as the map is), header padded to 8 bytes.
StatusOr<std::string> SerializeSafetensors(const std::map<std::string, SafeTensor>& tensors,
                                           const std::map<std::string, std::string>& metadata = {});

/// Writes atomically (temporary file, then rename).
Status WriteSafetensors(const std::filesystem::path& path, const std::map<std::string, SafeTensor>& tensors,
                        const std::map<std::string, std::string>& metadata = {});

}  // namespace kforge::common
