// Reference-vs-candidate comparison, computed with ATen on the reference's device.
#include <cstdint>

#include "kforge/reference/compare.h"

#include "reference/torch_util.h"

namespace kforge::reference {

StatusOr<CompareResult> Compare(const Tensor& ref, const Tensor& cand, const common::Tolerance& tol) {
  if (!ref.defined() || !cand.defined()) return Status::InvalidArgument("compare of an undefined tensor");
  if (ref.dtype() != cand.dtype() || ref.shape() != cand.shape())
    return Status::InvalidArgument("compare: dtype or shape differ");
  at::InferenceMode guard;
  const at::Tensor& rt = Unwrap(ref);
  at::Tensor r = rt.to(at::kDouble).view({-1});
  at::Tensor c = Unwrap(cand).to(rt.device()).to(at::kDouble).view({-1});
  CompareResult res;
  res.numel = r.numel();
  if (res.numel == 0) return res;

  at::Tensor diff = (c - r).abs();
  at::Tensor close =
      (c == r) | (r.isfinite() & (diff <= tol.atol + tol.rtol * r.abs())) | (c.isnan() & r.isnan());
  at::Tensor mismatch = close.logical_not();
  res.mismatches = mismatch.sum().item<int64_t>();
  if (res.mismatches > 0) {
    int64_t first = mismatch.to(at::kByte).argmax().item<int64_t>();
    res.first_mismatch = first;
    res.ref_at_first = r[first].item<double>();
    res.cand_at_first = c[first].item<double>();
  }
  at::Tensor finite = r.isfinite() & c.isfinite();
  at::Tensor fd = at::where(finite, diff, at::zeros_like(diff));
  res.max_abs_err = fd.max().item<double>();
  res.max_rel_err = (fd / r.abs().clamp_min(1e-12)).max().item<double>();
  if ((mismatch & finite.logical_not()).any().item<bool>()) {
    res.max_abs_err = std::numeric_limits<double>::infinity();
    res.max_rel_err = std::numeric_limits<double>::infinity();
  }
  at::Tensor rf = at::where(finite, r, at::zeros_like(r));
  double ref_norm = rf.norm().item<double>();
  res.rel_l2_err = fd.norm().item<double>() / std::max(ref_norm, 1e-30);
  at::Tensor ref_finite = at::where(r.isfinite(), r, at::zeros_like(r));
  res.ref_max_abs = ref_finite.abs().max().item<double>();
  res.ref_std = res.numel > 1 ? ref_finite.std().item<double>() : 0.0;
  return res;
}

StatusOr<std::vector<CompareResult>> CompareAll(const TensorSet& ref, const TensorSet& cand,
                                                const common::Tolerance& tol) {
  std::vector<CompareResult> out;
  for (const auto& [name, r] : ref.items()) {
    const Tensor* c = cand.Find(name);
    if (!c) return Status::InvalidArgument("compare: candidate has no \"" + name + "\"");
    auto res = Compare(r, *c, tol);
    if (!res.ok()) return res.status().WithContext(name);
    res->name = name;
    out.push_back(std::move(res).value());
  }
  return out;
}

}  // namespace kforge::reference
