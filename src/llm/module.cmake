kforge_module(llm DEPS kforge_common PRIVATE_DEPS CURL::libcurl)

# Throughput benchmark against a local server (scripts/bench-llm.sh).
add_executable(llm_throughput_bench EXCLUDE_FROM_ALL
  ${PROJECT_SOURCE_DIR}/benchmarks/llm_throughput.cc
  ${PROJECT_SOURCE_DIR}/tests/fakes/http_server.cc)
target_include_directories(llm_throughput_bench PRIVATE ${PROJECT_SOURCE_DIR}/tests)
target_link_libraries(llm_throughput_bench PRIVATE kforge_llm)
