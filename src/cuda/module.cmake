kforge_module(cuda DEPS kforge_common CUDA::cudart CUDA::nvrtc)

# The process NVRTC compiles run in (src/cuda/nvrtc_helper.h); found next to the running program,
# else at its build path.
add_executable(kforge_nvrtc ${PROJECT_SOURCE_DIR}/src/cuda/helper/main.cc)
target_include_directories(kforge_nvrtc PRIVATE ${PROJECT_BINARY_DIR}/fences/cuda/private)
target_link_libraries(kforge_nvrtc PRIVATE kforge_cuda)
set_target_properties(kforge_nvrtc PROPERTIES OUTPUT_NAME kforge-nvrtc RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR})
target_compile_definitions(kforge_cuda PRIVATE KFORGE_NVRTC_HELPER="$<TARGET_FILE:kforge_nvrtc>")

# Compile-latency benchmark (scripts/bench-compile.sh runs it).
add_executable(compile_bench EXCLUDE_FROM_ALL ${PROJECT_SOURCE_DIR}/benchmarks/compile_bench.cc)
target_link_libraries(compile_bench PRIVATE kforge_cuda)
set_target_properties(compile_bench PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR})
add_dependencies(compile_bench kforge_nvrtc)
