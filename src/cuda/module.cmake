kforge_module(cuda DEPS kforge_common CUDA::cudart CUDA::nvrtc)

# Compile-latency benchmark (scripts/bench-compile.sh runs it).
add_executable(compile_bench ${PROJECT_SOURCE_DIR}/benchmarks/compile_bench.cc)
target_link_libraries(compile_bench PRIVATE kforge_cuda)
set_target_properties(compile_bench PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR})
