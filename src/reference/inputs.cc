// Seeded input generation, golden-file loading and candidate output buffers.
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/detail/CUDAHooksInterface.h>
#include <cstdint>

#include "kforge/common/safetensors.h"
#include "kforge/reference/runner.h"
#include "reference/torch_util.h"

namespace kforge::reference {
namespace {

using common::InitSpec;

// SplitMix64: decorrelates the per-tensor seeds derived from one run seed.
uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

at::Generator MakeGenerator(Device device, uint64_t seed) {
  if (device.is_cuda()) {
    at::Generator gen =
        at::detail::getCUDAHooks().getNewGenerator(static_cast<c10::DeviceIndex>(device.index));
    gen.set_current_seed(seed);
    return gen;
  }
  return at::detail::createCPUGenerator(seed);
}

/// Elements drawn at a time: temporaries stay at a few hundred MiB whatever the input's size.
constexpr int64_t kDrawChunk = int64_t{1} << 24;

// Draws one tensor; floating draws happen in float32 (float64 stays float64) and are cast.
at::Tensor Draw(const common::TensorSpec& spec, const std::vector<int64_t>& shape, int dist_index,
                at::Generator& gen, const at::TensorOptions& device_opts) {
  const InitSpec& init = spec.init;
  at::ScalarType target = ToScalarType(spec.dtype);
  at::ScalarType work = target == at::kDouble ? at::kDouble : at::kFloat;
  auto opts = device_opts.dtype(work);
  at::Tensor x;
  switch (init.dist) {
    case InitSpec::Dist::kRandn:
      x = at::randn(shape, gen, opts);
      if (dist_index == 1) x = x * 4 + 1;
      if (dist_index == 2) x = x * 0.25 - 0.5;
      break;
    case InitSpec::Dist::kRand:
      x = at::rand(shape, gen, opts);
      if (dist_index == 1) x = x * x;
      if (dist_index == 2) x = 1 - x * x;
      break;
    case InitSpec::Dist::kUniform: {
      at::Tensor u = at::rand(shape, gen, opts);
      double span = init.high - init.low;
      if (dist_index == 0) x = u * span + init.low;
      if (dist_index == 1) x = u * u * span + init.low;
      if (dist_index == 2) x = init.high - u * u * span;
      break;
    }
    case InitSpec::Dist::kRandint: {
      auto lopts = device_opts.dtype(at::kLong);
      int64_t low = static_cast<int64_t>(init.low), high = static_cast<int64_t>(init.high);
      x = at::randint(low, high, shape, gen, lopts);
      if (dist_index == 1) {
        at::Tensor pick = at::randint(0, 4, shape, gen, lopts);
        x = at::where(pick == 0, at::full_like(x, low), at::where(pick == 1, at::full_like(x, high - 1), x));
      } else if (dist_index == 2) {
        x = at::randint(low, high, shape, gen, lopts);
      }
      if (init.scale == 1 && init.shift == 0) return x.to(target);
      x = x.to(work);
      break;
    }
    case InitSpec::Dist::kOnes:
      x = at::ones(shape, opts);
      break;
    case InitSpec::Dist::kZeros:
      x = at::zeros(shape, opts);
      break;
  }
  if (init.scale != 1) x = x * init.scale;
  if (init.shift != 0) x = x + init.shift;
  if (!common::IsFloating(spec.dtype)) x = spec.dtype == common::DType::kBool ? x != 0 : x.round();
  return x.to(target).contiguous();
}

/// Draws into `dst` (a contiguous slice): in place for float32/float64 draws, which need no cast
/// (one pass over the memory), through Draw and a copy otherwise.
void DrawInto(const common::TensorSpec& spec, at::Tensor dst, int dist_index, at::Generator& gen,
              const at::TensorOptions& device_opts) {
  const InitSpec& init = spec.init;
  bool in_place = (dst.scalar_type() == at::kFloat || dst.scalar_type() == at::kDouble) &&
                  init.dist != InitSpec::Dist::kRandint;
  if (!in_place) {
    dst.copy_(Draw(spec, {dst.numel()}, dist_index, gen, device_opts));
    return;
  }
  switch (init.dist) {
    case InitSpec::Dist::kRandn:
      dst.normal_(0, 1, gen);
      if (dist_index == 1) dst.mul_(4).add_(1);
      if (dist_index == 2) dst.mul_(0.25).sub_(0.5);
      break;
    case InitSpec::Dist::kRand:
      dst.uniform_(0, 1, gen);
      if (dist_index == 1) dst.square_();
      if (dist_index == 2) dst.square_().neg_().add_(1);
      break;
    case InitSpec::Dist::kUniform: {
      dst.uniform_(0, 1, gen);
      double span = init.high - init.low;
      if (dist_index == 0) dst.mul_(span).add_(init.low);
      if (dist_index == 1) dst.square_().mul_(span).add_(init.low);
      if (dist_index == 2) dst.square_().mul_(-span).add_(init.high);
      break;
    }
    case InitSpec::Dist::kOnes:
      dst.fill_(1);
      break;
    case InitSpec::Dist::kZeros:
      dst.zero_();
      break;
    case InitSpec::Dist::kRandint:
      break;
  }
  if (init.scale != 1) dst.mul_(init.scale);
  if (init.shift != 0) dst.add_(init.shift);
}

}  // namespace

Status GenerateInputsInto(const common::Task& task, std::string_view variant, uint64_t seed,
                          int distribution_index, TensorSet& inputs) {
  if (distribution_index < 0 || distribution_index >= kNumDistributions)
    return Status::InvalidArgument("distribution index " + std::to_string(distribution_index) +
                                   " not in [0, " + std::to_string(kNumDistributions) + ")");
  const common::Variant* v = task.FindVariant(variant);
  if (!v) return Status::NotFound("task " + task.id + " has no variant \"" + std::string(variant) + "\"");
  at::InferenceMode guard;
  for (size_t i = 0; i < task.inputs.size(); ++i) {
    const common::TensorSpec& spec = task.inputs[i];
    KFORGE_ASSIGN_OR_RETURN(std::vector<int64_t> shape, common::ResolveShape(spec, v->symbols));
    Tensor* dst = inputs.Find(spec.name);
    if (dst == nullptr || !dst->defined() || dst->dtype() != spec.dtype || dst->shape() != shape)
      return Status::InvalidArgument("task " + task.id + ": no buffer of the right shape for input \"" +
                                     spec.name + "\"");
    Device device = dst->device();
    if (device.is_cuda() && device.index >= CudaDeviceCount())
      return Status::Unavailable("no CUDA device " + device.ToString());
    try {
      auto opts = at::TensorOptions().device(ToTorchDevice(device));
      at::Generator gen =
          MakeGenerator(device, Mix(seed ^ Mix(i * 131 + static_cast<uint64_t>(distribution_index))));
      at::Tensor flat = Unwrap(*dst).view({-1});
      for (int64_t start = 0; start < flat.numel(); start += kDrawChunk) {
        int64_t n = std::min(kDrawChunk, flat.numel() - start);
        DrawInto(spec, flat.narrow(0, start, n), distribution_index, gen, opts);
      }
    } catch (const std::exception& e) {
      std::string msg = e.what();
      return Status::Unavailable("input " + spec.name + ": " + msg.substr(0, msg.find('\n')));
    }
  }
  return Status::Ok();
}

StatusOr<TensorSet> GenerateInputs(const common::Task& task, std::string_view variant, uint64_t seed,
                                   int distribution_index, Device device) {
  const common::Variant* v = task.FindVariant(variant);
  if (!v) return Status::NotFound("task " + task.id + " has no variant \"" + std::string(variant) + "\"");
  if (device.is_cuda() && device.index >= CudaDeviceCount())
    return Status::Unavailable("no CUDA device " + device.ToString());
  TensorSet out;
  for (const common::TensorSpec& spec : task.inputs) {
    KFORGE_ASSIGN_OR_RETURN(std::vector<int64_t> shape, common::ResolveShape(spec, v->symbols));
    KFORGE_ASSIGN_OR_RETURN(Tensor t, Empty(spec.dtype, shape, device, Fill{Fill::Kind::kByte, 0}));
    out.Set(spec.name, std::move(t));
  }
  KFORGE_RETURN_IF_ERROR(GenerateInputsInto(task, variant, seed, distribution_index, out));
  return out;
}

StatusOr<TensorSet> LoadTensors(const std::filesystem::path& file, std::string_view prefix, Device device) {
  KFORGE_ASSIGN_OR_RETURN(auto tensors, common::ReadSafetensors(file));
  TensorSet out;
  for (const auto& [name, t] : tensors) {
    if (name.rfind(prefix, 0) != 0) continue;
    auto tensor = Tensor::FromBytes(t.dtype, t.shape, t.data, device);
    if (!tensor.ok()) return tensor.status().WithContext(file.string() + ": " + name);
    out.Set(name.substr(prefix.size()), std::move(tensor).value());
  }
  return out;
}

StatusOr<TensorSet> AllocateOutputs(const common::Task& task, std::string_view variant, Device device,
                                    Fill fill) {
  const common::Variant* v = task.FindVariant(variant);
  if (!v) return Status::NotFound("task " + task.id + " has no variant \"" + std::string(variant) + "\"");
  TensorSet out;
  for (const common::TensorSpec& spec : task.outputs) {
    KFORGE_ASSIGN_OR_RETURN(std::vector<int64_t> shape, common::ResolveShape(spec, v->symbols));
    KFORGE_ASSIGN_OR_RETURN(Tensor t, Empty(spec.dtype, shape, device, fill));
    out.Set(spec.name, std::move(t));
  }
  return out;
}

}  // namespace kforge::reference
