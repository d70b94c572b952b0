# Locates LibTorch inside the pip torch package and defines the imported target kforge::torch.
# LibTorch's own CMake config probes for GPUs and CUDA compilers the runner does not need, so the
# target is assembled from the package layout instead. Python comes from KFORGE_PYTHON, else the
# project venv, else python3 on PATH.
if(NOT KFORGE_PYTHON)
  if(EXISTS ${PROJECT_SOURCE_DIR}/.venv/bin/python3)
    set(KFORGE_PYTHON ${PROJECT_SOURCE_DIR}/.venv/bin/python3)
  else()
    find_program(KFORGE_PYTHON python3)
  endif()
endif()
execute_process(
  COMMAND ${KFORGE_PYTHON} -c "import os, torch; print(os.path.dirname(torch.__file__)); print(torch.__version__.split('+')[0]); print(int(torch._C._GLIBCXX_USE_CXX11_ABI))"
  OUTPUT_VARIABLE torch_info OUTPUT_STRIP_TRAILING_WHITESPACE
  RESULT_VARIABLE torch_rc ERROR_QUIET)
if(NOT torch_rc EQUAL 0)
  message(WARNING "kforge: no torch in ${KFORGE_PYTHON}; building without the reference runner")
  set(KFORGE_WITH_TORCH OFF)
  return()
endif()
string(REPLACE "\n" ";" torch_info "${torch_info}")
list(GET torch_info 0 KFORGE_TORCH_DIR)
list(GET torch_info 1 KFORGE_TORCH_VERSION)
list(GET torch_info 2 torch_abi)

add_library(kforge_torch INTERFACE)
add_library(kforge::torch ALIAS kforge_torch)
target_include_directories(kforge_torch SYSTEM INTERFACE
  ${KFORGE_TORCH_DIR}/include ${KFORGE_TORCH_DIR}/include/torch/csrc/api/include)
target_compile_definitions(kforge_torch INTERFACE _GLIBCXX_USE_CXX11_ABI=${torch_abi})
set(torch_libs torch torch_cpu c10)
if(EXISTS ${KFORGE_TORCH_DIR}/lib/libtorch_cuda.so)
  list(APPEND torch_libs torch_cuda c10_cuda)
endif()
foreach(lib IN LISTS torch_libs)
  list(APPEND torch_paths ${KFORGE_TORCH_DIR}/lib/lib${lib}.so)
endforeach()
# --no-as-needed keeps libtorch_cuda loaded so its CUDA kernels register even though no symbol is used.
# libstdc++ goes first: libtorch.so exports its own std::filesystem copies, which must not
# interpose on the system library's (they crash when called from kforge).
target_link_libraries(kforge_torch INTERFACE "-Wl,--push-state,--no-as-needed" stdc++ ${torch_paths}
  "-Wl,--pop-state" "-Wl,-rpath,${KFORGE_TORCH_DIR}/lib")
message(STATUS "kforge: LibTorch ${KFORGE_TORCH_VERSION} from ${KFORGE_TORCH_DIR}")
