kforge_module(export DEPS kforge_common kforge_llm kforge_dataset)

# Exported KernelBench files run a plan's library ops with the worker's own code: the text of
# src/reference/library_op_calls.inc, as a string constant (export/library_op_calls_text.h).
set(op_calls ${PROJECT_SOURCE_DIR}/src/reference/library_op_calls.inc)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${op_calls})
file(READ ${op_calls} KFORGE_OP_CALLS_TEXT)
file(CONFIGURE OUTPUT ${CMAKE_BINARY_DIR}/generated/export/library_op_calls_text.h @ONLY CONTENT
"// Generated from src/reference/library_op_calls.inc by src/export/module.cmake.
#pragma once

#include <string_view>

namespace kforge::exporter::internal {

inline constexpr std::string_view kLibraryOpCalls = R\"kforge_op_calls(@KFORGE_OP_CALLS_TEXT@)kforge_op_calls\";

}  // namespace kforge::exporter::internal
")
target_include_directories(kforge_export PRIVATE ${CMAKE_BINARY_DIR}/generated)

# Scale benchmark: 1M synthetic records through `kforge export` and `kforge report` (wall time, peak RSS).
add_executable(export_scale_bench ${PROJECT_SOURCE_DIR}/benchmarks/export_scale.cc)
target_include_directories(export_scale_bench PRIVATE ${PROJECT_SOURCE_DIR}/tests)
target_link_libraries(export_scale_bench PRIVATE kforge_export)
target_compile_definitions(export_scale_bench PRIVATE KFORGE_BINARY="$<TARGET_FILE:kforge>")
