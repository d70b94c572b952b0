// LoadOrMeasurePeak on a real device: a plausible bandwidth, and the cache file reused.
#include "kforge/bench/peak.h"

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <random>

#include "bench/peak_model.h"
#include "kforge/cuda/device.h"

namespace kforge::bench {
namespace {

namespace fs = std::filesystem;

TEST(BenchPeakGpuTest, MeasuresOnceThenReadsTheCache) {
  if (cuda::DeviceCount() == 0) GTEST_SKIP() << "no CUDA device: GPU bench tests skipped";
  const fs::path dir = fs::temp_directory_path() / ("kforge_peak_gpu_" + std::to_string(::getpid()) + "_" +
                                                    std::to_string(std::random_device{}()));
  auto first = LoadOrMeasurePeak(0, dir);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_FALSE(first->cached);
  EXPECT_GT(first->dram_gbps, 100) << "achievable DRAM bandwidth of a datacenter GPU";
  EXPECT_LT(first->dram_gbps, 20'000) << "above any HBM: the bytes or the units are wrong";
  EXPECT_GE(first->copy_bytes, uint64_t{64} << 20);
  EXPECT_FALSE(first->device.empty());
  EXPECT_EQ(first->uuid.rfind("GPU-", 0), 0u) << first->uuid;
  EXPECT_EQ(first->uuid.size(), 40u);
  EXPECT_GT(first->driver_version, 0);
  EXPECT_GT(first->sm_clock_mhz, 0);
  if ((first->cc_major == 9 || first->cc_major == 8) && first->cc_minor == 0) {
    EXPECT_GT(first->fp32_tflops, 10);
    EXPECT_GT(first->fp16_tflops, first->fp32_tflops);
  }
  const fs::path file = internal::PeakCachePath(dir, *first);
  ASSERT_TRUE(fs::exists(file)) << file;

  auto second = LoadOrMeasurePeak(0, dir);
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_TRUE(second->cached);
  EXPECT_DOUBLE_EQ(second->dram_gbps, first->dram_gbps);
  EXPECT_DOUBLE_EQ(second->fp16_tflops, first->fp16_tflops);

  // A value no measurement gives proves that the third call reads the file.
  DevicePeak planted = *first;
  planted.dram_gbps = 12345;
  ASSERT_TRUE(internal::WritePeakCache(file, planted));
  auto third = LoadOrMeasurePeak(0, dir);
  ASSERT_TRUE(third.ok());
  EXPECT_TRUE(third->cached);
  EXPECT_DOUBLE_EQ(third->dram_gbps, 12345);

  auto uncached = LoadOrMeasurePeak(0, "");
  ASSERT_TRUE(uncached.ok());
  EXPECT_FALSE(uncached->cached);
  EXPECT_NEAR(uncached->dram_gbps, first->dram_gbps, 0.2 * first->dram_gbps) << "two measurements agree";
  fs::remove_all(dir);
}

TEST(BenchPeakGpuTest, RestoresTheCurrentDevice) {
  if (cuda::DeviceCount() < 2) GTEST_SKIP() << "needs two CUDA devices";
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  ASSERT_TRUE(LoadOrMeasurePeak(1, "").ok());
  int current = -1;
  ASSERT_EQ(cudaGetDevice(&current), cudaSuccess);
  EXPECT_EQ(current, 0);
}

TEST(BenchPeakGpuTest, BadDeviceIsAnError) {
  if (cuda::DeviceCount() == 0) GTEST_SKIP() << "no CUDA device: GPU bench tests skipped";
  auto peak = LoadOrMeasurePeak(cuda::DeviceCount(), "");
  ASSERT_FALSE(peak.ok());
  EXPECT_EQ(peak.status().code(), Status::Code::kUnavailable);
  cudaGetLastError();
}

}  // namespace
}  // namespace kforge::bench
