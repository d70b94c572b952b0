// Output comparison between the reference and a candidate, computed on the tensors' device.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kforge/common/status.h"
#include "kforge/common/task.h"
#include "kforge/reference/tensor.h"

namespace kforge::reference {

/// Element i mismatches unless c == r, both are NaN, or r is finite and |c - r| <= atol + rtol * |r|. So a
/// NaN where the reference has a number (or the reverse) and an infinity of the wrong sign mismatch.
struct CompareResult {
  std::string name;
  int64_t numel = 0;
  int64_t mismatches = 0;
  int64_t first_mismatch = -1;  // flat index, -1 when none
  double ref_at_first = 0;      // values at first_mismatch
  double cand_at_first = 0;
  double max_abs_err = 0;  // over elements where both are finite; +inf when a mismatch is non-finite
  double max_rel_err = 0;  // |c - r| / max(|r|, 1e-12), same elements
  double rel_l2_err = 0;   // ||c - r|| / max(||r||, 1e-30), finite elements
  double ref_max_abs = 0;  // of the finite reference values, to spot degenerate references
  double ref_std = 0;

  bool ok() const { return mismatches == 0; }
};

/// Compares one candidate output against the reference (same dtype and shape, any device pair).
/// Two tensors on one CUDA device are compared in one fused pass (no full-size temporaries, 64-bit
/// indexing, workspace of a few KiB); other pairs through ATen.
StatusOr<CompareResult> Compare(const Tensor& ref, const Tensor& cand, const common::Tolerance& tol);

/// Compares every tensor of `ref` with the same-named one of `cand`; a missing name is an error.
StatusOr<std::vector<CompareResult>> CompareAll(const TensorSet& ref, const TensorSet& cand,
                                                const common::Tolerance& tol);

/// A 64-bit digest of the bytes of a tensor on a CUDA device, in one pass: equal contents give equal
/// digests, and a changed or moved element changes it (collisions are as likely as for a random
/// 64-bit hash). How the inputs-unchanged check and the repeat-run check see a tensor without a copy.
StatusOr<uint64_t> Digest(const Tensor& tensor);

}  // namespace kforge::reference
