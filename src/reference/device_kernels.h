// kforge's own CUDA kernels for judging candidates at any size: a fused comparison of two outputs
// and a content digest, each one pass over the data with 64-bit indexing and no full-size
// temporaries. Built by nvcc; callers pass device workspace for the per-block partial results and
// finish the reduction on the host. Private to the reference module.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace kforge::reference::kernels {

/// Element types the kernels read, in common::DType's order.
enum class ElementType : int {
  kFloat32,
  kFloat16,
  kBFloat16,
  kFloat64,
  kInt64,
  kInt32,
  kInt8,
  kUInt8,
  kBool
};

/// One block's share of a comparison (see reference/compare.h for the definitions).
struct ComparePartial {
  unsigned long long mismatches;
  unsigned long long nonfinite_mismatches;  ///< mismatches where either value is not finite
  long long first_mismatch;                 ///< INT64_MAX when the block saw none
  double max_abs_err;                       ///< over pairs where both are finite
  double max_rel_err;
  double sum_sq_err;   ///< sum of (c - r)^2 over pairs where both are finite
  double sum_sq_ref;   ///< sum of r^2 over the same pairs
  double ref_max_abs;  ///< max |r| over finite r
  double count;        ///< elements seen, for the reference's mean and variance
  double mean;         ///< of r with non-finite r counted as 0
  double m2;           ///< sum of squared deviations from `mean`
};

/// The partial of no element.
inline constexpr ComparePartial kEmptyPartial = {0, 0, INT64_MAX, 0, 0, 0, 0, 0, 0, 0, 0};

/// Threads per block of both kernels.
inline constexpr int kThreads = 256;
/// Blocks for `n` elements (or 8-byte words): at most 1024, so partials stay small and results do
/// not depend on the device.
int BlocksFor(int64_t n);

/// Compares `n` elements of `ref` and `cand` (both device pointers of `type`); writes
/// BlocksFor(n) partials to device memory at `partials`.
cudaError_t LaunchCompare(const void* ref, const void* cand, ElementType type, int64_t n, double atol,
                          double rtol, ComparePartial* partials, cudaStream_t stream);

/// The partials of `count` blocks merged in block order (the result does not depend on timing).
ComparePartial MergePartials(const ComparePartial* parts, int count);

/// Digests `bytes` bytes at `data` (device): writes BlocksFor(words) 64-bit partial sums to
/// `partials`; their wrapping sum, finished by FinishDigest, is the digest.
cudaError_t LaunchDigest(const void* data, uint64_t bytes, unsigned long long* partials, cudaStream_t stream);
/// Number of partials LaunchDigest writes for `bytes`.
int DigestBlocksFor(uint64_t bytes);
/// The digest from the partials' wrapping sum and the length.
uint64_t FinishDigest(uint64_t partial_sum, uint64_t bytes);

/// What DrawFloat32 writes: add + mul * b, or add + mul * b * b when `square`, where b is a standard
/// normal (`normal`) or uniform in [0, 1), from a counter-based hash of the seed and the position.
struct DrawSpec {
  bool normal = true;
  bool square = false;
  float mul = 1;
  float add = 0;
};

/// Fills `n` float32 at `out` (device, 8-byte aligned) from `seed` by `spec` in one pass, and digests
/// what it wrote as LaunchDigest would: writes DigestBlocksFor(4 * n) partials to `partials`.
cudaError_t LaunchDrawFloat32(float* out, int64_t n, uint64_t seed, DrawSpec spec,
                              unsigned long long* partials, cudaStream_t stream);

}  // namespace kforge::reference::kernels
