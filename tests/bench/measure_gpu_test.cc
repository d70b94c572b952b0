// Measure on a real device: kernels that spin on %globaltimer for a known time must time at that
// time, cold and hot; interleaved subjects keep their ratio; the cold flush shows on an L2-sized
// read; a failing check ends the measurement with its status.
#include "kforge/bench/measure.h"

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <memory>

#include "kforge/bench/report.h"
#include "kforge/bench/stats.h"
#include "kforge/cuda/check.h"
#include "kforge/cuda/compiler.h"
#include "kforge/cuda/device.h"
#include "kforge/cuda/kernel_library.h"

namespace kforge::bench {
namespace {

constexpr char kSource[] = R"(
extern "C" __global__ void spin(unsigned long long ns) {
  unsigned long long start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < ns);
}

extern "C" __global__ void read_all(const float4* x, float* sink, long long n) {
  float acc = 0.f;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
    const float4 v = x[i];
    acc += v.x + v.y + v.z + v.w;
  }
  if (acc == -1.f) *sink = acc;
}
)";

class BenchMeasureGpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (cuda::DeviceCount() == 0) GTEST_SKIP() << "no CUDA device: GPU bench tests skipped";
    auto info = cuda::OpenDevice(0);
    ASSERT_TRUE(info.ok()) << info.status().ToString();
    info_ = *info;
    cuda::CompilerOptions options;
    options.use_cache = false;
    const cuda::Compiler compiler(options);
    cuda::CompileRequest request;
    request.source = kSource;
    request.arch = "sm_" + std::to_string(info_.cc_major) + std::to_string(info_.cc_minor) +
                   (info_.cc_major >= 9 ? "a" : "");
    const cuda::CompileResult compiled = compiler.Compile(request);
    ASSERT_EQ(compiled.status, cuda::CompileStatus::kOk) << compiled.message << "\n" << compiled.log;
    auto library = cuda::KernelLibrary::Load(compiled.cubin);
    ASSERT_TRUE(library.ok()) << library.status().ToString();
    library_ = std::move(*library);
    auto spin = library_->Kernel("spin");
    auto read_all = library_->Kernel("read_all");
    ASSERT_TRUE(spin.ok() && read_all.ok());
    spin_ = *spin;
    read_all_ = *read_all;
    KFORGE_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  }
  void TearDown() override {
    if (stream_ != nullptr) cudaStreamDestroy(stream_);
  }

  // A subject that spins for `ns` per run.
  Subject Spin(const std::string& name, unsigned long long ns) {
    return {name, nullptr,
            [this, ns](cudaStream_t stream) mutable {
              void* args[] = {&ns};
              KFORGE_CUDA_RETURN_IF_ERROR(
                  cudaLaunchKernel(reinterpret_cast<const void*>(spin_), dim3(1), dim3(1), args, 0, stream));
              return Status::Ok();
            },
            nullptr};
  }

  cuda::DeviceInfo info_;
  std::unique_ptr<cuda::KernelLibrary> library_;
  cudaKernel_t spin_ = nullptr, read_all_ = nullptr;
  cudaStream_t stream_ = nullptr;
};

MeasureOptions Quick(Mode mode) {
  MeasureOptions o;
  o.mode = mode;
  o.max_seconds = 5;
  o.warmup_seconds = 0;  // warm-up by count only, so the tests can count checks
  return o;
}

TEST_F(BenchMeasureGpuTest, ColdSpinTimesAtItsSpin) {
  std::vector<Subject> subjects = {Spin("spin", 200'000)};
  auto m = Measure(subjects, Quick(Mode::kCold), stream_);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  ASSERT_EQ(m->subjects.size(), 1u);
  const SubjectSamples& s = m->subjects[0];
  EXPECT_EQ(s.name, "spin");
  EXPECT_EQ(s.batch, 1);
  EXPECT_GE(static_cast<int>(s.ms.size()), 10);
  EXPECT_EQ(static_cast<int>(s.ms.size()) + s.throttled, m->rounds);
  EXPECT_NEAR(Summarize(s.ms).median, 0.2, 0.02);
  EXPECT_TRUE(m->converged) << "a spin is steady";
  EXPECT_EQ(m->l2_flush_bytes, 2 * static_cast<size_t>(info_.l2_bytes));
  EXPECT_GT(m->max_sm_clock_mhz, 0);
  EXPECT_GT(m->sm_clock_mhz, 0.2 * m->max_sm_clock_mhz) << "the probe reads the SM clock";
  EXPECT_LT(m->sm_clock_mhz, 1.1 * m->max_sm_clock_mhz);
  EXPECT_LE(m->wall_seconds, 6);
}

TEST_F(BenchMeasureGpuTest, HotSpinTimesAtItsSpin) {
  std::vector<Subject> subjects = {Spin("spin", 100'000)};
  auto m = Measure(subjects, Quick(Mode::kHot), stream_);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  const SubjectSamples& s = m->subjects[0];
  EXPECT_GE(s.batch, 4) << "0.1 ms runs need >= 5 per 0.5 ms batch (4 with launch overhead in the warm-up)";
  EXPECT_LE(s.batch, 6);
  EXPECT_NEAR(Summarize(s.ms).median, 0.1, 0.01);
  EXPECT_NEAR(s.gpu_seconds, 0.1e-3 * s.batch * s.ms.size(), 0.1 * s.gpu_seconds);
  EXPECT_EQ(m->l2_flush_bytes, 0u);
}

TEST_F(BenchMeasureGpuTest, InterleavedSubjectsKeepTheirRatio) {
  std::vector<Subject> subjects = {Spin("candidate", 100'000), Spin("reference", 300'000)};
  auto m = Measure(subjects, Quick(Mode::kCold), stream_);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  ASSERT_EQ(m->subjects.size(), 2u);
  EXPECT_EQ(m->subjects[0].name, "candidate");
  EXPECT_EQ(m->subjects[1].name, "reference");
  EXPECT_EQ(m->subjects[0].ms.size() + m->subjects[0].throttled,
            m->subjects[1].ms.size() + m->subjects[1].throttled);
  auto r = MakeBenchResult(*m, 1, std::nullopt, std::nullopt);
  ASSERT_TRUE(r.ok());
  EXPECT_NEAR(r->speedup.ratio, 3.0, 0.3);
  EXPECT_LE(r->speedup.lo, r->speedup.ratio);
  EXPECT_GE(r->speedup.hi, r->speedup.ratio);
  EXPECT_NEAR(r->reference->stats.median, 0.3, 0.03);
}

TEST_F(BenchMeasureGpuTest, ColdFlushEvictsL2) {
  // A read of a quarter of L2 is served from L2 when hot and from DRAM after a flush.
  const long long n = info_.l2_bytes / 4 / 16;  // float4 elements
  void* x = nullptr;
  void* sink = nullptr;
  KFORGE_CUDA_CHECK(cudaMalloc(&x, n * 16));
  KFORGE_CUDA_CHECK(cudaMalloc(&sink, 4));
  KFORGE_CUDA_CHECK(cudaMemset(x, 0, n * 16));
  const int blocks = 4 * info_.sm_count;
  auto read = [&](cudaStream_t stream) {
    long long count = n;
    void* args[] = {&x, &sink, &count};
    KFORGE_CUDA_RETURN_IF_ERROR(
        cudaLaunchKernel(reinterpret_cast<const void*>(read_all_), dim3(blocks), dim3(256), args, 0, stream));
    return Status::Ok();
  };
  std::vector<Subject> subjects = {{"read", nullptr, read, nullptr}};
  auto cold = Measure(subjects, Quick(Mode::kCold), stream_);
  auto hot = Measure(subjects, Quick(Mode::kHot), stream_);
  KFORGE_CUDA_CHECK(cudaFree(x));
  KFORGE_CUDA_CHECK(cudaFree(sink));
  ASSERT_TRUE(cold.ok()) << cold.status().ToString();
  ASSERT_TRUE(hot.ok()) << hot.status().ToString();
  const double cold_ms = Summarize(cold->subjects[0].ms).median,
               hot_ms = Summarize(hot->subjects[0].ms).median;
  EXPECT_GT(cold_ms, 1.15 * hot_ms) << "cold " << cold_ms << " ms, hot " << hot_ms << " ms";
}

TEST_F(BenchMeasureGpuTest, FailingCheckEndsTheMeasurement) {
  int checks = 0;
  std::vector<Subject> subjects = {Spin("spin", 10'000)};
  subjects[0].check = [&checks](cudaStream_t) {
    return ++checks == 6 ? Status::Internal("output changed between runs") : Status::Ok();
  };
  MeasureOptions o = Quick(Mode::kCold);
  o.warmup_runs = 2;
  auto m = Measure(subjects, o, stream_);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), Status::Code::kInternal);
  EXPECT_EQ(m.status().message(), "output changed between runs");
  EXPECT_EQ(checks, 6) << "2 warm-up checks, then one per sample until the failure";
}

TEST_F(BenchMeasureGpuTest, FailingRunEndsTheMeasurement) {
  int runs = 0;
  std::vector<Subject> subjects = {Spin("spin", 10'000)};
  subjects[0].run = [&runs](cudaStream_t) {
    return ++runs == 3 ? Status::Unavailable("launch failed") : Status::Ok();
  };
  auto m = Measure(subjects, Quick(Mode::kHot), stream_);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().message(), "launch failed");
}

}  // namespace
}  // namespace kforge::bench
