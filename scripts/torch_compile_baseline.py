#!/usr/bin/env python3
"""The torch.compile baseline of a task: its reference program (the task's exported .pt2 package, as
kforge's judge runs it) compiled with torch.compile and timed on inputs drawn from task.json, beside the
same program run eagerly in the same harness. Prints one JSON object:

  {"task", "variant", "device", "gpu", "torch", "mode", "backend", "compile_s", "median_ms", "eager_median_ms",
   "samples", "eager_samples", "timing": "cold", "took_s"}

or, when the baseline cannot be measured, {"error": "..."} and exit 1. Timing is cold, as kforge bench's
default: on CUDA each sample flushes L2 (a write of twice its size) before one run between CUDA events;
on the CPU a sample is one run on the wall clock. Samples are taken until there are --min-samples and
--min-seconds of them, or --max-seconds pass; the median is reported. compile_s is the first call of the
compiled program (tracing, Inductor's code generation and the first run); took_s the whole measurement.

  torch_compile_baseline.py TASK_DIR [--variant default] [--device cuda] [--mode default]
                            [--backend inductor] [--seed 0] [--max-seconds 10]
"""

import argparse
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def fail(message):
    print(json.dumps({"error": message}))
    sys.exit(1)


def variant_symbols(doc, variant):
    symbols = dict(doc.get("symbols", {}))
    if variant != "default":
        found = [v for v in doc.get("variants", []) if v.get("name") == variant]
        if not found:
            fail(f"task {doc.get('id')}: no variant {variant!r}")
        symbols.update(found[0].get("symbols", {}))
    return symbols


def draw_inputs(doc, symbols, device, seed):
    import torch
    from kforge_tasks import behaviour, expr
    gen = torch.Generator().manual_seed(seed)
    tensors = []
    for spec in doc.get("inputs", []):
        shape = [expr.evaluate(d, symbols) for d in spec["shape"]]
        init = spec.get("init", {"dist": "randn"})
        tensors.append(behaviour.draw(init, shape, spec["dtype"], gen).to(device))
    return tensors


def load_params(task_dir, doc, device):
    params = doc.get("params", [])
    if not params:
        return []
    from safetensors.torch import load_file
    stored = load_file(os.path.join(task_dir, doc["artifacts"]["params"]))
    return [stored[p["name"]].to(device) for p in params]


def sample(run, device, min_samples, min_seconds, max_seconds):
    """Milliseconds of cold runs of `run`."""
    import torch
    times, spent, begin = [], 0.0, time.perf_counter()
    if device.startswith("cuda"):
        flush = torch.empty(2 * torch.cuda.get_device_properties(device).L2_cache_size, dtype=torch.uint8,
                            device=device)
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    while True:
        if device.startswith("cuda"):
            flush.zero_()
            start.record()
            run()
            stop.record()
            stop.synchronize()
            ms = start.elapsed_time(stop)
        else:
            t0 = time.perf_counter()
            run()
            ms = (time.perf_counter() - t0) * 1e3
        times.append(ms)
        spent += ms / 1e3
        if (len(times) >= min_samples and spent >= min_seconds) or time.perf_counter() - begin > max_seconds:
            return times


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("task_dir")
    parser.add_argument("--variant", default="default")
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--mode", default="default", help="torch.compile's mode (default, max-autotune, ...)")
    parser.add_argument("--backend", default="inductor", help="torch.compile's backend (aot_eager: no code generation)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--min-samples", type=int, default=10)
    parser.add_argument("--min-seconds", type=float, default=0.05)
    parser.add_argument("--max-seconds", type=float, default=10.0)
    args = parser.parse_args()
    began = time.perf_counter()

    try:
        with open(os.path.join(args.task_dir, "task.json"), encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        fail(f"{args.task_dir}/task.json: {e}")
    kind = "cuda" if args.device.startswith("cuda") else "cpu"
    package = doc.get("artifacts", {}).get("packages", {}).get(args.variant, {}).get(kind)
    if not package:
        fail(f"task {doc.get('id')}: no {kind} package for variant {args.variant!r} (kforge tasks build --device {kind})")

    import torch
    from torch.export.pt2_archive._package import load_pt2
    if kind == "cuda" and not torch.cuda.is_available():
        fail("torch sees no CUDA device")
    program = load_pt2(os.path.join(args.task_dir, package)).exported_programs["forward"].module()
    inputs = draw_inputs(doc, variant_symbols(doc, args.variant), args.device, args.seed)
    inputs += load_params(args.task_dir, doc, args.device)

    def timed(fn):
        return sample(lambda: fn(*inputs), args.device, args.min_samples, args.min_seconds, args.max_seconds)

    with torch.inference_mode():
        eager = timed(program)
        compiled = torch.compile(program, backend=args.backend, mode=None if args.mode == "default" else args.mode)
        t0 = time.perf_counter()
        try:
            compiled(*inputs)
            if kind == "cuda":
                torch.cuda.synchronize()
        except Exception as e:  # Dynamo and Inductor raise many kinds; the baseline is then missing
            fail(f"torch.compile failed: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")
        compile_s = time.perf_counter() - t0
        fast = timed(compiled)

    print(json.dumps({
        "task": doc.get("id"), "variant": args.variant, "device": args.device,
        "gpu": torch.cuda.get_device_name(args.device) if kind == "cuda" else None,
        "torch": torch.__version__, "mode": args.mode, "backend": args.backend, "compile_s": round(compile_s, 3),
        "median_ms": statistics.median(fast), "eager_median_ms": statistics.median(eager),
        "samples": len(fast), "eager_samples": len(eager), "timing": "cold",
        "took_s": round(time.perf_counter() - began, 3)}))


if __name__ == "__main__":
    main()
