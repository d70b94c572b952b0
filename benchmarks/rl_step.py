#!/usr/bin/env python3
"""One GRPO step's judging, measured: N completions (default 512) sent to `kforge serve` as one batch,
as a reward function sends a step's completions. The completions are made from the solutions in
examples/ (the tasks that have one), or any folder of solutions
(--examples tests/verify/published: KernelBench kernels, for a server of imported KernelBench tasks): correct ones, wrong ones (each kernel returns at once: a
mismatch) and ones that do not compile, in the proportions given, each with a comment of its own so
that no compile is a cache hit (as with sampled completions). Prints one JSON object: the step's wall
time, per-completion latency (p50, p99: when its judgment came, counted from the batch's start),
completions per second, the verdicts, and where the time went (NVRTC, GPU check, timing).

  rl_step.py SERVER [--examples DIR] [--count 512] [--correct 0.5] [--wrong 0.25] [--token-file F]
           [--task-prefix kernelbench/level1/]
"""

import argparse
import glob
import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
from kforge_client import Client  # noqa: E402


def completion(solution, nonce, kind):
    source = solution["source"]
    if kind == "wrong":  # every kernel returns before writing anything
        out, at = [], 0
        while True:
            g = source.find("__global__", at)
            if g < 0:
                break
            brace = source.find("{", g)
            out.append(source[at:brace + 1] + " return;")
            at = brace + 1
        source = "".join(out) + source[at:]
    elif kind == "broken":
        source = source + "\nint kforge_rl_step_broken = ;\n"
    source += f"\n// sample {nonce}\n"
    plan = {k: solution[k] for k in ("launches", "scratch", "options") if solution.get(k)}
    return f"Here is my kernel.\n```cuda\n{source}```\n```json\n{json.dumps(plan, indent=1)}\n```\n"


def percentile(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q / 100 * (len(values) - 1))))] if values else None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("server")
    parser.add_argument("--examples", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples"))
    parser.add_argument("--count", type=int, default=512)
    parser.add_argument("--correct", type=float, default=0.5)
    parser.add_argument("--wrong", type=float, default=0.25)
    parser.add_argument("--token-file")
    parser.add_argument("--task-prefix", default="", help="only solutions whose task id starts with this")
    args = parser.parse_args()

    client = Client(args.server, token_file=args.token_file)
    on_server = {t["id"] for t in client.tasks()}
    solutions = []
    paths = glob.glob(os.path.join(args.examples, "*.json")) + glob.glob(os.path.join(args.examples, "*", "*.json"))
    for path in sorted(paths):
        if os.path.basename(os.path.dirname(path)) == "broken":  # kept to show a compile error
            continue
        with open(path, encoding="utf-8") as f:
            solution = json.load(f)
        if isinstance(solution, dict) and solution.get("task") in on_server and solution.get("source") \
                and solution["task"].startswith(args.task_prefix):
            solutions.append(solution)
    if not solutions:
        sys.exit(f"rl_step: no solution in {args.examples} is for a task of the server")
    run = f"{os.getpid()}-{time.time_ns()}"
    batch = []
    for i in range(args.count):
        position = (i * 0.6180339887) % 1  # spread the kinds over the batch
        kind = "correct" if position < args.correct else "wrong" if position < args.correct + args.wrong else "broken"
        solution = solutions[i % len(solutions)]
        batch.append({"id": f"{kind}-{i}", "task": solution["task"], "completion": completion(solution, f"{run}-{i}", kind)})

    start = time.perf_counter()
    results = client.judge(batch)
    wall = time.perf_counter() - start
    latencies = [r["timing"]["judged_ms"] for r in results if "timing" in r]
    statuses, by_kind = {}, {}
    for entry, r in zip(batch, results):
        statuses[r["status"]] = statuses.get(r["status"], 0) + 1
        kind = entry["id"].split("-")[0]
        by_kind.setdefault(kind, {}).setdefault(r["status"], 0)
        by_kind[kind][r["status"]] += 1
    total = {k: round(sum(r.get("timing", {}).get(k, 0) for r in results), 1)
             for k in ("compile_ms", "gpu_check_ms", "bench_ms")}
    rewards = [r["reward"] for r in results if r.get("reward") is not None]
    print(json.dumps({
        "server": client.about(), "completions": len(batch), "tasks": len({s["task"] for s in solutions}),
        "step_s": round(wall, 3), "completions_per_s": round(len(batch) / wall, 1),
        "latency_ms": {"p50": percentile(latencies, 50), "p99": percentile(latencies, 99), "max": max(latencies)},
        "statuses": statuses, "by_kind": by_kind, "time_spent_ms": total,
        "mean_reward": round(sum(rewards) / len(rewards), 4) if rewards else None,
        "judged_by": client.judged_by}, indent=1))
    client.close()


if __name__ == "__main__":
    main()
