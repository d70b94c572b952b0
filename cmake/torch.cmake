# Locates LibTorch through the pip torch package (torch.utils.cmake_prefix_path).
# Python is taken from KFORGE_PYTHON, else the project venv, else python3 on PATH.
if(NOT KFORGE_PYTHON)
  if(EXISTS ${PROJECT_SOURCE_DIR}/.venv/bin/python3)
    set(KFORGE_PYTHON ${PROJECT_SOURCE_DIR}/.venv/bin/python3)
  else()
    find_program(KFORGE_PYTHON python3)
  endif()
endif()
execute_process(
  COMMAND ${KFORGE_PYTHON} -c "import torch, torch.utils; print(torch.utils.cmake_prefix_path)"
  OUTPUT_VARIABLE KFORGE_TORCH_PREFIX OUTPUT_STRIP_TRAILING_WHITESPACE
  RESULT_VARIABLE torch_rc ERROR_QUIET)
if(NOT torch_rc EQUAL 0)
  message(WARNING "kforge: no torch in ${KFORGE_PYTHON}; building without the reference runner")
  set(KFORGE_WITH_TORCH OFF)
  return()
endif()
list(APPEND CMAKE_PREFIX_PATH ${KFORGE_TORCH_PREFIX})
# LibTorch's CMake config looks for CUDA pieces the runner does not need; keep it quiet.
set(CAFFE2_USE_CUDNN OFF)
find_package(Torch QUIET)
if(NOT Torch_FOUND)
  message(WARNING "kforge: torch found but LibTorch's CMake config failed; building without the reference runner")
  set(KFORGE_WITH_TORCH OFF)
  return()
endif()
message(STATUS "kforge: LibTorch ${Torch_VERSION} from ${KFORGE_TORCH_PREFIX}")
