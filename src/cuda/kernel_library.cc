// CUBIN loading through cudaLibraryLoadData, and the image of its writable globals at load.
#include "kforge/cuda/kernel_library.h"

#include "cuda/cubin_globals.h"
#include "kforge/cuda/check.h"

namespace kforge::cuda {

StatusOr<std::unique_ptr<KernelLibrary>> KernelLibrary::Load(std::string_view cubin) {
  cudaLibrary_t library = nullptr;
  KFORGE_CUDA_RETURN_IF_ERROR(
      cudaLibraryLoadData(&library, cubin.data(), nullptr, nullptr, 0, nullptr, nullptr, 0));
  std::unique_ptr<KernelLibrary> loaded(new KernelLibrary(library));
  KFORGE_RETURN_IF_ERROR(loaded->SnapshotGlobals(cubin));
  return loaded;
}

KernelLibrary::~KernelLibrary() {
  if (image_device_) cudaFree(image_device_);
  cudaLibraryUnload(library_);
}

Status KernelLibrary::SnapshotGlobals(std::string_view cubin) {
  StatusOr<std::vector<CubinGlobal>> found = CubinGlobals(cubin);
  if (!found.ok()) return Status::Internal(found.status().message());
  uint64_t total = 0;
  for (const CubinGlobal& g : *found) total += g.bytes;
  if (total > kMaxModuleGlobalBytes)
    return Status::InvalidArgument("module-scope variables take " + std::to_string(total) +
                                   " bytes, over the cap of " + std::to_string(kMaxModuleGlobalBytes) +
                                   " (each is restored before every run)");
  image_.resize(total);
  for (const CubinGlobal& g : *found) {
    void* device = nullptr;
    size_t bytes = 0;
    if (cudaLibraryGetGlobal(&device, &bytes, library_, g.name.c_str()) != cudaSuccess) {
      cudaGetLastError();  // not found as a plain global: a __managed__ one
      KFORGE_CUDA_RETURN_IF_ERROR(cudaLibraryGetManaged(&device, &bytes, library_, g.name.c_str()));
    }
    if (bytes != g.bytes)
      return Status::Internal("global " + g.name + ": " + std::to_string(bytes) + " bytes loaded, " +
                              std::to_string(g.bytes) + " in the CUBIN");
    Global global{device, globals_.empty() ? 0 : globals_.back().offset + globals_.back().bytes, g.bytes};
    KFORGE_CUDA_RETURN_IF_ERROR(cudaMemcpy(image_.data() + global.offset, device, bytes, cudaMemcpyDefault));
    globals_.push_back(global);
  }
  // A device copy of the image: a restore is then a device-to-device copy, microseconds even at the cap.
  if (!image_.empty()) {
    KFORGE_CUDA_RETURN_IF_ERROR(cudaMalloc(&image_device_, image_.size()));
    KFORGE_CUDA_RETURN_IF_ERROR(cudaMemcpy(image_device_, image_.data(), image_.size(), cudaMemcpyHostToDevice));
  }
  return Status::Ok();
}

Status KernelLibrary::RestoreGlobals(cudaStream_t stream) const {
  for (const Global& g : globals_)
    KFORGE_CUDA_RETURN_IF_ERROR(
        cudaMemcpyAsync(g.device, static_cast<uint8_t*>(image_device_) + g.offset, g.bytes, cudaMemcpyDefault, stream));
  return Status::Ok();
}

StatusOr<void*> KernelLibrary::GlobalAddress(const std::string& name) const {
  void* device = nullptr;
  size_t bytes = 0;
  if (cudaLibraryGetGlobal(&device, &bytes, library_, name.c_str()) != cudaSuccess) {
    cudaGetLastError();
    return Status::NotFound("no global with the symbol \"" + name + "\" in the CUBIN");
  }
  return device;
}

StatusOr<cudaKernel_t> KernelLibrary::Kernel(const std::string& name) const {
  cudaKernel_t kernel = nullptr;
  cudaError_t error = cudaLibraryGetKernel(&kernel, library_, name.c_str());
  if (error != cudaSuccess) {
    cudaGetLastError();
    return Status::NotFound("no kernel with the symbol \"" + name + "\" in the CUBIN");
  }
  return kernel;
}

StatusOr<std::vector<size_t>> KernelLibrary::ParamSizes(cudaKernel_t kernel) const {
  std::vector<size_t> sizes;
  for (size_t index = 0; index < 1024; ++index) {
    size_t offset = 0, size = 0;
    if (cudaFuncGetParamInfo(reinterpret_cast<const void*>(kernel), index, &offset, &size) != cudaSuccess) {
      cudaGetLastError();  // past the last parameter: a non-sticky error
      break;
    }
    sizes.push_back(size);
  }
  return sizes;
}

}  // namespace kforge::cuda
