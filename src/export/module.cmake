kforge_module(export DEPS kforge_common kforge_dataset)

# Exported KernelBench files run a plan's library ops with the worker's own code, whose text reference
# generates (src/reference/module.cmake).
target_link_libraries(kforge_export PRIVATE kforge_reference_op_calls_text)

# Scale benchmark: 1M synthetic records through `kforge export` and `kforge report` (wall time, peak RSS).
add_executable(export_scale_bench EXCLUDE_FROM_ALL ${PROJECT_SOURCE_DIR}/benchmarks/export_scale.cc)
target_include_directories(export_scale_bench PRIVATE ${PROJECT_SOURCE_DIR}/tests)
target_link_libraries(export_scale_bench PRIVATE kforge_export)
target_compile_definitions(export_scale_bench PRIVATE KFORGE_BINARY="$<TARGET_FILE:kforge>")
