// FLOP peaks per architecture and the peak cache file.
#include "bench/peak_model.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "kforge/common/files.h"
#include "kforge/common/hash.h"

namespace kforge::bench {
namespace {

constexpr const char* kCacheSchema = "kforge.peak_cache/1";

}  // namespace

std::filesystem::path DefaultCacheDir() { return common::CacheRoot(); }

double PeakTflops(const DevicePeak& peak, common::DType dtype) {
  switch (dtype) {
    case common::DType::kFloat32:
      return std::max(peak.fp32_tflops, peak.tf32_tflops);
    case common::DType::kFloat16:
      return peak.fp16_tflops;
    case common::DType::kBFloat16:
      return peak.bf16_tflops;
    default:
      return 0;
  }
}

namespace internal {

SmFlopsPerClock FlopsPerClock(int cc_major, int cc_minor) {
  if (cc_major == 9 && cc_minor == 0) return {256, 4096, 4096, 2048};
  if (cc_major == 8 && cc_minor == 0) return {128, 2048, 2048, 1024};
  return {};
}

void SetFlopPeaks(DevicePeak& peak) {
  const SmFlopsPerClock per_clock = FlopsPerClock(peak.cc_major, peak.cc_minor);
  const double clocks_per_second = peak.sm_count * peak.sm_clock_mhz * 1e6;
  peak.fp32_tflops = clocks_per_second * per_clock.fp32 / 1e12;
  peak.fp16_tflops = clocks_per_second * per_clock.fp16 / 1e12;
  peak.bf16_tflops = clocks_per_second * per_clock.bf16 / 1e12;
  peak.tf32_tflops = clocks_per_second * per_clock.tf32 / 1e12;
}

std::string FormatUuid(const unsigned char (&bytes)[16]) {
  std::string out = "GPU-";
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out += '-';
    char hex[3];
    std::snprintf(hex, sizeof(hex), "%02x", bytes[i]);
    out += hex;
  }
  return out;
}

std::filesystem::path PeakCachePath(const std::filesystem::path& dir, const DevicePeak& peak) {
  const std::string key = peak.device + "\n" + peak.uuid + "\n" + std::to_string(peak.driver_version);
  return dir / ("peak-" + common::Sha256Hex(key).substr(0, 16) + ".json");
}

std::optional<CachedBandwidth> ReadPeakCache(const std::filesystem::path& path, const DevicePeak& peak) {
  const StatusOr<std::string> text = common::ReadFile(path);
  if (!text.ok()) return std::nullopt;
  const nlohmann::json j = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return std::nullopt;
  const auto string_is = [&](const char* key, const std::string& want) {
    return j.contains(key) && j[key].is_string() && j[key].get<std::string>() == want;
  };
  if (!string_is("schema", kCacheSchema) || !string_is("device", peak.device) ||
      !string_is("uuid", peak.uuid)) {
    return std::nullopt;
  }
  if (!j.contains("driver_version") || !j["driver_version"].is_number_integer() ||
      j["driver_version"].get<int64_t>() != peak.driver_version) {
    return std::nullopt;
  }
  if (!j.contains("dram_gbps") || !j["dram_gbps"].is_number() || !j.contains("copy_bytes") ||
      !j["copy_bytes"].is_number_unsigned()) {
    return std::nullopt;
  }
  CachedBandwidth cached{j["dram_gbps"].get<double>(), j["copy_bytes"].get<uint64_t>()};
  if (!(cached.dram_gbps > 0)) return std::nullopt;
  return cached;
}

bool WritePeakCache(const std::filesystem::path& path, const DevicePeak& peak) {
  const nlohmann::json j = {{"schema", kCacheSchema},      {"device", peak.device},
                            {"uuid", peak.uuid},           {"driver_version", peak.driver_version},
                            {"dram_gbps", peak.dram_gbps}, {"copy_bytes", peak.copy_bytes}};
  std::error_code ec;
  std::filesystem::create_directories(path.parent_path(), ec);
  return !ec && common::WriteFileAtomic(path, j.dump(2) + "\n").ok();
}

}  // namespace internal
}  // namespace kforge::bench
