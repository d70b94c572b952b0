// Reference-vs-candidate comparison: one fused pass of kforge's own kernel for tensors on a CUDA
// device (any size), ATen for the rest; and the device digest.
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#include <cmath>
#include <cstdint>
#include <limits>

#include "kforge/reference/compare.h"
#include "reference/device_kernels.h"
#include "reference/torch_util.h"

namespace kforge::reference {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

StatusOr<CompareResult> CompareOnDevice(const at::Tensor& r, const at::Tensor& c,
                                        const common::Tolerance& tol) {
  CompareResult res;
  res.numel = r.numel();
  if (res.numel == 0) return res;
  c10::cuda::CUDAGuard device_guard(r.device());
  cudaStream_t stream = c10::cuda::getCurrentCUDAStream(r.device().index()).stream();
  const int blocks = kernels::BlocksFor(res.numel);
  at::Tensor workspace = at::empty({static_cast<int64_t>(blocks * sizeof(kernels::ComparePartial))},
                                   r.options().dtype(at::kByte));
  cudaError_t launched = kernels::LaunchCompare(
      r.data_ptr(), c.data_ptr(), static_cast<kernels::ElementType>(*FromScalarType(r.scalar_type())),
      res.numel, tol.atol, tol.rtol, reinterpret_cast<kernels::ComparePartial*>(workspace.data_ptr()),
      stream);
  if (launched != cudaSuccess)
    return Status::Unavailable(std::string("compare kernel: ") + cudaGetErrorName(launched));
  at::Tensor host = workspace.cpu();  // synchronises with the stream
  kernels::ComparePartial all =
      kernels::MergePartials(reinterpret_cast<const kernels::ComparePartial*>(host.data_ptr()), blocks);
  res.mismatches = static_cast<int64_t>(all.mismatches);
  if (res.mismatches > 0) {
    res.first_mismatch = all.first_mismatch;
    res.ref_at_first = r.view({-1})[res.first_mismatch].item<double>();
    res.cand_at_first = c.view({-1})[res.first_mismatch].item<double>();
  }
  res.max_abs_err = all.nonfinite_mismatches > 0 ? kInf : all.max_abs_err;
  res.max_rel_err = all.nonfinite_mismatches > 0 ? kInf : all.max_rel_err;
  res.rel_l2_err = std::sqrt(all.sum_sq_err) / std::max(std::sqrt(all.sum_sq_ref), 1e-30);
  res.ref_max_abs = all.ref_max_abs;
  res.ref_std = res.numel > 1 ? std::sqrt(all.m2 / static_cast<double>(res.numel - 1)) : 0.0;
  return res;
}

/// The ATen form (tensors on the CPU, or on different devices): builds full-size temporaries.
StatusOr<CompareResult> CompareWithATen(const at::Tensor& rt, const at::Tensor& ct,
                                        const common::Tolerance& tol) {
  at::Tensor r = rt.to(at::kDouble).view({-1});
  at::Tensor c = ct.to(rt.device()).to(at::kDouble).view({-1});
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
    res.max_abs_err = kInf;
    res.max_rel_err = kInf;
  }
  at::Tensor rf = at::where(finite, r, at::zeros_like(r));
  double ref_norm = rf.norm().item<double>();
  res.rel_l2_err = fd.norm().item<double>() / std::max(ref_norm, 1e-30);
  at::Tensor ref_finite = at::where(r.isfinite(), r, at::zeros_like(r));
  res.ref_max_abs = ref_finite.abs().max().item<double>();
  res.ref_std = res.numel > 1 ? ref_finite.std().item<double>() : 0.0;
  return res;
}

}  // namespace

StatusOr<CompareResult> Compare(const Tensor& ref, const Tensor& cand, const common::Tolerance& tol) {
  if (!ref.defined() || !cand.defined()) return Status::InvalidArgument("compare of an undefined tensor");
  if (ref.dtype() != cand.dtype() || ref.shape() != cand.shape())
    return Status::InvalidArgument("compare: dtype or shape differ");
  at::InferenceMode guard;
  const at::Tensor& r = Unwrap(ref);
  const at::Tensor& c = Unwrap(cand);
  try {
    if (r.is_cuda() && c.is_cuda() && r.device() == c.device()) return CompareOnDevice(r, c, tol);
    return CompareWithATen(r, c, tol);
  } catch (const c10::OutOfMemoryError& e) {
    std::string msg = e.what();
    return Status::ResourceExhausted("compare: " + msg.substr(0, msg.find('\n')));
  } catch (const std::exception& e) {
    std::string msg = e.what();
    return Status::Unavailable("compare: " + msg.substr(0, msg.find('\n')));
  }
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

StatusOr<uint64_t> Digest(const Tensor& tensor) {
  if (!tensor.defined()) return Status::InvalidArgument("digest of an undefined tensor");
  const at::Tensor& t = Unwrap(tensor);
  if (!t.is_cuda()) return Status::InvalidArgument("digest: the tensor is not on a CUDA device");
  try {
    return DigestByKernel(t, "digest", [&t](unsigned long long* partials, cudaStream_t stream) {
      return kernels::LaunchDigest(t.data_ptr(), t.nbytes(), partials, stream);
    });
  } catch (const std::exception& e) {
    std::string msg = e.what();
    return Status::Unavailable("digest: " + msg.substr(0, msg.find('\n')));
  }
}

StatusOr<uint64_t> DigestByKernel(
    const at::Tensor& t, const char* what,
    const std::function<cudaError_t(unsigned long long*, cudaStream_t)>& launch) {
  c10::cuda::CUDAGuard device_guard(t.device());
  cudaStream_t stream = c10::cuda::getCurrentCUDAStream(t.device().index()).stream();
  const int blocks = kernels::DigestBlocksFor(t.nbytes());
  at::Tensor workspace = at::empty({blocks}, t.options().dtype(at::kLong));
  cudaError_t launched = launch(reinterpret_cast<unsigned long long*>(workspace.data_ptr()), stream);
  if (launched != cudaSuccess)
    return Status::Unavailable(std::string(what) + " kernel: " + cudaGetErrorName(launched));
  at::Tensor host = workspace.cpu();  // synchronises with the stream
  uint64_t sum = 0;
  const auto* parts = reinterpret_cast<const uint64_t*>(host.data_ptr());
  for (int i = 0; i < blocks; ++i) sum += parts[i];
  return kernels::FinishDigest(sum, t.nbytes());
}

}  // namespace kforge::reference
