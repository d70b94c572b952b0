// safetensors parsing and writing, validated so that a corrupt file is an error, not a crash.
#include "kforge/common/safetensors.h"

#include "kforge/common/files.h"

#include <cstdint>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>

namespace kforge::common {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// A header larger than this is not a tensor file (the format's own limit is 100 MB).
constexpr uint64_t kMaxHeaderBytes = 100ull << 20;

constexpr std::pair<DType, std::string_view> kNames[] = {
    {DType::kFloat32, "F32"}, {DType::kFloat16, "F16"}, {DType::kBFloat16, "BF16"},
    {DType::kFloat64, "F64"}, {DType::kInt64, "I64"},   {DType::kInt32, "I32"},
    {DType::kInt8, "I8"},     {DType::kUInt8, "U8"},    {DType::kBool, "BOOL"},
};

Status Corrupt(const std::string& msg) { return Status::ParseError("safetensors: " + msg); }

// numel * element size, or nullopt on overflow.
std::optional<uint64_t> ByteCount(const std::vector<int64_t>& shape, DType dtype) {
  uint64_t n = DTypeSize(dtype);
  for (int64_t d : shape) {
    if (d < 0) return std::nullopt;
    if (d != 0 && n > std::numeric_limits<uint64_t>::max() / static_cast<uint64_t>(d)) return std::nullopt;
    n *= static_cast<uint64_t>(d);
  }
  return n;
}

struct Entry {
  std::string name;
  uint64_t begin, end;
};

}  // namespace

int64_t SafeTensor::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::string_view SafetensorsDTypeName(DType dtype) {
  for (const auto& [d, name] : kNames)
    if (d == dtype) return name;
  return "?";
}

std::optional<DType> ParseSafetensorsDType(std::string_view name) {
  for (const auto& [d, n] : kNames)
    if (n == name) return d;
  return std::nullopt;
}

StatusOr<std::map<std::string, SafeTensor>> ParseSafetensors(std::string_view bytes,
                                                             std::map<std::string, std::string>* metadata) {
  if (bytes.size() < 8) return Corrupt("file shorter than its 8-byte header length");
  uint64_t header_len = 0;
  for (int i = 7; i >= 0; --i) header_len = (header_len << 8) | static_cast<unsigned char>(bytes[i]);
  if (header_len > kMaxHeaderBytes || header_len > bytes.size() - 8)
    return Corrupt("header length " + std::to_string(header_len) + " exceeds the file (" +
                   std::to_string(bytes.size()) + " bytes)");
  std::string_view header_text = bytes.substr(8, header_len);
  std::string_view data = bytes.substr(8 + header_len);
  json header;
  try {
    header = json::parse(header_text);
  } catch (const json::parse_error& e) {
    return Corrupt(std::string("header is not JSON: ") + e.what());
  }
  if (!header.is_object()) return Corrupt("header is not a JSON object");

  std::map<std::string, SafeTensor> tensors;
  std::vector<Entry> entries;
  for (auto it = header.begin(); it != header.end(); ++it) {
    const std::string& name = it.key();
    const json& v = it.value();
    if (name == "__metadata__") {
      if (!v.is_object()) return Corrupt("__metadata__ is not an object");
      for (auto m = v.begin(); m != v.end(); ++m) {
        if (!m.value().is_string()) return Corrupt("__metadata__." + m.key() + " is not a string");
        if (metadata) (*metadata)[m.key()] = m.value().get<std::string>();
      }
      continue;
    }
    std::string where = "tensor \"" + name + "\": ";
    if (!v.is_object() || !v.contains("dtype") || !v.contains("shape") || !v.contains("data_offsets") ||
        v.size() != 3)
      return Corrupt(where + "expected {dtype, shape, data_offsets}");
    if (!v["dtype"].is_string()) return Corrupt(where + "dtype is not a string");
    std::optional<DType> dtype = ParseSafetensorsDType(v["dtype"].get<std::string>());
    if (!dtype) return Corrupt(where + "unsupported dtype \"" + v["dtype"].get<std::string>() + "\"");
    SafeTensor t;
    t.dtype = *dtype;
    if (!v["shape"].is_array()) return Corrupt(where + "shape is not an array");
    for (const json& d : v["shape"]) {
      if (!d.is_number_unsigned() || d.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX))
        return Corrupt(where + "shape entries are non-negative integers");
      t.shape.push_back(d.get<int64_t>());
    }
    const json& off = v["data_offsets"];
    if (!off.is_array() || off.size() != 2 || !off[0].is_number_unsigned() || !off[1].is_number_unsigned())
      return Corrupt(where + "data_offsets is not [begin, end]");
    uint64_t begin = off[0].get<uint64_t>(), end = off[1].get<uint64_t>();
    if (begin > end || end > data.size())
      return Corrupt(where + "data_offsets [" + std::to_string(begin) + ", " + std::to_string(end) +
                     "] outside the " + std::to_string(data.size()) + "-byte data section");
    std::optional<uint64_t> want = ByteCount(t.shape, t.dtype);
    if (!want || *want != end - begin)
      return Corrupt(where + "holds " + std::to_string(end - begin) + " bytes, its shape and dtype need " +
                     (want ? std::to_string(*want) : std::string("more than 2^64")));
    entries.push_back({name, begin, end});
    tensors.emplace(name, std::move(t));
  }
  // The data section is covered exactly: no overlaps, no holes.
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  uint64_t pos = 0;
  for (const Entry& e : entries) {
    if (e.begin != pos)
      return Corrupt("tensor \"" + e.name + "\": data starts at " + std::to_string(e.begin) + ", expected " +
                     std::to_string(pos) + " (overlap or hole)");
    pos = e.end;
  }
  if (pos != data.size())
    return Corrupt(std::to_string(data.size() - pos) + " trailing bytes after the last tensor");
  for (const Entry& e : entries) tensors[e.name].data.assign(data.substr(e.begin, e.end - e.begin));
  return tensors;
}

StatusOr<std::map<std::string, SafeTensor>> ReadSafetensors(const fs::path& path,
                                                            std::map<std::string, std::string>* metadata) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound(path.string() + ": cannot open");
  std::error_code ec;
  uint64_t size = fs::file_size(path, ec);
  if (ec) return Status::IoError(path.string() + ": " + ec.message());
  std::string bytes(size, '\0');
  if (!in.read(bytes.data(), static_cast<std::streamsize>(size)))
    return Status::IoError(path.string() + ": short read");
  auto parsed = ParseSafetensors(bytes, metadata);
  if (!parsed.ok()) return parsed.status().WithContext(path.string());
  return parsed;
}

StatusOr<std::string> SerializeSafetensors(const std::map<std::string, SafeTensor>& tensors,
                                           const std::map<std::string, std::string>& metadata) {
  json header = json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  uint64_t offset = 0;
  for (const auto& [name, t] : tensors) {
    if (name == "__metadata__")
      return Status::InvalidArgument("safetensors: reserved tensor name __metadata__");
    std::optional<uint64_t> want = ByteCount(t.shape, t.dtype);
    if (!want || *want != t.data.size())
      return Status::InvalidArgument("safetensors: tensor \"" + name + "\" has " +
                                     std::to_string(t.data.size()) + " bytes, its shape and dtype need " +
                                     (want ? std::to_string(*want) : "more"));
    header[name] = {{"dtype", SafetensorsDTypeName(t.dtype)},
                    {"shape", t.shape},
                    {"data_offsets", {offset, offset + t.data.size()}}};
    offset += t.data.size();
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');
  std::string out;
  out.reserve(8 + text.size() + offset);
  uint64_t len = text.size();
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((len >> (8 * i)) & 0xff));
  out += text;
  for (const auto& [name, t] : tensors) out += t.data;
  return out;
}

Status WriteSafetensors(const fs::path& path, const std::map<std::string, SafeTensor>& tensors,
                        const std::map<std::string, std::string>& metadata) {
  KFORGE_ASSIGN_OR_RETURN(std::string bytes, SerializeSafetensors(tensors, metadata));
  return WriteFileAtomic(path, bytes);
}

}  // namespace kforge::common
