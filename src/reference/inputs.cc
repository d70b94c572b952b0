// Seeded input generation, golden-file loading and candidate output buffers.
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/detail/CUDAHooksInterface.h>

#include <cstdint>

#include "kforge/common/hash.h"
#include "kforge/common/safetensors.h"
#include "kforge/reference/compare.h"
#include "kforge/reference/runner.h"
#include "reference/device_kernels.h"
#include "reference/torch_util.h"

namespace kforge::reference {
namespace {

using common::SplitMix64;

using common::InitSpec;

at::Generator MakeGenerator(Device device, uint64_t seed) {
  if (device.is_cuda()) {
    at::Generator gen =
        at::detail::getCUDAHooks().getNewGenerator(static_cast<c10::DeviceIndex>(device.index));
    gen.set_current_seed(seed);
    return gen;
  }
  return at::detail::createCPUGenerator(seed);
}

/// Elements drawn at a time: in place (float32/float64, no temporaries) and through a cast copy
/// (temporaries of a few hundred MiB whatever the input's size).
constexpr int64_t kDrawChunkInPlace = int64_t{1} << 26;
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

/// True when DrawInto writes `spec`'s values straight into a tensor of `type` (no cast, no copy).
bool DrawsInPlace(const common::TensorSpec& spec, at::ScalarType type) {
  return (type == at::kFloat || type == at::kDouble) && spec.init.dist != InitSpec::Dist::kRandint;
}

/// Draws into `dst` (a contiguous slice): in place for float32/float64 draws, which need no cast
/// (one pass over the memory), through Draw and a copy otherwise.
void DrawInto(const common::TensorSpec& spec, at::Tensor dst, int dist_index, at::Generator& gen,
              const at::TensorOptions& device_opts) {
  const InitSpec& init = spec.init;
  if (!DrawsInPlace(spec, dst.scalar_type())) {
    dst.copy_(Draw(spec, {dst.numel()}, dist_index, gen, device_opts));
    return;
  }
  // Each transform is one pass: out = b + a * x (add_out) or b + a * x * x (addcmul_out).
  auto affine = [&dst](double a, double b) { at::add_out(dst, at::scalar_tensor(b, dst.options()), dst, a); };
  auto square = [&dst](double a, double b) {
    at::addcmul_out(dst, at::scalar_tensor(b, dst.options()), dst, dst, a);
  };
  switch (init.dist) {
    case InitSpec::Dist::kRandn:
      dst.normal_(0, 1, gen);
      if (dist_index == 1) affine(4, 1);
      if (dist_index == 2) affine(0.25, -0.5);
      break;
    case InitSpec::Dist::kRand:
      dst.uniform_(0, 1, gen);
      if (dist_index == 1) square(1, 0);
      if (dist_index == 2) square(-1, 1);
      break;
    case InitSpec::Dist::kUniform: {
      dst.uniform_(0, 1, gen);
      double span = init.high - init.low;
      if (dist_index == 0) affine(span, init.low);
      if (dist_index == 1) square(span, init.low);
      if (dist_index == 2) square(-span, init.high);
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
  if (init.scale != 1 || init.shift != 0) affine(init.scale, init.shift);
}

/// The draw of `spec` under distribution `dist_index` as one kforge kernel writes it, or nullopt when
/// the kernel cannot (not float32, not randn/rand/uniform). The transforms of DrawInto, folded into
/// one multiply-add: same distributions, one pass.
std::optional<kernels::DrawSpec> KernelDraw(const common::TensorSpec& spec, int dist_index) {
  if (spec.dtype != common::DType::kFloat32) return std::nullopt;
  const InitSpec& init = spec.init;
  kernels::DrawSpec draw;
  double mul = 1, add = 0;
  switch (init.dist) {
    case InitSpec::Dist::kRandn:
      draw.normal = true;
      if (dist_index == 1) mul = 4, add = 1;
      if (dist_index == 2) mul = 0.25, add = -0.5;
      break;
    case InitSpec::Dist::kRand:
      draw.normal = false;
      draw.square = dist_index != 0;
      if (dist_index == 2) mul = -1, add = 1;
      break;
    case InitSpec::Dist::kUniform: {
      draw.normal = false;
      draw.square = dist_index != 0;
      double span = init.high - init.low;
      mul = dist_index == 2 ? -span : span;
      add = dist_index == 2 ? init.high : init.low;
      break;
    }
    default:
      return std::nullopt;
  }
  draw.mul = static_cast<float>(mul * init.scale);
  draw.add = static_cast<float>(add * init.scale + init.shift);
  return draw;
}

/// Draws `t` (a contiguous float32 CUDA tensor) with kforge's kernel and returns its digest.
StatusOr<uint64_t> DrawWithKernel(at::Tensor& t, uint64_t seed, const kernels::DrawSpec& draw) {
  return DigestByKernel(t, "draw", [&](unsigned long long* partials, cudaStream_t stream) {
    return kernels::LaunchDrawFloat32(t.data_ptr<float>(), t.numel(), seed, draw, partials, stream);
  });
}

/// `spec` with its init's factor (KernelBench's `x * torch.rand(())`) drawn for `seed` and folded into
/// its scale and shift: one number per input draw, the same on every device.
common::TensorSpec WithDrawnFactor(const common::TensorSpec& spec, uint64_t seed) {
  common::TensorSpec out = spec;
  if (!spec.init.factor || !common::IsFloating(spec.dtype)) return out;
  const double u = static_cast<double>(SplitMix64(seed ^ 0xF4C7F4C7F4C7F4C7ull) >> 11) * 0x1.0p-53;
  const double factor = spec.init.factor->low + (spec.init.factor->high - spec.init.factor->low) * u;
  out.init.scale *= factor;
  out.init.shift *= factor;
  out.init.factor.reset();
  return out;
}

/// InvalidArgument when `spec` has a structure and its last two dimensions differ in this variant.
Status CheckStructure(const common::TensorSpec& spec, const std::vector<int64_t>& shape) {
  if (spec.structure == common::Structure::kNone) return Status::Ok();
  if (shape.size() >= 2 && shape[shape.size() - 1] == shape[shape.size() - 2]) return Status::Ok();
  return Status::InvalidArgument("input " + spec.name + ": the \"" +
                                 std::string(common::kStructureNames.Name(spec.structure)) +
                                 "\" structure needs its last two dimensions equal");
}

/// Gives a drawn input its structure over the last two dimensions, as get_inputs does: tril, triu, or
/// (x + x^T) / 2.
void ApplyStructure(common::Structure structure, at::Tensor t) {
  switch (structure) {
    case common::Structure::kNone:
      return;
    case common::Structure::kLower:
      t.tril_();
      return;
    case common::Structure::kUpper:
      t.triu_();
      return;
    case common::Structure::kSymmetric:
      t.copy_((t + t.mT()) * 0.5);
      return;
  }
}

}  // namespace

Status GenerateInputsInto(const common::Task& task, std::string_view variant, uint64_t seed,
                          int distribution_index, TensorSet& inputs,
                          std::map<std::string, uint64_t>* digests) {
  if (distribution_index < 0 || distribution_index >= kNumDistributions)
    return Status::InvalidArgument("distribution index " + std::to_string(distribution_index) +
                                   " not in [0, " + std::to_string(kNumDistributions) + ")");
  const common::Variant* v = task.FindVariant(variant);
  if (!v) return Status::NotFound("task " + task.id + " has no variant \"" + std::string(variant) + "\"");
  at::InferenceMode guard;
  for (size_t i = 0; i < task.inputs.size(); ++i) {
    const uint64_t tensor_seed = SplitMix64(seed ^ SplitMix64(i * 131 + static_cast<uint64_t>(distribution_index)));
    const common::TensorSpec spec = WithDrawnFactor(task.inputs[i], tensor_seed);
    KFORGE_ASSIGN_OR_RETURN(std::vector<int64_t> shape, common::ResolveShape(spec, v->symbols));
    Tensor* dst = inputs.Find(spec.name);
    if (dst == nullptr || !dst->defined() || dst->dtype() != spec.dtype || dst->shape() != shape)
      return Status::InvalidArgument("task " + task.id + ": no buffer of the right shape for input \"" +
                                     spec.name + "\"");
    Device device = dst->device();
    if (device.is_cuda() && device.index >= CudaDeviceCount())
      return Status::Unavailable("no CUDA device " + device.ToString());
    KFORGE_RETURN_IF_ERROR(CheckStructure(spec, shape));
    try {
      at::Tensor flat = Unwrap(*dst).view({-1});
      std::optional<kernels::DrawSpec> draw = KernelDraw(spec, distribution_index);
      if (draw && flat.is_cuda() && reinterpret_cast<uintptr_t>(flat.data_ptr()) % 8 == 0) {
        KFORGE_ASSIGN_OR_RETURN(uint64_t digest, DrawWithKernel(flat, tensor_seed, *draw));
        if (spec.structure == common::Structure::kNone) {
          if (digests) (*digests)[spec.name] = digest;
          continue;
        }
      } else {
        auto opts = at::TensorOptions().device(ToTorchDevice(device));
        at::Generator gen = MakeGenerator(device, tensor_seed);
        const int64_t chunk = DrawsInPlace(spec, flat.scalar_type()) ? kDrawChunkInPlace : kDrawChunk;
        for (int64_t start = 0; start < flat.numel(); start += chunk) {
          int64_t n = std::min(chunk, flat.numel() - start);
          DrawInto(spec, flat.narrow(0, start, n), distribution_index, gen, opts);
        }
      }
      ApplyStructure(spec.structure, Unwrap(*dst));
      if (digests && flat.is_cuda()) {
        KFORGE_ASSIGN_OR_RETURN(uint64_t digest, Digest(*dst));
        (*digests)[spec.name] = digest;
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
