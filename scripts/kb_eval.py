#!/usr/bin/env python3
"""KernelBench's own evaluation (KERNELBENCH_DIR/harness/kernelbench/eval.py) of one ModelNew file, in the
two steps of KernelBench's batch evaluation, which share a build directory:

  kb_eval.py build KERNELBENCH_DIR MODEL_NEW BUILD_DIR
      compiles the file's extension into BUILD_DIR (build_compile_cache): CPU only, many at once;
  kb_eval.py judge KERNELBENCH_DIR REFERENCE MODEL_NEW BUILD_DIR [--trials N]
      eval_kernel_against_ref with that BUILD_DIR, as KERNELBENCH_DIR/harness/judge.py calls it but for the
      build directory: the extension built before is loaded, not built again on the GPU's time.

Each prints one JSON line: build {"compiled", "error"}; judge {"compiled", "correctness", "runtime",
"ref_runtime", "metadata"}, as harness/judge.py does."""
import argparse
import json
import os
import sys


def out_of_memory(verdict):
    """True for KernelBench's verdict on a run that ran out of GPU memory: no verdict on the kernel, since the
    problem's tensors did not fit beside what else was on the device."""
    metadata = verdict.get("metadata")
    if not isinstance(metadata, dict):
        return False
    return "OutOfMemory" in str(metadata.get("runtime_error_name", "")) or \
        "out of memory" in str(metadata.get("runtime_error", ""))


def harness(kb):
    here = os.path.join(kb, "harness")
    sys.path[:0] = [os.path.join(here, "shims"), here]
    from kernelbench import eval as kb_eval
    return kb_eval


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    steps = ap.add_subparsers(dest="step", required=True)
    build = steps.add_parser("build")
    build.add_argument("kb"); build.add_argument("model_new"); build.add_argument("build_dir")
    judge = steps.add_parser("judge")
    judge.add_argument("kb"); judge.add_argument("reference"); judge.add_argument("model_new")
    judge.add_argument("build_dir"); judge.add_argument("--trials", type=int, default=5)
    a = ap.parse_args()
    kb_eval = harness(a.kb)
    source = open(a.model_new).read()
    if a.step == "build":
        compiled, _, error = kb_eval.build_compile_cache(custom_model_src=source, build_dir=a.build_dir)
        print(json.dumps({"compiled": bool(compiled), "error": error}))
        return
    r = kb_eval.eval_kernel_against_ref(open(a.reference).read(), source, num_correct_trials=a.trials,
                                        num_perf_trials=100, measure_performance=False, build_dir=a.build_dir,
                                        device=0)
    d = r.model_dump() if hasattr(r, "model_dump") else vars(r)
    print(json.dumps({k: d.get(k) for k in ("compiled", "correctness", "runtime", "ref_runtime", "metadata")},
                     default=str))


if __name__ == "__main__":
    main()
