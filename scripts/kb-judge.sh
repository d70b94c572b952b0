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
# and a summary on stderr. Needs a CUDA GPU, torch and nvcc.
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
exec "${PYTHON:-python3}" - "$export_dir" "$kb" "$out" "$(dirname "$0")/kb_eval.py" <<'PY'
import hashlib, json, os, subprocess, sys, tempfile
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait

export_dir, kb, out, kb_eval = sys.argv[1:5]
sys.path.insert(0, os.path.dirname(kb_eval))
from kb_eval import out_of_memory  # noqa: E402
trials = os.environ.get("KB_TRIALS", "5")
timeout = int(os.environ.get("KB_TIMEOUT", "900"))
limit = int(os.environ.get("KB_LIMIT", "0"))
with open(os.path.join(export_dir, "index.jsonl")) as f:
    rows = [json.loads(line) for line in f if line.strip()]
if limit > 0:
    rows = rows[:limit]


def one_line(text, limit=300):
    text = " ".join(text.split())
    return text[-limit:]


env = dict(os.environ)
# Each file's extension build runs ninja with as many jobs as there are cores; KB_JOBS builds at once
# share them instead.
build_jobs = max(1, int(os.environ.get("KB_JOBS", "4")))
gpu_jobs = max(1, int(os.environ.get("KB_GPU_JOBS", "1")))
env.setdefault("MAX_JOBS", str(max(1, (os.cpu_count() or 1) // build_jobs)))
if subprocess.run([sys.executable, "-c", "import requests"], capture_output=True).returncode != 0:
    stand_in = tempfile.mkdtemp(prefix="kb-judge-shims-")
    with open(os.path.join(stand_in, "requests.py"), "w") as f:
        f.write('"""Stand-in: KernelBench imports requests only for remote evaluation."""\n')
    env["PYTHONPATH"] = stand_in + os.pathsep + env.get("PYTHONPATH", "")


def step(args):
    """The JSON line of one kb_eval.py step, or {"error"} saying why there is none."""
    try:
        done = subprocess.run([sys.executable, kb_eval, *args], capture_output=True, text=True, timeout=timeout,
                              stdin=subprocess.DEVNULL, env=env)
    except subprocess.TimeoutExpired:
        return {"error": f"{args[0]} timed out after {timeout} s"}
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode == 0 and lines:
        try:
            return json.loads(lines[-1])
        except json.JSONDecodeError:
            pass
    return {"error": f"{args[0]} exited {done.returncode}: {one_line(done.stderr or done.stdout)}"}


# Builds are kept beside OUT_JSONL (or in KB_BUILD_DIR), one directory per file and content, so a rerun
# loads what an earlier run built instead of building it again.
builds = os.environ.get("KB_BUILD_DIR") or out + ".builds"
BUILT = "kb-judge-built"  # written into a build directory once its build succeeded


def build_dir(row):
    with open(os.path.join(export_dir, row["file"]), "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()[:12]
    return os.path.join(builds, os.path.splitext(row["file"])[0] + "-" + digest)


def build(row):
    """The build step's line for a file; a file built before (same content) is not built again."""
    where = build_dir(row)
    if os.path.exists(os.path.join(where, BUILT)):
        return {"compiled": True, "reused": True}
    built = step(["build", kb, os.path.join(export_dir, row["file"]), where])
    if built.get("compiled"):
        os.makedirs(where, exist_ok=True)
        open(os.path.join(where, BUILT), "w").close()
    return built


def kernelbench_verdict(row):
    reference = os.path.join(kb, row["problem"])
    if not os.path.exists(reference):
        return {"error": f"no problem file {reference}"}
    return step(["judge", kb, reference, os.path.join(export_dir, row["file"]), build_dir(row), "--trials", trials])


# A line is written as soon as its file is judged, so a run stopped midway keeps what it judged; a rerun
# into the same OUT_JSONL keeps the lines that have KernelBench's verdict (a run out of memory has none) and judges only the others.
done = {}
if os.path.exists(out):
    with open(out) as f:
        for text in f:
            try:
                line = json.loads(text)
            except json.JSONDecodeError:
                continue
            verdict = line.get("kernelbench", {"error": ""})
            if "error" not in verdict and not out_of_memory(verdict):
                done[line["file"]] = line
if done:
    print(f"kb-judge: {len(done)} files already judged in {out}; judging the other {len(rows) - len(done)}",
          file=sys.stderr)


def record(row, verdict):
    kb_correct = verdict.get("correctness") if "error" not in verdict else None
    agree = None if kb_correct is None else bool(kb_correct) == bool(row.get("correct"))
    return {"file": row["file"], "task": row["task"], "problem": row["problem"], "record": row.get("record"),
            "kforge": {k: row.get(k) for k in ("correct", "speedup", "status")}, "kernelbench": verdict,
            "agree": agree}


todo = [row for row in rows if row["file"] not in done]
with open(out + ".tmp", "w") as sink:  # the kept lines, then each new one appended as it comes
    for line in done.values():
        sink.write(json.dumps(line, default=str) + "\n")
os.replace(out + ".tmp", out)


def keep(sink, row, verdict):
    done[row["file"]] = record(row, verdict)
    sink.write(json.dumps(done[row["file"]], default=str) + "\n")
    sink.flush()
    kb_text = verdict.get("error") or f"compiled={verdict.get('compiled')} correct={verdict.get('correctness')}"
    print(f"kb-judge [{len(done)}/{len(rows)}] {row['file']}: kforge correct={row.get('correct')}, "
          f"KernelBench {kb_text}", file=sys.stderr)


# Each file is judged as soon as its build is done (a file that does not build is judged too: its verdict
# says so), so a run stopped midway has judged what it built.
crowded = []  # ran out of GPU memory beside other judges: judged again alone
built = {"compiled": 0, "reused": 0, "failed": 0}
with open(out, "a") as sink, ThreadPoolExecutor(max_workers=build_jobs) as builders, \
        ThreadPoolExecutor(max_workers=gpu_jobs) as judges:
    pending = {builders.submit(build, row): ("build", row) for row in todo}
    while pending:
        finished, _ = wait(pending, return_when=FIRST_COMPLETED)
        for future in finished:
            kind, row = pending.pop(future)
            if kind == "build":
                result = future.result()
                built["reused" if result.get("reused") else "compiled" if result.get("compiled") else "failed"] += 1
                if sum(built.values()) == len(todo):
                    print(f"kb-judge: {len(todo) - built['failed']} of {len(todo)} files built ({built['reused']} "
                          f"built before), {build_jobs} at once; judged {gpu_jobs} at once as they are built",
                          file=sys.stderr)
                pending[judges.submit(kernelbench_verdict, row)] = ("judge", row)
                continue
            verdict = future.result()
            if gpu_jobs > 1 and out_of_memory(verdict):
                crowded.append(row)
                continue
            keep(sink, row, verdict)
    if crowded:
        print(f"kb-judge: {len(crowded)} files ran out of GPU memory beside the others; judging them alone",
              file=sys.stderr)
    for row in crowded:
        keep(sink, row, kernelbench_verdict(row))

counts = {"agree": 0, "disagree": 0, "no_verdict": 0}
false_positives = []
for row in rows:
    line = done[row["file"]]
    agree = line["agree"]
    counts["no_verdict" if agree is None else "agree" if agree else "disagree"] += 1
    kb_correct = line["kernelbench"].get("correctness") if "error" not in line["kernelbench"] else None
    if row.get("correct") and not kb_correct:
        false_positives.append(row["file"])

print(f"kb-judge: {len(rows)} files: {counts['agree']} agree, {counts['disagree']} disagree, "
      f"{counts['no_verdict']} without a KernelBench verdict; verdicts in {out}", file=sys.stderr)
if false_positives:
    print("kb-judge: kforge called these correct, KernelBench did not: " + ", ".join(false_positives),
          file=sys.stderr)
sys.exit(1 if false_positives else 0)
PY
