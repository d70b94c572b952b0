#!/usr/bin/env python3
"""Fidelity of kforge's timing: each task's reference timed by `kforge bench --reference` (cold) and
the same PyTorch module timed here with CUDA events and an L2 flush before every sample (the method of
triton.testing.do_bench), run eagerly and replayed from a CUDA graph (which leaves out Python's
per-op dispatch; kforge's C++ runner has little of it). Prints a table and the largest difference.

usage: scripts/bench_fidelity.py [--kforge build/kforge] [--tasks build/tasks] [TASK...]
"""
import argparse
import importlib.util
import json
import statistics
import subprocess
import sys
from pathlib import Path

import torch

DEFAULT_TASKS = [
    "core/gelu", "core/swiglu", "core/row_max", "core/col_mean", "core/softmax", "core/layernorm",
    "core/cumsum", "core/matmul", "core/batched_matmul", "core/conv2d_3x3", "core/attention",
    "core/cross_entropy",
]


def load_module(task_dir: Path):
    spec = importlib.util.spec_from_file_location("reference", task_dir / "reference.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def time_in_torch(task_dir: Path, samples: int) -> tuple[float, float]:
    """Median ms of the module's forward, cold (L2 zeroed before each sample, events around the call):
    eager, and replayed from a CUDA graph."""
    torch.manual_seed(0)
    ref = load_module(task_dir)
    with torch.device("cuda"):  # inputs of several GB are drawn on the GPU, not copied there
        model = ref.Model(*ref.get_init_inputs())
        inputs = ref.get_inputs()
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    flush = torch.empty(2 * l2, dtype=torch.uint8, device="cuda")
    def median_ms(fn):
        times = []
        for _ in range(10):
            fn()
        torch.cuda.synchronize()
        for _ in range(samples):
            flush.zero_()
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end))
        return statistics.median(times)

    with torch.inference_mode():
        eager = median_ms(lambda: model(*inputs))
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):
            for _ in range(3):
                model(*inputs)
        torch.cuda.current_stream().wait_stream(stream)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            model(*inputs)
        replayed = median_ms(graph.replay)
    return eager, replayed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kforge", default="build/kforge")
    parser.add_argument("--tasks", default="build/tasks")
    parser.add_argument("--samples", type=int, default=500)
    parser.add_argument("task", nargs="*", default=DEFAULT_TASKS)
    args = parser.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False  # kforge's references run exact fp32 too
    torch.backends.cudnn.allow_tf32 = False

    run = subprocess.run([args.kforge, "bench", "--tasks", args.tasks, "--cold", "--reference", *args.task],
                         capture_output=True, text=True)
    records = {}
    for line in run.stdout.splitlines():
        record = json.loads(line)
        records[record["task"]] = record
    print(f"{'task':24} {'kforge ms':>10} {'eager ms':>9} {'diff':>8} {'graph ms':>9} {'diff':>8}  samples")
    worst = 0.0
    for task in args.task:
        record = records.get(task)
        if record is None or record["status"] != "ok":
            print(f"{task:24} kforge failed: {record and record['message'] or run.stderr.strip()[-200:]}")
            continue
        ours = record["reference"]["median_ms"] if record.get("reference") else record["candidate"]["median_ms"]
        n = record["reference"]["count"] if record.get("reference") else record["candidate"]["count"]
        eager, graph = time_in_torch(Path(args.tasks) / task, args.samples)
        diff, graph_diff = (ours - eager) / eager, (ours - graph) / graph
        worst = max(worst, min(abs(diff), abs(graph_diff)))
        print(f"{task:24} {ours:10.4f} {eager:9.4f} {diff * 100:+7.2f}% {graph:9.4f} {graph_diff * 100:+7.2f}%  {n}")
    print(f"largest difference to the nearer of eager and graph: {worst * 100:.2f}% (target: within 5%)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
