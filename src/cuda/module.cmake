kforge_module(cuda DEPS kforge_common CUDA::cudart CUDA::nvrtc)
