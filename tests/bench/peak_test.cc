// FLOP peaks per architecture, roofline arithmetic and the peak cache file, without a GPU.
#include "bench/peak_model.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <fstream>
#include <random>

#include "kforge/bench/peak.h"

namespace kforge::bench {
namespace {

namespace fs = std::filesystem;
using common::DType;

DevicePeak H200Like() {
  DevicePeak p;
  p.device = "NVIDIA H200";
  p.uuid = "GPU-01234567-89ab-cdef-0123-456789abcdef";
  p.driver_version = 13000;
  p.cc_major = 9;
  p.cc_minor = 0;
  p.sm_count = 132;
  p.sm_clock_mhz = 1980;
  p.dram_gbps = 4000;
  p.copy_bytes = 1 << 30;
  internal::SetFlopPeaks(p);
  return p;
}

TEST(BenchPeakTest, FlopsPerClockTable) {
  const internal::SmFlopsPerClock hopper = internal::FlopsPerClock(9, 0);
  EXPECT_EQ(hopper.fp32, 256);
  EXPECT_EQ(hopper.fp16, 4096);
  EXPECT_EQ(hopper.bf16, 4096);
  EXPECT_EQ(hopper.tf32, 2048);
  const internal::SmFlopsPerClock ampere = internal::FlopsPerClock(8, 0);
  EXPECT_EQ(ampere.fp32, 128);
  EXPECT_EQ(ampere.fp16, 2048);
  EXPECT_EQ(ampere.tf32, 1024);
  for (const auto& [major, minor] : {std::pair{8, 6}, {8, 9}, {10, 0}, {7, 5}}) {
    const internal::SmFlopsPerClock unknown = internal::FlopsPerClock(major, minor);
    EXPECT_EQ(unknown.fp32 + unknown.fp16 + unknown.bf16 + unknown.tf32, 0) << major << "." << minor;
  }
}

TEST(BenchPeakTest, FlopPeaksFromClockAndSmCount) {
  const DevicePeak p = H200Like();
  EXPECT_NEAR(p.fp32_tflops, 66.908, 1e-3);  // 132 SMs x 1.98 GHz x 256
  EXPECT_NEAR(p.fp16_tflops, 1070.530, 1e-3);
  EXPECT_NEAR(p.bf16_tflops, 1070.530, 1e-3);
  EXPECT_NEAR(p.tf32_tflops, 535.265, 1e-3);
  EXPECT_DOUBLE_EQ(PeakTflops(p, DType::kFloat32), p.tf32_tflops);
  EXPECT_DOUBLE_EQ(PeakTflops(p, DType::kFloat16), p.fp16_tflops);
  EXPECT_DOUBLE_EQ(PeakTflops(p, DType::kBFloat16), p.bf16_tflops);
  EXPECT_EQ(PeakTflops(p, DType::kFloat64), 0);
  EXPECT_EQ(PeakTflops(p, DType::kInt32), 0);
  DevicePeak unknown = p;
  unknown.cc_major = 12;
  internal::SetFlopPeaks(unknown);
  EXPECT_EQ(unknown.fp32_tflops, 0);
  EXPECT_EQ(PeakTflops(unknown, DType::kFloat32), 0);
}

TEST(BenchRooflineTest, MemoryBound) {
  // 8 MB moved and 2 MFLOP in 4 us on 4000 GB/s: the memory bound is 2 us.
  const Roofline r = ComputeRoofline({2e6, 8e6, DType::kFloat32}, H200Like(), 0.004);
  EXPECT_DOUBLE_EQ(r.sol_ms, 0.002);
  EXPECT_DOUBLE_EQ(r.achieved_gbps, 2000);
  EXPECT_DOUBLE_EQ(r.bandwidth_pct, 50);
  EXPECT_DOUBLE_EQ(r.achieved_tflops, 0.5);
  EXPECT_DOUBLE_EQ(r.flops_pct, 0.5 / H200Like().tf32_tflops * 100);
  EXPECT_DOUBLE_EQ(r.sol_pct, 50);
  EXPECT_DOUBLE_EQ(r.peak_gbps, 4000);
}

TEST(BenchRooflineTest, ComputeBound) {
  // A 4096^3 fp16 GEMM: 2 * 4096^3 FLOP, 3 * 4096^2 * 2 bytes.
  const double flops = 2.0 * 4096 * 4096 * 4096, bytes = 3.0 * 4096 * 4096 * 2;
  const DevicePeak p = H200Like();
  const Roofline r = ComputeRoofline({flops, bytes, DType::kFloat16}, p, 0.2);
  EXPECT_DOUBLE_EQ(r.sol_ms, flops / (p.fp16_tflops * 1e9));
  EXPECT_NEAR(r.achieved_tflops, flops / 0.2e9, 1e-6);
  EXPECT_NEAR(r.flops_pct, r.achieved_tflops / p.fp16_tflops * 100, 1e-9);
  EXPECT_GT(r.sol_ms, bytes / (p.dram_gbps * 1e6));
}

TEST(BenchRooflineTest, UnknownPartsStayZero) {
  DevicePeak p = H200Like();
  const Roofline bytes_only = ComputeRoofline({0, 4e6, DType::kFloat64}, p, 0.002);
  EXPECT_DOUBLE_EQ(bytes_only.sol_ms, 0.001);
  EXPECT_EQ(bytes_only.achieved_tflops, 0);
  EXPECT_EQ(bytes_only.flops_pct, 0);
  const Roofline fp64 = ComputeRoofline({1e6, 0, DType::kFloat64}, p, 0.002);
  EXPECT_EQ(fp64.sol_ms, 0) << "no FP64 peak: no bound";
  EXPECT_EQ(fp64.sol_pct, 0);
  EXPECT_DOUBLE_EQ(fp64.achieved_tflops, 0.5);
  const Roofline untimed = ComputeRoofline({0, 4e6, DType::kFloat32}, p, 0);
  EXPECT_DOUBLE_EQ(untimed.sol_ms, 0.001);
  EXPECT_EQ(untimed.achieved_gbps, 0);
}

TEST(BenchPeakTest, UuidFormat) {
  unsigned char bytes[16];
  for (int i = 0; i < 16; ++i) bytes[i] = static_cast<unsigned char>(i * 17);
  EXPECT_EQ(internal::FormatUuid(bytes), "GPU-00112233-4455-6677-8899-aabbccddeeff");
}

TEST(BenchPeakTest, JsonMarksUnknownPeaks) {
  DevicePeak p = H200Like();
  p.cc_major = 12;
  internal::SetFlopPeaks(p);
  const nlohmann::json j = p.ToJson();
  EXPECT_EQ(j["device"], "NVIDIA H200");
  EXPECT_EQ(j["cc"], "12.0");
  EXPECT_EQ(j["dram_gbps"], 4000.0);
  EXPECT_TRUE(j["fp16_tflops"].is_null());
  EXPECT_EQ(j.size(), 12u);
}

class BenchPeakCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("kforge_peak_test_" + std::to_string(::getpid()) + "_" + std::to_string(std::random_device{}()));
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(BenchPeakCacheTest, RoundTripAndKey) {
  const DevicePeak p = H200Like();
  const fs::path path = internal::PeakCachePath(dir_ / "nested", p);
  EXPECT_EQ(path.parent_path(), dir_ / "nested");
  EXPECT_EQ(path.filename().string().size(), std::string("peak-0123456789abcdef.json").size());
  EXPECT_FALSE(internal::ReadPeakCache(path, p).has_value());
  ASSERT_TRUE(internal::WritePeakCache(path, p));
  const auto cached = internal::ReadPeakCache(path, p);
  ASSERT_TRUE(cached.has_value());
  EXPECT_DOUBLE_EQ(cached->dram_gbps, 4000);
  EXPECT_EQ(cached->copy_bytes, uint64_t{1} << 30);

  DevicePeak other_driver = p, other_gpu = p, other_name = p;
  other_driver.driver_version = 13010;
  other_gpu.uuid = "GPU-ffffffff-89ab-cdef-0123-456789abcdef";
  other_name.device = "NVIDIA H100";
  for (const DevicePeak* other : {&other_driver, &other_gpu, &other_name}) {
    EXPECT_NE(internal::PeakCachePath(dir_, *other), internal::PeakCachePath(dir_, p));
    EXPECT_FALSE(internal::ReadPeakCache(path, *other).has_value()) << "a record of another device is a miss";
  }
}

TEST_F(BenchPeakCacheTest, BadFilesAreMisses) {
  const DevicePeak p = H200Like();
  fs::create_directories(dir_);
  const fs::path path = dir_ / "peak.json";
  const char* bad[] = {
      "not json",
      "[]",
      R"({"schema": "kforge.peak_cache/2", "device": "NVIDIA H200", "uuid": "GPU-01234567-89ab-cdef-0123-456789abcdef", "driver_version": 13000, "dram_gbps": 4000, "copy_bytes": 1})",
      R"({"schema": "kforge.peak_cache/1", "device": "NVIDIA H200", "uuid": "GPU-01234567-89ab-cdef-0123-456789abcdef", "driver_version": 13000, "dram_gbps": -1, "copy_bytes": 1})",
      R"({"schema": "kforge.peak_cache/1", "device": "NVIDIA H200", "uuid": "GPU-01234567-89ab-cdef-0123-456789abcdef", "driver_version": "13000", "dram_gbps": 4000, "copy_bytes": 1})",
  };
  for (const char* text : bad) {
    std::ofstream(path) << text;
    EXPECT_FALSE(internal::ReadPeakCache(path, p).has_value()) << text;
  }
  std::ofstream(path)
      << R"({"schema": "kforge.peak_cache/1", "device": "NVIDIA H200", "uuid": "GPU-01234567-89ab-cdef-0123-456789abcdef", "driver_version": 13000, "dram_gbps": 4000, "copy_bytes": 1})";
  EXPECT_TRUE(internal::ReadPeakCache(path, p).has_value()) << "the same record, well formed, is a hit";
}

TEST_F(BenchPeakCacheTest, UnwritableCacheFails) {
  fs::create_directories(dir_);
  std::ofstream(dir_ / "file") << "x";
  EXPECT_FALSE(internal::WritePeakCache(dir_ / "file" / "peak.json", H200Like()));
}

TEST(BenchPeakTest, DefaultCacheDir) {
  const char* saved[] = {getenv("KFORGE_CACHE_DIR"), getenv("XDG_CACHE_HOME"), getenv("HOME")};
  const std::string copies[] = {saved[0] ? saved[0] : "", saved[1] ? saved[1] : "", saved[2] ? saved[2] : ""};
  setenv("KFORGE_CACHE_DIR", "/k", 1);
  setenv("XDG_CACHE_HOME", "/x", 1);
  setenv("HOME", "/h", 1);
  EXPECT_EQ(DefaultCacheDir(), fs::path("/k"));
  unsetenv("KFORGE_CACHE_DIR");
  EXPECT_EQ(DefaultCacheDir(), fs::path("/x/kforge"));
  unsetenv("XDG_CACHE_HOME");
  EXPECT_EQ(DefaultCacheDir(), fs::path("/h/.cache/kforge"));
  const char* names[] = {"KFORGE_CACHE_DIR", "XDG_CACHE_HOME", "HOME"};
  for (int i = 0; i < 3; ++i) {
    if (saved[i] != nullptr) {
      setenv(names[i], copies[i].c_str(), 1);
    } else {
      unsetenv(names[i]);
    }
  }
}

}  // namespace
}  // namespace kforge::bench
