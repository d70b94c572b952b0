// Compiles a kernel with Compiler, loads the CUBIN with the CUDA runtime library API and runs it.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <vector>

#include "kforge/cuda/check.h"
#include "kforge/cuda/compiler.h"

namespace kforge::cuda {
namespace {

TEST(LoadGpu, CompiledCubinRunsOnDevice) {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) GTEST_SKIP() << "no CUDA device";
  cudaDeviceProp prop{};
  KFORGE_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));

  CompilerOptions options;
  options.use_cache = false;
  const Compiler compiler(options);
  CompileRequest req;
  req.arch = "sm_" + std::to_string(prop.major) + std::to_string(prop.minor) + (prop.major >= 9 ? "a" : "");
  req.source = R"(
extern "C" __global__ void affine(const float* x, float* y, float a, float b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + b;
}
)";
  const CompileResult r = compiler.Compile(req);
  ASSERT_EQ(r.status, CompileStatus::kOk) << r.message << "\n" << r.log;

  cudaLibrary_t library = nullptr;
  KFORGE_CUDA_CHECK(cudaLibraryLoadData(&library, r.cubin.data(), nullptr, nullptr, 0, nullptr, nullptr, 0));
  cudaKernel_t kernel = nullptr;
  KFORGE_CUDA_CHECK(cudaLibraryGetKernel(&kernel, library, "affine"));

  constexpr int kN = 1000;
  std::vector<float> x(kN), y(kN, -1.f);
  for (int i = 0; i < kN; ++i) x[i] = static_cast<float>(i);
  float *dx = nullptr, *dy = nullptr;
  KFORGE_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&dx), kN * sizeof(float)));
  KFORGE_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&dy), kN * sizeof(float)));
  KFORGE_CUDA_CHECK(cudaMemcpy(dx, x.data(), kN * sizeof(float), cudaMemcpyHostToDevice));
  float a = 2.f, b = 0.5f;
  int n = kN;
  void* args[] = {&dx, &dy, &a, &b, &n};
  KFORGE_CUDA_CHECK(cudaLaunchKernel(reinterpret_cast<const void*>(kernel), dim3((kN + 255) / 256), dim3(256),
                                     args, 0, nullptr));
  KFORGE_CUDA_CHECK(cudaDeviceSynchronize());
  KFORGE_CUDA_CHECK(cudaMemcpy(y.data(), dy, kN * sizeof(float), cudaMemcpyDeviceToHost));
  for (int i = 0; i < kN; ++i) ASSERT_FLOAT_EQ(y[i], 2.f * i + 0.5f) << "at " << i;
  KFORGE_CUDA_CHECK(cudaFree(dx));
  KFORGE_CUDA_CHECK(cudaFree(dy));
  KFORGE_CUDA_CHECK(cudaLibraryUnload(library));
}

}  // namespace
}  // namespace kforge::cuda
