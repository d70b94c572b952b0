// Compile latency of typical candidate kernels: cold (fresh cache directory, a distinct salt per
// repetition so nothing hits) and cached. Prints p50/p90 milliseconds per kernel and mode, and the
// first compile (which also starts a compile process).
//   compile_bench [repetitions=5] [arch=sm_90a]
#include <stdlib.h>
#include <cstdint>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "kforge/cuda/compiler.h"

namespace {

struct Kernel {
  const char* name;
  const char* source;
};

const Kernel kKernels[] = {
    {"relu", R"(extern "C" __global__ void relu(const float* x, float* y, long long n) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] > 0.f ? x[i] : 0.f;
})"},
    {"axpy_half", R"(#include <cuda_fp16.h>
extern "C" __global__ void axpy(const __half* x, __half* y, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = __float2half(a * __half2float(x[i]) + __half2float(y[i]));
})"},
    {"block_sum", R"(extern "C" __global__ void block_sum(const float* x, float* out, int n) {
  __shared__ float s[256];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  s[threadIdx.x] = i < n ? x[i] : 0.f;
  __syncthreads();
  for (int k = blockDim.x / 2; k > 0; k >>= 1) {
    if (threadIdx.x < k) s[threadIdx.x] += s[threadIdx.x + k];
    __syncthreads();
  }
  if (threadIdx.x == 0) atomicAdd(out, s[0]);
})"},
    {"softmax", R"(extern "C" __global__ void softmax(const float* x, float* y, int cols) {
  const float* row = x + (long long)blockIdx.x * cols;
  float* out = y + (long long)blockIdx.x * cols;
  float m = -3.402823466e38f;
  for (int c = threadIdx.x; c < cols; c += 32) m = fmaxf(m, row[c]);
  for (int o = 16; o > 0; o >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
  float s = 0.f;
  for (int c = threadIdx.x; c < cols; c += 32) s += __expf(row[c] - m);
  for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
  for (int c = threadIdx.x; c < cols; c += 32) out[c] = __expf(row[c] - m) / s;
})"},
    {"tiled_matmul", R"(#define TILE 32
extern "C" __global__ void matmul(const float* a, const float* b, float* c, int n) {
  __shared__ float ta[TILE][TILE], tb[TILE][TILE];
  int row = blockIdx.y * TILE + threadIdx.y, col = blockIdx.x * TILE + threadIdx.x;
  float acc = 0.f;
  for (int t = 0; t < n; t += TILE) {
    ta[threadIdx.y][threadIdx.x] = row < n && t + threadIdx.x < n ? a[row * n + t + threadIdx.x] : 0.f;
    tb[threadIdx.y][threadIdx.x] = col < n && t + threadIdx.y < n ? b[(t + threadIdx.y) * n + col] : 0.f;
    __syncthreads();
#pragma unroll
    for (int k = 0; k < TILE; ++k) acc += ta[threadIdx.y][k] * tb[k][threadIdx.x];
    __syncthreads();
  }
  if (row < n && col < n) c[row * n + col] = acc;
})"},
    {"layernorm_bf16", R"(#include <cuda_bf16.h>
extern "C" __global__ void layernorm(const __nv_bfloat16* x, __nv_bfloat16* y, int cols, float eps) {
  const __nv_bfloat16* row = x + (long long)blockIdx.x * cols;
  float s = 0.f, s2 = 0.f;
  for (int c = threadIdx.x; c < cols; c += 32) { float v = __bfloat162float(row[c]); s += v; s2 += v * v; }
  for (int o = 16; o > 0; o >>= 1) { s += __shfl_xor_sync(~0u, s, o); s2 += __shfl_xor_sync(~0u, s2, o); }
  float mean = s / cols, inv = rsqrtf(s2 / cols - mean * mean + eps);
  for (int c = threadIdx.x; c < cols; c += 32)
    y[(long long)blockIdx.x * cols + c] = __float2bfloat16((__bfloat162float(row[c]) - mean) * inv);
})"},
    {"cub_block_reduce", R"(#include <cub/block/block_reduce.cuh>
extern "C" __global__ void reduce(const float* x, float* out, int n) {
  using Reduce = cub::BlockReduce<float, 256>;
  __shared__ typename Reduce::TempStorage tmp;
  int i = blockIdx.x * 256 + threadIdx.x;
  float v = Reduce(tmp).Sum(i < n ? x[i] : 0.f);
  if (threadIdx.x == 0) atomicAdd(out, v);
})"},
    {"cuda_std_minmax", R"(#include <cuda/std/cstdint>
#include <cuda/std/limits>
extern "C" __global__ void clamp(const float* x, float* y, cuda::std::int64_t n) {
  cuda::std::int64_t i = blockIdx.x * (cuda::std::int64_t)blockDim.x + threadIdx.x;
  if (i < n) y[i] = fminf(fmaxf(x[i], -cuda::std::numeric_limits<float>::max()), 1e30f);
})"},
};

double Percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  const size_t idx = static_cast<size_t>(p * (v.size() - 1) + 0.5);
  return v[std::min(idx, v.size() - 1)];
}

}  // namespace

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::max(1, std::atoi(argv[1])) : 5;
  const std::string arch = argc > 2 ? argv[2] : "sm_90a";
  std::string templ = (std::filesystem::temp_directory_path() / "kforge-compile-bench-XXXXXX").string();
  if (::mkdtemp(templ.data()) == nullptr) return 1;
  kforge::cuda::CompilerOptions options;
  options.cache_dir = templ;
  const kforge::cuda::Compiler compiler(options);

  std::printf("%-18s %10s %10s %10s %10s %6s\n", "kernel", "cold_p50", "cold_p90", "cached_p50", "cached_p90",
              "regs");
  std::vector<double> all_cold;
  double first_ms = -1;  // the very first compile: it also starts a compile process
  int failures = 0;
  for (const Kernel& k : kKernels) {
    std::vector<double> cold, cached;
    int regs = 0;
    for (int r = 0; r < reps; ++r) {
      kforge::cuda::CompileRequest req;
      req.arch = arch;
      req.source = std::string(k.source) + "\n// salt " + std::to_string(r) + "\n";
      const kforge::cuda::CompileResult c = compiler.Compile(req);
      if (c.status != kforge::cuda::CompileStatus::kOk || c.cached) {
        std::fprintf(stderr, "%s: %s %s\n%s\n", k.name, std::string(CompileStatusName(c.status)).c_str(),
                     c.message.c_str(), c.log.c_str());
        ++failures;
        break;
      }
      cold.push_back(c.wall_ms);
      if (first_ms < 0) first_ms = c.wall_ms;
      if (!c.kernels.empty()) regs = c.kernels.begin()->second.registers;
      const kforge::cuda::CompileResult h = compiler.Compile(req);
      if (h.cached) cached.push_back(h.wall_ms);
    }
    if (cold.empty() || cached.empty()) continue;
    all_cold.insert(all_cold.end(), cold.begin(), cold.end());
    std::printf("%-18s %10.1f %10.1f %10.2f %10.2f %6d\n", k.name, Percentile(cold, 0.5),
                Percentile(cold, 0.9), Percentile(cached, 0.5), Percentile(cached, 0.9), regs);
  }
  if (!all_cold.empty()) {
    std::printf("%-18s %10.1f %10.1f\n", "all (cold)", Percentile(all_cold, 0.5), Percentile(all_cold, 0.9));
    std::printf("%-18s %10.1f   (%d compile process%s)\n", "first compile", first_ms,
                compiler.processes_started(), compiler.processes_started() == 1 ? "" : "es");
  }
  std::filesystem::remove_all(templ);
  return failures == 0 ? 0 : 1;
}
