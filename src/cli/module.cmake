set(kforge_cli_deps kforge_common CLI11::CLI11)
foreach(m IN ITEMS cuda llm verify bench generate skill export finetune)
  if(TARGET kforge_${m})
    list(APPEND kforge_cli_deps kforge_${m})
  endif()
endforeach()
kforge_module(cli DEPS ${kforge_cli_deps})
# `kforge tasks` runs scripts/export_reference.py from the source tree.
target_compile_definitions(kforge_cli PRIVATE KFORGE_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
