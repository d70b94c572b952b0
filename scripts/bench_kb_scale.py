#!/usr/bin/env python3
"""verify at KernelBench's sizes, on a GPU machine. Prints:
  1. one cold `kforge verify --no-cache` of a correct ReLU on kernelbench/level1/19_ReLU (6.4 GB in),
     whole process, wall time;
  2. a batch of N distinct correct ReLU candidates on the same task: candidates/s;
  3. a batch of N distinct correct column sums on level1/47_Sum_reduction_over_a_dimension (8.6 GB in);
  4. for each batch, where a verification's time goes (timing.phases_ms, mean per candidate), and the
     peak device memory against the task's footprint and budget;
  5. a CI-style loop of 20 steps on 19_ReLU, one verify of a new candidate per step: cold (a process
     each, workers started each time) against warm (`kforge verify --server` to one `kforge serve`),
     median and max wall per verify, and whether the two gave the same statuses.
Usage: scripts/bench_kb_scale.py TASK_ROOT [N]   (TASK_ROOT from `kforge tasks import kernelbench ... --device cuda`)
"""
import json
import os
import subprocess
import sys
import tempfile
import time

KFORGE = os.environ.get("KFORGE", "build/kforge")

RELU = r'''// candidate %d: grid-stride ReLU, float4 loads, 64-bit indices, a scalar tail for odd sizes
extern "C" __global__ void relu(const float* __restrict__ x, float* __restrict__ out, long long n) {
  long long stride = (long long)gridDim.x * blockDim.x;
  long long first = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  long long n4 = n / 4;
  const float4* x4 = reinterpret_cast<const float4*>(x);
  float4* out4 = reinterpret_cast<float4*>(out);
  for (long long i = first; i < n4; i += stride) {
    float4 v = x4[i];
    out4[i] = make_float4(fmaxf(v.x, 0.f), fmaxf(v.y, 0.f), fmaxf(v.z, 0.f), fmaxf(v.w, 0.f));
  }
  for (long long i = 4 * n4 + first; i < n; i += stride) out[i] = fmaxf(x[i], 0.f);
}
'''

COLSUM = r'''// candidate %d: sum over dim 1 of [B, R, C]; one thread per (b, c), rows walked in order
extern "C" __global__ void colsum(const float* __restrict__ x, float* __restrict__ out, long long rows, long long cols) {
  long long c = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  long long b = blockIdx.y;
  if (c >= cols) return;
  const float* p = x + b * rows * cols + c;
  float acc = 0.f;
  for (long long r = 0; r < rows; ++r) acc += p[r * cols];
  out[b * cols + c] = acc;
}
'''


def relu_solution(i):
    return {"schema": "kforge.solution/1", "task": "kernelbench/level1/19_ReLU", "source": RELU % i,
            "launches": [{"kernel": "relu", "grid": [132 * 16], "block": [256],
                          "args": ["x", "out0", "i64:numel(x)"]}], "scratch": [], "options": []}


def colsum_solution(i):
    return {"schema": "kforge.solution/1", "task": "kernelbench/level1/47_Sum_reduction_over_a_dimension",
            "source": COLSUM % i,
            "launches": [{"kernel": "colsum", "grid": ["cdiv(size(x, 2), 128)", "size(x, 0)"], "block": [128],
                          "args": ["x", "out0", "i64:size(x, 1)", "i64:size(x, 2)"]}],
            "scratch": [], "options": []}


def run_verify(root, files, env):
    start = time.time()
    proc = subprocess.run([KFORGE, "verify", "--no-cache", "--seed", "1", "--tasks", root, *files],
                          capture_output=True, text=True, env=env)
    wall = time.time() - start
    verdicts = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    return wall, verdicts, proc.stderr.strip().splitlines()[-1:] if proc.stderr else []


def verify_loop(root, files, env, server=None):
    """Walls of one `kforge verify` per file, in turn (through `server` when given); their statuses."""
    walls, statuses = [], []
    for i, path in enumerate(files):
        args = [KFORGE, "verify", "--seed", str(i + 1), "--tasks", root, path]
        if server:
            args[2:2] = ["--server", server]
        start = time.time()
        proc = subprocess.run(args, capture_output=True, text=True, env=env)
        walls.append(time.time() - start)
        lines = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
        statuses.append(lines[0]["status"] if lines else "no verdict: " + proc.stderr.strip()[-200:])
    return walls, statuses


def warm_loop(root, files, env, work):
    """The loop through one `kforge serve`, started (and warmed by its workers' start) beforehand."""
    sock = os.path.join(work, "judge.sock")
    serve = subprocess.Popen([KFORGE, "serve", "--socket", sock, "--tasks", root, "--idle-timeout", "30"],
                             env=env, stderr=subprocess.PIPE, text=True)
    try:
        for _ in range(600):
            if os.path.exists(sock):
                break
            time.sleep(0.05)
        return verify_loop(root, files, env, server=sock)
    finally:
        serve.terminate()
        serve.wait(timeout=60)


def median(values):
    v = sorted(values)
    return v[len(v) // 2] if len(v) % 2 else (v[len(v) // 2 - 1] + v[len(v) // 2]) / 2


def gib(b):
    return f"{b / 2**30:.2f} GiB"


def report(name, wall, verdicts, stderr_tail):
    ok = sum(v["status"] == "ok" for v in verdicts)
    print(f"{name}: {len(verdicts)} candidates, {ok} ok, {wall:.2f} s wall, {len(verdicts) / wall:.2f} candidates/s")
    for v in verdicts:
        if v["status"] != "ok":
            print(f"  not ok: {v['status']}: {v['message'][:200]}")
            break
    phases = {}
    gpu = []
    for v in verdicts:
        t = v.get("timing", {})
        gpu.append(t.get("gpu_ms", 0))
        for k, ms in t.get("phases_ms", {}).items():
            phases[k] = phases.get(k, 0) + ms
    if verdicts:
        n = len(verdicts)
        split = ", ".join(f"{k} {ms / n:.1f}" for k, ms in sorted(phases.items(), key=lambda kv: -kv[1]))
        print(f"  GPU check per candidate: mean {sum(gpu) / n:.1f} ms; phases (ms): {split}")
        m = verdicts[-1].get("memory") or {}
        if m:
            print(f"  memory: footprint {gib(m['footprint_bytes'])}, budget {gib(m['budget_bytes'])}, "
                  f"peak {gib(m['peak_device_bytes'])} ({m['peak_device_bytes'] / m['footprint_bytes']:.2f}x footprint)")
    for line in stderr_tail:
        print(f"  {line}")


def main():
    root = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 64
    work = tempfile.mkdtemp(prefix="kforge-kb-scale-")
    env = dict(os.environ, KFORGE_CACHE_DIR=os.path.join(work, "cache"))
    batches = {"relu": relu_solution, "colsum": colsum_solution}
    files = {}
    for name, make in batches.items():
        files[name] = []
        for i in range(n + 3 + 40):
            path = os.path.join(work, f"{name}_{i}.json")
            with open(path, "w") as f:
                json.dump(make(i), f)
            files[name].append(path)
    for k in range(3):
        wall, verdicts, tail = run_verify(root, [files["relu"][n + k]], env)
        v = verdicts[0] if verdicts else {}
        if not v:
            print(f"cold single verify, 19_ReLU, run {k + 1}: no verdict; {' '.join(tail)}")
            continue
        t = v.get("timing") or {}
        print(f"cold single verify, 19_ReLU, run {k + 1}: {wall * 1000:.0f} ms wall ({v.get('status')}; "
              f"compile {(v.get('compile') or {}).get('ms', 0):.0f} ms, worker start {t.get('worker_start_ms', 0):.0f} ms, "
              f"GPU check {t.get('gpu_ms', 0):.0f} ms, reference load {t.get('reference_load_ms', 0):.0f} ms)")
    report("batch, 19_ReLU", *run_verify(root, files["relu"][:n], env))
    report("batch, 47_Sum_reduction_over_a_dimension", *run_verify(root, files["colsum"][:n], env))
    steps = 20
    cold_walls, cold_statuses = verify_loop(root, files["relu"][n + 3:n + 3 + steps], env)
    warm_walls, warm_statuses = warm_loop(root, files["relu"][n + 3 + steps:n + 3 + 2 * steps], env, work)
    for name, walls, statuses in (("cold", cold_walls, cold_statuses), ("warm", warm_walls, warm_statuses)):
        print(f"{steps}-step loop, 19_ReLU, {name}: median {median(walls) * 1000:.0f} ms, max {max(walls) * 1000:.0f} ms "
              f"per verify, total {sum(walls):.1f} s; statuses {sorted(set(statuses))}")
    print(f"warm/cold: {median(warm_walls) / median(cold_walls):.2f}x the median; same statuses: "
          f"{cold_statuses == warm_statuses}")


if __name__ == "__main__":
    main()
