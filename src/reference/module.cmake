if(KFORGE_WITH_TORCH)
  # kforge's own comparison and digest kernels (device_kernels.cu), built by nvcc for Ampere and
  # Hopper, with PTX for newer devices.
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
    set(CMAKE_CUDA_ARCHITECTURES 80-real 90-real 90-virtual)
  endif()
  set(CMAKE_CUDA_RUNTIME_LIBRARY Shared)
  enable_language(CUDA)
  kforge_module(reference DEPS kforge_common CUDA::cudart PRIVATE_DEPS kforge::torch)
  target_sources(kforge_reference PRIVATE ${PROJECT_SOURCE_DIR}/src/reference/device_kernels.cu)
  set_target_properties(kforge_reference PROPERTIES CUDA_STANDARD 17)
  # KFORGE_TORCH_PYTHON: the interpreter whose torch this build links; packages must come from it.
  target_compile_definitions(kforge_reference PUBLIC KFORGE_WITH_TORCH KFORGE_TORCH_PYTHON="${KFORGE_PYTHON}")
endif()
