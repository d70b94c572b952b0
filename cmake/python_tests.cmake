# Python tests: the reference exporter (scripts/export_reference.py, with the torch venv) and the datasets
# that kforge export writes. One ctest entry per file of tests/scripts (export_reference.test_export, ...),
# so that a parallel ctest spreads them; they start first (COST), being the longest.
if(KFORGE_WITH_TORCH)
  file(GLOB python_test_files CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/tests/scripts/test_*.py)
  list(FILTER python_test_files EXCLUDE REGEX ".*/test_junit\\.py$")  # junit_report, below
  foreach(file IN LISTS python_test_files)
    get_filename_component(stem ${file} NAME_WE)
    add_test(NAME export_reference.${stem} COMMAND ${KFORGE_PYTHON} -m pytest -q -p no:cacheprovider ${file})
    set_tests_properties(export_reference.${stem} PROPERTIES LABELS cpu COST 100
                         ENVIRONMENT "KFORGE_BINARY=$<TARGET_FILE:kforge>")
  endforeach()
endif()

# kforge export's messages and pairs formats load with datasets.load_dataset and train with TRL's
# SFTTrainer (tokenizer, chat template and model made in the test, offline). Needs datasets, trl,
# transformers and tokenizers in the venv (scripts/setup.sh); fails without them.
if(NOT KFORGE_PYTHON)
  find_program(KFORGE_PYTHON python3)
endif()
add_test(NAME export_trl COMMAND ${KFORGE_PYTHON} ${PROJECT_SOURCE_DIR}/tests/scripts/check_trl_export.py $<TARGET_FILE:kforge>)
set_tests_properties(export_trl PROPERTIES LABELS cpu TIMEOUT 600 COST 100)

# The published KernelBench solutions of tests/verify/published/ (scripts/gpu-published.sh judges them on a
# GPU, beside KernelBench's own judge): the manifest names each file's source, commit and licence; each
# file parses, NVRTC-compiles to the status the manifest records, and exports to a ModelNew file.
add_test(NAME published_solutions COMMAND ${KFORGE_PYTHON} ${PROJECT_SOURCE_DIR}/tests/scripts/check_published.py
         $<TARGET_FILE:kforge>)
set_tests_properties(published_solutions PROPERTIES LABELS cpu TIMEOUT 600)

# The Hub's conventions for kforge export: a text + tools export loads with datasets (plainly and with
# the card's snippet), renders through the chat templates TRL ships (Qwen2.5, Llama-3.1, Qwen3) with
# tool-call arguments written once, and --format parquet keeps the same features.
add_test(NAME export_datasets COMMAND ${KFORGE_PYTHON} -m pytest -q -p no:cacheprovider
         ${PROJECT_SOURCE_DIR}/tests/scripts/hub_export_check.py)
set_tests_properties(export_datasets PROPERTIES LABELS cpu TIMEOUT 600 COST 100
                     ENVIRONMENT "KFORGE_BIN=$<TARGET_FILE:kforge>;HF_DATASETS_CACHE=${CMAKE_BINARY_DIR}/hf-datasets-cache")
# kforge verify --junit read by junitparser (PyPI); skips with a message when the package is absent.
add_test(NAME junit_report COMMAND ${KFORGE_PYTHON} -m pytest -q -rs ${PROJECT_SOURCE_DIR}/tests/scripts/test_junit.py)
set_tests_properties(junit_report PROPERTIES LABELS cpu ENVIRONMENT "KFORGE_BINARY=$<TARGET_FILE:kforge>")
# kforge export --format preference and --format turns: the pairing rules, the rows loading with
# datasets.load_dataset(FOLDER), and TRL's DPOTrainer taking a few steps on the pairs with a tiny model
# made in the test (its loss per step in the output).
add_test(NAME export_preference COMMAND ${KFORGE_PYTHON} -m pytest -q -s -p no:cacheprovider
         ${PROJECT_SOURCE_DIR}/tests/scripts/check_preference_export.py)
set_tests_properties(export_preference PROPERTIES LABELS cpu TIMEOUT 600 COST 100
                     ENVIRONMENT "KFORGE_BIN=$<TARGET_FILE:kforge>;HF_DATASETS_CACHE=${CMAKE_BINARY_DIR}/hf-datasets-cache")
# python/kforge_client (the client of kforge serve's completion judge, kforge.rl/1) against a real
# `kforge serve --compile-only`: judge(), the reward function GRPOTrainer takes, the multi-turn
# environment, the bearer token on TCP, the caps, two servers sharing a batch, a client killed mid-batch.
add_test(NAME rl_client COMMAND ${KFORGE_PYTHON} -m pytest -q -s -p no:cacheprovider
         ${PROJECT_SOURCE_DIR}/tests/scripts/rl_client_check.py)
set_tests_properties(rl_client PROPERTIES LABELS cpu TIMEOUT 600 ENVIRONMENT "KFORGE_BIN=$<TARGET_FILE:kforge>")
