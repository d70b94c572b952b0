# The op code of plan v2 `op` steps (library_op_calls.inc) is also a text that exported KernelBench
# files carry, so that they run a plan's library ops with the worker's own code: the public header
# kforge/reference/library_op_calls_text.h, generated here without LibTorch, is the one part of
# reference that export uses (target kforge_reference_op_calls_text).
set(op_calls ${PROJECT_SOURCE_DIR}/src/reference/library_op_calls.inc)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${op_calls})
file(READ ${op_calls} KFORGE_OP_CALLS_TEXT)
file(CONFIGURE OUTPUT ${PROJECT_BINARY_DIR}/generated/reference/kforge/reference/library_op_calls_text.h @ONLY CONTENT
"// Generated from src/reference/library_op_calls.inc by src/reference/module.cmake.
#pragma once

#include <string_view>

namespace kforge::reference {

/// The text of library_op_calls.inc: the C++ of every library op a plan may call, against ATen.
inline constexpr std::string_view kLibraryOpCalls = R\"kforge_op_calls(@KFORGE_OP_CALLS_TEXT@)kforge_op_calls\";

}  // namespace kforge::reference
")
add_library(kforge_reference_op_calls_text INTERFACE)
target_include_directories(kforge_reference_op_calls_text INTERFACE ${PROJECT_BINARY_DIR}/generated/reference)

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
