#!/usr/bin/env bash
# KernelBench's own judge on a kforge KernelBench export (kforge export --format kernelbench): for every
# file listed in EXPORT_DIR/index.jsonl, KernelBench's eval_kernel_against_ref (KERNELBENCH_DIR/harness/
# kernelbench/eval.py) against the file's problem, KERNELBENCH_DIR/levelN/NAME.py, in the two steps of
# KernelBench's own batch evaluation (scripts/kb_eval.py): every file's extension is built first, KB_JOBS at
# once on the CPU (build_compile_cache), then judged, KB_GPU_JOBS at once on the GPU, loading what was built.
# A file is judged as soon as its build is done. Builds are kept in OUT_JSONL.builds/ (or KB_BUILD_DIR), a
# directory per file and content: a rerun does not build a file again.
# One JSON line per file goes to OUT_JSONL with kforge's verdict beside KernelBench's:
#   {"file", "task", "problem", "record", "kforge": {"correct", "speedup", "status"},
#    "kernelbench": {"compiled", "correctness", "runtime", "ref_runtime", "metadata"} or {"error"},
#    "agree": kforge's correct == KernelBench's correctness (null when KernelBench gave no verdict)}
# and a summary on stderr. Needs a CUDA GPU, torch and nvcc. The work is scripts/kb_judge.py's.
# Usage: scripts/kb-judge.sh EXPORT_DIR KERNELBENCH_DIR OUT_JSONL
#   env: PYTHON (default python3), KB_TRIALS (correctness trials, default 5), KB_TIMEOUT (seconds per
#   file and step, default 900), KB_LIMIT (judge only the first N files; default all), KB_JOBS (builds at
#   once, default 4), KB_GPU_JOBS (files judged at once, default 1: KernelBench's level-1 problems hold
#   several GiB a tensor), KB_BUILD_DIR (where builds are kept; default OUT_JSONL.builds)
# Each line is written as its file is judged; a rerun into the same OUT_JSONL judges only the files that
# have no KernelBench verdict there yet, so a long run can be split over several sessions or stopped.
# A file whose run ran out of GPU memory while other files were judged beside it is judged again after
# the others, alone: its first verdict is the neighbours', not KernelBench's.
# KernelBench's eval.py imports `requests` for its remote mode only; where it is not installed (a GPU
# machine without network), an empty stand-in module is put on the judge's path.
# Exit 0 when every file kforge called correct is correct for KernelBench too, 1 when one is not (or
# KernelBench gave no verdict on it), 2 on bad usage.
set -uo pipefail
usage="usage: scripts/kb-judge.sh EXPORT_DIR KERNELBENCH_DIR OUT_JSONL"
export_dir=${1:?$usage}
kb=${2:?$usage}
out=${3:?$usage}
if [ ! -f "$export_dir/index.jsonl" ]; then
  echo "kb-judge: $export_dir/index.jsonl: not a kforge KernelBench export" >&2
  exit 2
fi
if [ ! -f "$kb/harness/kernelbench/eval.py" ]; then
  echo "kb-judge: $kb/harness/kernelbench/eval.py: no KernelBench harness there" >&2
  exit 2
fi
exec "${PYTHON:-python3}" "$(dirname "$0")/kb_judge.py" "$export_dir" "$kb" "$out"
