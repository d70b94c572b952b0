# libkforge_worker.so: the GPU worker's body (GPU checks, timing, LibTorch references), loaded by `kforge worker`.
# Only its entry point is exported; the static modules inside stay private to it.
if(TARGET kforge_reference)
  kforge_module(worker SHARED DEPS kforge_bench kforge_verify kforge_reference kforge_cuda kforge_common)
  set_target_properties(kforge_worker PROPERTIES
    LIBRARY_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}
    CXX_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON)
  target_link_options(kforge_worker PRIVATE "-Wl,--exclude-libs,ALL" "-Wl,--no-undefined")
endif()
