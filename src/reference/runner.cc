// Reference programs: torch.export packages run by NativeRT, with parameters kept on the device.
#include "kforge/reference/runner.h"

#include <ATen/Context.h>
#include <ATen/detail/CUDAHooksInterface.h>
#include <c10/core/InferenceMode.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <c10/util/Logging.h>
#include <torch/nativert/ModelRunnerHandle.h>
#include <torch/version.h>
#include <cstdint>

#include <mutex>

#include "kforge/common/safetensors.h"
#include "reference/torch_util.h"

namespace kforge::reference {

std::string LibTorchVersion() { return TORCH_VERSION; }

int CudaDeviceCount() {
  try {
    if (!at::detail::getCUDAHooks().hasCUDA()) return 0;
    return at::detail::getCUDAHooks().deviceCount();
  } catch (const c10::Error&) {
    return 0;
  }
}

struct ReferenceProgram::Impl {
  std::string task_id;
  std::string variant;
  Device device;
  std::vector<common::TensorSpec> inputs;
  std::vector<common::TensorSpec> outputs;
  std::map<std::string, std::vector<int64_t>> shapes;
  TensorSet params;
  std::mutex mu;
  std::unique_ptr<torch::nativert::ModelRunnerHandle> runner;
};

ReferenceProgram::ReferenceProgram(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ReferenceProgram::~ReferenceProgram() = default;
const TensorSet& ReferenceProgram::params() const { return impl_->params; }
Device ReferenceProgram::device() const { return impl_->device; }
const std::string& ReferenceProgram::variant() const { return impl_->variant; }

namespace {

std::string ShapeText(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

}  // namespace

StatusOr<std::unique_ptr<ReferenceProgram>> ReferenceProgram::Load(const common::Task& task,
                                                                   std::string_view variant, Device device) {
  // LibTorch reads TORCH_CPP_LOG_LEVEL only when asked to (a library loaded late misses it otherwise).
  static std::once_flag logging_once;
  std::call_once(logging_once, [] { c10::initLogging(); });
  std::string where = "task " + task.id;
  if (!task.FindVariant(variant))
    return Status::NotFound(where + ": no variant \"" + std::string(variant) + "\"");
  if (device.is_cuda() && device.index >= CudaDeviceCount())
    return Status::Unavailable(where + ": no CUDA device " + device.ToString());
  if (device.is_cuda()) {
    // fp32 references are exact fp32: TF32 convolutions (cuDNN's default) and matmuls are ~1e-3 off.
    at::globalContext().setAllowTF32CuDNN(false);
    at::globalContext().setAllowTF32CuBLAS(false);
  }
  auto by_variant = task.artifacts.packages.find(std::string(variant));
  if (by_variant == task.artifacts.packages.end() ||
      !by_variant->second.count(std::string(device.KindName())))
    return Status::NotFound(where + ": no " + std::string(device.KindName()) + " package for variant \"" +
                            std::string(variant) + "\" (run `kforge tasks build`)");
  std::filesystem::path package = by_variant->second.at(std::string(device.KindName()));
  std::error_code ec;
  if (!std::filesystem::is_regular_file(package, ec))
    return Status::NotFound(where + ": package " + package.string() + " missing (run `kforge tasks build`)");

  auto impl = std::make_unique<Impl>();
  impl->task_id = task.id;
  impl->variant = std::string(variant);
  impl->device = device;
  impl->inputs = task.inputs;
  impl->outputs = task.outputs;
  KFORGE_ASSIGN_OR_RETURN(impl->shapes, common::ResolveShapes(task, variant));

  if (!task.params.empty()) {
    if (!task.artifacts.params) return Status::NotFound(where + ": has params but no artifacts.params file");
    KFORGE_ASSIGN_OR_RETURN(auto stored, common::ReadSafetensors(*task.artifacts.params));
    for (const common::TensorSpec& spec : task.params) {
      auto it = stored.find(spec.name);
      if (it == stored.end())
        return Status::NotFound(task.artifacts.params->string() + ": no tensor \"" + spec.name + "\"");
      const std::vector<int64_t>& want = impl->shapes.at(spec.name);
      if (it->second.dtype != spec.dtype || it->second.shape != want)
        return Status::InvalidArgument(task.artifacts.params->string() + ": \"" + spec.name + "\" is " +
                                       std::string(common::DTypeName(it->second.dtype)) +
                                       ShapeText(it->second.shape) + ", task.json says " +
                                       std::string(common::DTypeName(spec.dtype)) + ShapeText(want));
      KFORGE_ASSIGN_OR_RETURN(Tensor t, Tensor::FromBytes(spec.dtype, want, it->second.data, device));
      impl->params.Set(spec.name, std::move(t));
    }
  }
  try {
    impl->runner = std::make_unique<torch::nativert::ModelRunnerHandle>(package.string(), "forward");
  } catch (const std::exception& e) {
    std::string msg = e.what();
    return Status::Internal(where + ": cannot load " + package.string() + ": " +
                            msg.substr(0, msg.find('\n')));
  }
  return std::unique_ptr<ReferenceProgram>(new ReferenceProgram(std::move(impl)));
}

/// Checks the inputs and runs the program; returns its outputs as LibTorch gives them.
StatusOr<std::vector<at::Tensor>> ReferenceProgram::Invoke(const TensorSet& inputs) {
  Impl& p = *impl_;
  std::string where = "task " + p.task_id;
  std::vector<c10::IValue> args;
  for (const common::TensorSpec& spec : p.inputs) {
    const Tensor* t = inputs.Find(spec.name);
    if (!t || !t->defined()) return Status::InvalidArgument(where + ": input \"" + spec.name + "\" missing");
    if (t->dtype() != spec.dtype || t->shape() != p.shapes.at(spec.name) || !(t->device() == p.device))
      return Status::InvalidArgument(where + ": input \"" + spec.name + "\" is " +
                                     std::string(common::DTypeName(t->dtype())) + ShapeText(t->shape()) +
                                     " on " + t->device().ToString() + ", expected " +
                                     std::string(common::DTypeName(spec.dtype)) +
                                     ShapeText(p.shapes.at(spec.name)) + " on " + p.device.ToString());
    args.emplace_back(Unwrap(*t));
  }
  for (const auto& [name, t] : p.params.items()) args.emplace_back(Unwrap(t));

  std::vector<at::Tensor> results;
  try {
    std::lock_guard<std::mutex> lock(p.mu);
    c10::InferenceMode guard;
    c10::IValue out = p.runner->run(args, {});
    if (out.isTensor()) {
      results.push_back(out.toTensor());
    } else if (out.isTuple()) {
      for (const c10::IValue& v : out.toTupleRef().elements()) {
        if (!v.isTensor())
          return Status::Internal(where + ": reference returned a non-tensor " + v.tagKind());
        results.push_back(v.toTensor());
      }
    } else if (out.isList()) {
      for (const c10::IValue& v : out.toListRef()) {
        if (!v.isTensor())
          return Status::Internal(where + ": reference returned a non-tensor " + v.tagKind());
        results.push_back(v.toTensor());
      }
    } else {
      return Status::Internal(where + ": reference returned " + out.tagKind());
    }
  } catch (const c10::OutOfMemoryError& e) {
    std::string msg = e.what();
    return Status::ResourceExhausted(where + ": the reference ran out of device memory: " +
                                     msg.substr(0, msg.find('\n')));
  } catch (const std::exception& e) {
    std::string msg = e.what();
    return Status::Internal(where + ": reference failed: " + msg.substr(0, msg.find('\n')));
  }
  return results;
}

Status ReferenceProgram::Execute(const TensorSet& inputs) { return Invoke(inputs).status(); }

StatusOr<TensorSet> ReferenceProgram::Run(const TensorSet& inputs) {
  Impl& p = *impl_;
  std::string where = "task " + p.task_id;
  KFORGE_ASSIGN_OR_RETURN(std::vector<at::Tensor> results, Invoke(inputs));
  if (results.size() != p.outputs.size())
    return Status::Internal(where + ": reference returned " + std::to_string(results.size()) +
                            " outputs, task.json lists " + std::to_string(p.outputs.size()));
  TensorSet out;
  for (size_t i = 0; i < results.size(); ++i) {
    const common::TensorSpec& spec = p.outputs[i];
    Tensor t = Wrap(results[i]);
    std::optional<common::DType> dtype = FromScalarType(results[i].scalar_type());
    if (!dtype || *dtype != spec.dtype || t.shape() != p.shapes.at(spec.name))
      return Status::Internal(where + ": output " + spec.name + " is " +
                              std::string(c10::toString(results[i].scalar_type())) + ShapeText(t.shape()) +
                              ", task.json says " + std::string(common::DTypeName(spec.dtype)) +
                              ShapeText(p.shapes.at(spec.name)));
    out.Set(spec.name, std::move(t));
  }
  return out;
}

struct CudaStreamScope::Impl {
  Impl(cudaStream_t stream, int device) : guard(c10::cuda::getStreamFromExternal(stream, device)) {}
  c10::cuda::CUDAStreamGuard guard;
};

CudaStreamScope::CudaStreamScope(cudaStream_t stream, int device)
    : impl_(std::make_unique<Impl>(stream, device)) {}

CudaStreamScope::~CudaStreamScope() = default;

}  // namespace kforge::reference
