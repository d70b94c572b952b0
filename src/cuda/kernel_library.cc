// CUBIN loading through cudaLibraryLoadData.
#include "kforge/cuda/kernel_library.h"

#include "kforge/cuda/check.h"

namespace kforge::cuda {

StatusOr<std::unique_ptr<KernelLibrary>> KernelLibrary::Load(std::string_view cubin) {
  cudaLibrary_t library = nullptr;
  KFORGE_CUDA_RETURN_IF_ERROR(
      cudaLibraryLoadData(&library, cubin.data(), nullptr, nullptr, 0, nullptr, nullptr, 0));
  return std::unique_ptr<KernelLibrary>(new KernelLibrary(library));
}

KernelLibrary::~KernelLibrary() { cudaLibraryUnload(library_); }

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
