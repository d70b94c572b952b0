# The parent side of verification; the GPU side is the worker library (src/worker), loaded at run time.
kforge_module(verify DEPS kforge_common kforge_cuda PRIVATE_DEPS ${CMAKE_DL_LIBS})
