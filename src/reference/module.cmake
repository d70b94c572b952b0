if(KFORGE_WITH_TORCH)
  kforge_module(reference DEPS kforge_common CUDA::cudart PRIVATE_DEPS kforge::torch)
  # KFORGE_TORCH_PYTHON: the interpreter whose torch this build links; packages must come from it.
  target_compile_definitions(kforge_reference PUBLIC KFORGE_WITH_TORCH KFORGE_TORCH_PYTHON="${KFORGE_PYTHON}")
endif()
