# kforge_module(NAME [SHARED] DEPS ...): a library (static unless SHARED) from src/NAME/*.cc, its public
# headers in include/kforge/NAME/.
#
# Fences: the module's sources see their own src/NAME/ (as "NAME/x.h") and the public headers of the
# module itself and of the modules it links (as "kforge/DEP/x.h"), nothing else of src/ or include/,
# so a private header of another module, or a public one of a module not linked, does not compile.
# Each module gets folders of links under the build tree that hold only its own parts.
# -Werror=switch: a switch over a closed set (an enum class, handled without `default`) that misses a
# value does not compile.
function(kforge_module name)
  cmake_parse_arguments(ARG "SHARED" "" "DEPS;PRIVATE_DEPS" ${ARGN})
  file(GLOB srcs CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/src/${name}/*.cc)
  list(FILTER srcs EXCLUDE REGEX ".*/main\\.cc$")
  if(ARG_SHARED)
    add_library(kforge_${name} SHARED ${srcs})
  else()
    add_library(kforge_${name} STATIC ${srcs})
  endif()
  set(fence ${PROJECT_BINARY_DIR}/fences/${name})
  file(MAKE_DIRECTORY ${fence}/private ${fence}/public/kforge)
  file(CREATE_LINK ${PROJECT_SOURCE_DIR}/src/${name} ${fence}/private/${name} SYMBOLIC)
  if(EXISTS ${PROJECT_SOURCE_DIR}/include/kforge/${name})
    file(CREATE_LINK ${PROJECT_SOURCE_DIR}/include/kforge/${name} ${fence}/public/kforge/${name} SYMBOLIC)
  endif()
  target_include_directories(kforge_${name} PUBLIC ${fence}/public PRIVATE ${fence}/private)
  target_compile_options(kforge_${name} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Werror=switch>)
  target_link_libraries(kforge_${name} PUBLIC ${ARG_DEPS} PRIVATE ${ARG_PRIVATE_DEPS})
  kforge_unity(kforge_${name})
endfunction()

# kforge_unity(TARGET): its files compiled KFORGE_UNITY_BATCH to a translation unit (CMakeLists.txt), so
# names private to one file (anonymous namespaces, statics) must differ from those of the others.
# -Wsubobject-linkage is meant for headers: a file's Impl holding a type of the file's anonymous namespace
# is fine, but in a batch the file is no longer the main file and GCC would warn.
function(kforge_unity target)
  if(KFORGE_UNITY_BATCH GREATER 0)
    set_target_properties(${target} PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE ${KFORGE_UNITY_BATCH})
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Wno-subobject-linkage>)
  endif()
endfunction()

# kforge_test_fakes(): the test doubles of tests/fakes, compiled once into a library every test program
# links, not once per test program.
function(kforge_test_fakes)
  file(GLOB fakes CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/tests/fakes/*.cc)
  list(FILTER fakes EXCLUDE REGEX ".*_main\\.cc$")  # programs of their own (fake_worker)
  add_library(kforge_test_fakes STATIC ${fakes})
  target_include_directories(kforge_test_fakes PUBLIC ${PROJECT_SOURCE_DIR}/tests)
  target_link_libraries(kforge_test_fakes PUBLIC nlohmann_json::nlohmann_json GTest::gtest Threads::Threads)
  target_compile_definitions(kforge_test_fakes PRIVATE
    KFORGE_SOURCE_DIR="${PROJECT_SOURCE_DIR}" KFORGE_BINARY="$<TARGET_FILE:kforge>")
endfunction()

# kforge_module_tests(NAME): tests/NAME/*_test.cc -> NAME_test; *_gpu_test.cc -> NAME_gpu_test
# (ctest label gpu); *_slow_test.cc -> NAME_slow_test, one ctest entry labelled cpu and slow (CPU
# tests that take tens of seconds, such as training a tiny model). Each links kforge_NAME and the
# test doubles (kforge_test_fakes), and may run the fake worker (KFORGE_FAKE_WORKER).
function(kforge_module_tests name)
  if(NOT TARGET kforge_${name})
    return()
  endif()
  file(GLOB all CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/tests/${name}/*_test.cc)
  set(cpu_tests ${all})
  list(FILTER cpu_tests EXCLUDE REGEX ".*_(gpu|slow)_test\\.cc$")
  set(gpu_tests ${all})
  list(FILTER gpu_tests INCLUDE REGEX ".*_gpu_test\\.cc$")
  set(slow_tests ${all})
  list(FILTER slow_tests INCLUDE REGEX ".*_slow_test\\.cc$")
  foreach(kind IN ITEMS cpu gpu slow)
    set(files ${${kind}_tests})
    if(NOT files)
      continue()
    endif()
    if(kind STREQUAL "cpu")
      set(target ${name}_test)
    else()
      set(target ${name}_${kind}_test)
    endif()
    add_executable(${target} ${files})
    # Tests see every header: a module's tests may use its private parts and the test doubles.
    target_include_directories(${target} PRIVATE ${PROJECT_SOURCE_DIR}/src ${PROJECT_SOURCE_DIR}/include
                                                 ${PROJECT_SOURCE_DIR}/tests)
    target_link_libraries(${target} PRIVATE kforge_${name} kforge_test_fakes GTest::gtest GTest::gtest_main)
    # Tests build options with designated initializers ({.task_dir = "t"}), where the fields left out
    # keep their defaults on purpose.
    target_compile_options(${target} PRIVATE -Wno-missing-field-initializers)
    if(NOT kind STREQUAL "gpu")  # GPU tests time kernels: they keep the build type's flags
      target_compile_options(${target} PRIVATE ${KFORGE_TEST_OPTIMIZATION})
      kforge_unity(${target})
    endif()
    target_compile_definitions(${target} PRIVATE
      KFORGE_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
      KFORGE_BINARY="$<TARGET_FILE:kforge>"
      KFORGE_FAKE_WORKER="$<TARGET_FILE:fake_worker>")
    add_dependencies(${target} kforge fake_worker)
    if(kind STREQUAL "slow")
      kforge_slow_tests(${target} ${files})
    else()
      # GPU tests time kernels: on a machine with a GPU each runs alone, even under `ctest -j N`. Where
      # configure finds none they only skip, so they just exclude each other and run beside the CPU tests
      # (76 lone starts cost a CPU-only run ~26 s). Configure on the machine that runs the tests.
      set(schedule "")
      if(kind STREQUAL "gpu")
        if(KFORGE_CONFIGURED_WITH_GPU)
          set(schedule RUN_SERIAL TRUE)
        else()
          set(schedule RESOURCE_LOCK gpu)
        endif()
      endif()
      gtest_discover_tests(${target} DISCOVERY_TIMEOUT 60 DISCOVERY_MODE PRE_TEST
        PROPERTIES LABELS "${kind}" ${schedule} ENVIRONMENT "KFORGE_SOURCE_DIR=${PROJECT_SOURCE_DIR}")
    endif()
  endforeach()
endfunction()

# kforge_slow_tests(TARGET FILE...): one ctest entry per TEST of the files, labelled cpu and slow
# (gtest_discover_tests cannot give a test two labels), so that a parallel ctest spreads them; they start
# first (COST), being the longest. The names are read from the files: `TEST(Suite, Name)` or
# `TEST_F(Suite, Name)` at the start of a line. A name that selects no test fails.
function(kforge_slow_tests target)
  foreach(file IN LISTS ARGN)
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${file})
    file(STRINGS ${file} lines REGEX "^TEST(_F)?\\(")
    foreach(line IN LISTS lines)
      string(REGEX REPLACE "^TEST(_F)?\\(([A-Za-z0-9_]+), *([A-Za-z0-9_]+)\\).*" "\\2.\\3" test "${line}")
      add_test(NAME ${test} COMMAND ${target} --gtest_filter=${test})
      set_tests_properties(${test} PROPERTIES LABELS "cpu;slow" TIMEOUT 900 COST 1000
        SKIP_REGULAR_EXPRESSION "\\[  SKIPPED \\]" FAIL_REGULAR_EXPRESSION "Running 0 tests"
        ENVIRONMENT "KFORGE_SOURCE_DIR=${PROJECT_SOURCE_DIR}")
    endforeach()
  endforeach()
endfunction()
