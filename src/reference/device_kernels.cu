// The fused comparison and the content digest (reference/device_kernels.h).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cfloat>
#include <cstdint>

#include "reference/device_kernels.h"

namespace kforge::reference::kernels {
namespace {

constexpr int kMaxBlocks = 1024;

template <typename T>
__device__ __forceinline__ double Load(const T* p, int64_t i) {
  return static_cast<double>(p[i]);
}
template <>
__device__ __forceinline__ double Load<__half>(const __half* p, int64_t i) {
  return static_cast<double>(__half2float(p[i]));
}
template <>
__device__ __forceinline__ double Load<__nv_bfloat16>(const __nv_bfloat16* p, int64_t i) {
  return static_cast<double>(__bfloat162float(p[i]));
}
template <>
__device__ __forceinline__ double Load<bool>(const bool* p, int64_t i) {
  return reinterpret_cast<const uint8_t*>(p)[i] != 0 ? 1.0 : 0.0;
}

/// Folds `b` into `a` (Chan's rule for the mean and variance); used on the device and the host.
__host__ __device__ __forceinline__ void Merge(ComparePartial& a, const ComparePartial& b) {
  a.mismatches += b.mismatches;
  a.nonfinite_mismatches += b.nonfinite_mismatches;
  a.first_mismatch = b.first_mismatch < a.first_mismatch ? b.first_mismatch : a.first_mismatch;
  a.max_abs_err = fmax(a.max_abs_err, b.max_abs_err);
  a.max_rel_err = fmax(a.max_rel_err, b.max_rel_err);
  a.sum_sq_err += b.sum_sq_err;
  a.sum_sq_ref += b.sum_sq_ref;
  a.ref_max_abs = fmax(a.ref_max_abs, b.ref_max_abs);
  if (b.count == 0) return;
  if (a.count == 0) {
    a.count = b.count;
    a.mean = b.mean;
    a.m2 = b.m2;
    return;
  }
  double n = a.count + b.count;
  double delta = b.mean - a.mean;
  a.mean += delta * (b.count / n);
  a.m2 += b.m2 + delta * delta * (a.count * b.count / n);
  a.count = n;
}

/// Per-thread state of a comparison: the partial result and shifted sums for the reference's variance.
struct CompareAccumulator {
  ComparePartial acc = kEmptyPartial;
  double shift = 0, s1 = 0, s2 = 0, count = 0;

  __device__ __forceinline__ void Add(double r, double c, int64_t i, double atol, double rtol) {
    bool r_finite = isfinite(r), c_finite = isfinite(c);
    double diff = fabs(c - r);
    double abs_r = fabs(r);
    bool close = c == r || (r_finite && diff <= atol + rtol * abs_r) || (isnan(c) && isnan(r));
    if (!close) {
      ++acc.mismatches;
      if (acc.first_mismatch == INT64_MAX) acc.first_mismatch = i;
      if (!(r_finite && c_finite)) ++acc.nonfinite_mismatches;
    }
    if (r_finite && c_finite) {
      acc.max_abs_err = fmax(acc.max_abs_err, diff);
      double denom = fmax(abs_r, 1e-12);
      // Divide only when the maximum grows: one comparison per element instead of a division.
      if (diff > acc.max_rel_err * denom) acc.max_rel_err = fmax(acc.max_rel_err, diff / denom);
      acc.sum_sq_err = fma(diff, diff, acc.sum_sq_err);
      acc.sum_sq_ref = fma(r, r, acc.sum_sq_ref);
    }
    double v = r_finite ? r : 0.0;
    acc.ref_max_abs = fmax(acc.ref_max_abs, fabs(v));
    if (count == 0) shift = v;
    double d = v - shift;
    s1 += d;
    s2 = fma(d, d, s2);
    count += 1;
  }

  __device__ __forceinline__ ComparePartial Finish() {
    if (count > 0) {
      acc.count = count;
      acc.mean = shift + s1 / count;
      acc.m2 = fmax(s2 - s1 * s1 / count, 0.0);
    }
    return acc;
  }
};

template <typename T>
__global__ void __launch_bounds__(kThreads)
    CompareKernel(const T* ref, const T* cand, int64_t n, double atol, double rtol, ComparePartial* partials) {
  CompareAccumulator state;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  // Four independent loads per array in flight per thread, in ascending index order.
  for (; i + 3 * stride < n; i += 4 * stride) {
    double r[4], c[4];
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      r[k] = Load(ref, i + k * stride);
      c[k] = Load(cand, i + k * stride);
    }
#pragma unroll
    for (int k = 0; k < 4; ++k) state.Add(r[k], c[k], i + k * stride, atol, rtol);
  }
  for (; i < n; i += stride) state.Add(Load(ref, i), Load(cand, i), i, atol, rtol);
  ComparePartial acc = state.Finish();
  __shared__ ComparePartial shared[kThreads];
  shared[threadIdx.x] = acc;
  __syncthreads();
  for (int half = kThreads / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) Merge(shared[threadIdx.x], shared[threadIdx.x + half]);
    __syncthreads();
  }
  if (threadIdx.x == 0) partials[blockIdx.x] = shared[0];
}

__device__ __forceinline__ uint64_t Mix(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

/// The wrapping sum of `sum` over the block, stored by thread 0 as the block's partial.
__device__ __forceinline__ void StoreBlockSum(uint64_t sum, unsigned long long* partials) {
  __shared__ unsigned long long shared[kThreads];
  shared[threadIdx.x] = sum;
  __syncthreads();
  for (int half = kThreads / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) shared[threadIdx.x] += shared[threadIdx.x + half];
    __syncthreads();
  }
  if (threadIdx.x == 0) partials[blockIdx.x] = shared[0];
}

/// Wrapping sum over words of Mix(word + index * golden ratio): position-dependent, order-free.
__global__ void __launch_bounds__(kThreads)
    DigestKernel(const uint64_t* words, uint64_t full_words, const uint8_t* tail, int tail_bytes,
                 unsigned long long* partials) {
  uint64_t sum = 0;
  const uint64_t stride = static_cast<uint64_t>(gridDim.x) * blockDim.x;
  uint64_t i = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  for (; i + 3 * stride < full_words; i += 4 * stride) {  // four loads in flight per thread
    uint64_t w[4];
#pragma unroll
    for (int k = 0; k < 4; ++k) w[k] = words[i + k * stride];
#pragma unroll
    for (int k = 0; k < 4; ++k) sum += Mix(w[k] + (i + k * stride + 1) * 0x9e3779b97f4a7c15ull);
  }
  for (; i < full_words; i += stride) sum += Mix(words[i] + (i + 1) * 0x9e3779b97f4a7c15ull);
  if (tail_bytes > 0 && blockIdx.x == 0 && threadIdx.x == 0) {
    uint64_t last = 0;
    for (int b = 0; b < tail_bytes; ++b) last |= static_cast<uint64_t>(tail[b]) << (8 * b);
    sum += Mix(last + (full_words + 1) * 0x9e3779b97f4a7c15ull);
  }
  StoreBlockSum(sum, partials);
}

/// Two values of `spec` from the hash of word `i`: a Box-Muller pair of normals, or two uniforms.
__device__ __forceinline__ float2 DrawPair(uint64_t seed, uint64_t i, DrawSpec spec) {
  const uint64_t h = Mix(seed + (i + 1) * 0xd1b54a32d192ed03ull);
  const float u1 = static_cast<float>((h >> 40) + 1) * 0x1p-24f;             // (0, 1]
  const float u2 = static_cast<float>((h >> 8) & 0xffffffull) * 0x1p-24f;    // [0, 1)
  float a, b;
  if (spec.normal) {
    const float r = sqrtf(-2.0f * logf(u1));
    float s, c;
    sincospif(2.0f * u2, &s, &c);
    a = r * c;
    b = r * s;
  } else {
    a = u1 - 0x1p-24f;  // [0, 1)
    b = u2;
  }
  if (spec.square) {
    a *= a;
    b *= b;
  }
  return make_float2(spec.add + spec.mul * a, spec.add + spec.mul * b);
}

/// Writes word i (two floats) of the draw and adds it to the digest exactly as DigestKernel does.
__global__ void __launch_bounds__(kThreads)
    DrawFloat32Kernel(uint64_t* words, uint64_t full_words, float* tail, uint64_t seed, DrawSpec spec,
                      unsigned long long* partials) {
  uint64_t sum = 0;
  const uint64_t stride = static_cast<uint64_t>(gridDim.x) * blockDim.x;
  for (uint64_t i = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < full_words; i += stride) {
    const float2 v = DrawPair(seed, i, spec);
    const uint64_t word = static_cast<uint64_t>(__float_as_uint(v.x)) |
                          (static_cast<uint64_t>(__float_as_uint(v.y)) << 32);
    words[i] = word;
    sum += Mix(word + (i + 1) * 0x9e3779b97f4a7c15ull);
  }
  if (tail != nullptr && blockIdx.x == 0 && threadIdx.x == 0) {  // an odd count: the last float alone
    const float v = DrawPair(seed, full_words, spec).x;
    *tail = v;
    sum += Mix(static_cast<uint64_t>(__float_as_uint(v)) + (full_words + 1) * 0x9e3779b97f4a7c15ull);
  }
  StoreBlockSum(sum, partials);
}

template <typename T>
cudaError_t Launch(const void* ref, const void* cand, int64_t n, double atol, double rtol,
                   ComparePartial* partials, cudaStream_t stream) {
  CompareKernel<T><<<BlocksFor(n), kThreads, 0, stream>>>(static_cast<const T*>(ref), static_cast<const T*>(cand),
                                                          n, atol, rtol, partials);
  return cudaGetLastError();
}

}  // namespace

ComparePartial MergePartials(const ComparePartial* parts, int count) {
  ComparePartial all = kEmptyPartial;
  for (int i = 0; i < count; ++i) Merge(all, parts[i]);
  return all;
}

int BlocksFor(int64_t n) {
  int64_t blocks = (n + kThreads - 1) / kThreads;
  return static_cast<int>(blocks < 1 ? 1 : (blocks > kMaxBlocks ? kMaxBlocks : blocks));
}

cudaError_t LaunchCompare(const void* ref, const void* cand, ElementType type, int64_t n, double atol,
                          double rtol, ComparePartial* partials, cudaStream_t stream) {
  switch (type) {
    case ElementType::kFloat32:
      return Launch<float>(ref, cand, n, atol, rtol, partials, stream);
    case ElementType::kFloat16:
      return Launch<__half>(ref, cand, n, atol, rtol, partials, stream);
    case ElementType::kBFloat16:
      return Launch<__nv_bfloat16>(ref, cand, n, atol, rtol, partials, stream);
    case ElementType::kFloat64:
      return Launch<double>(ref, cand, n, atol, rtol, partials, stream);
    case ElementType::kInt64:
      return Launch<int64_t>(ref, cand, n, atol, rtol, partials, stream);
    case ElementType::kInt32:
      return Launch<int32_t>(ref, cand, n, atol, rtol, partials, stream);
    case ElementType::kInt8:
      return Launch<int8_t>(ref, cand, n, atol, rtol, partials, stream);
    case ElementType::kUInt8:
      return Launch<uint8_t>(ref, cand, n, atol, rtol, partials, stream);
    case ElementType::kBool:
      return Launch<bool>(ref, cand, n, atol, rtol, partials, stream);
  }
  return cudaErrorInvalidValue;
}

int DigestBlocksFor(uint64_t bytes) { return BlocksFor(static_cast<int64_t>(bytes / 8 + 1)); }

cudaError_t LaunchDigest(const void* data, uint64_t bytes, unsigned long long* partials, cudaStream_t stream) {
  if (reinterpret_cast<uintptr_t>(data) % 8 != 0) return cudaErrorMisalignedAddress;
  uint64_t full_words = bytes / 8;
  const uint8_t* tail = static_cast<const uint8_t*>(data) + full_words * 8;
  DigestKernel<<<DigestBlocksFor(bytes), kThreads, 0, stream>>>(
      static_cast<const uint64_t*>(data), full_words, tail, static_cast<int>(bytes % 8), partials);
  return cudaGetLastError();
}

cudaError_t LaunchDrawFloat32(float* out, int64_t n, uint64_t seed, DrawSpec spec, unsigned long long* partials,
                              cudaStream_t stream) {
  if (n < 0 || reinterpret_cast<uintptr_t>(out) % 8 != 0) return cudaErrorInvalidValue;
  const uint64_t bytes = static_cast<uint64_t>(n) * 4;
  // The same grid as LaunchDigest over these bytes: the partials are summed in any order.
  DrawFloat32Kernel<<<DigestBlocksFor(bytes), kThreads, 0, stream>>>(
      reinterpret_cast<uint64_t*>(out), bytes / 8, n % 2 ? out + n - 1 : nullptr, seed, spec, partials);
  return cudaGetLastError();
}

uint64_t FinishDigest(uint64_t partial_sum, uint64_t bytes) {
  uint64_t x = partial_sum ^ (bytes * 0xd6e8feb86659fd93ull);
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

}  // namespace kforge::reference::kernels
