# Python tests of the reference exporter (scripts/export_reference.py); they need the torch venv.
if(KFORGE_WITH_TORCH)
  add_test(NAME export_reference COMMAND ${KFORGE_PYTHON} -m pytest -q ${PROJECT_SOURCE_DIR}/tests/scripts)
  set_tests_properties(export_reference PROPERTIES LABELS cpu)
endif()
