#!/usr/bin/env python3
"""KernelBench's own judge on a kforge KernelBench export (scripts/kb-judge.sh says how to call it).

  kb_judge.py EXPORT_DIR KERNELBENCH_DIR OUT_JSONL

For every file of EXPORT_DIR/index.jsonl: its extension built on the CPU, then KernelBench's
eval_kernel_against_ref with what was built (scripts/kb_eval.py, one process per step), and one line in
OUT_JSONL with kforge's verdict beside KernelBench's. Files are judged as they are built; builds are kept a
directory per file and content; a rerun judges only the files without a verdict.
"""
import hashlib
import json
import os
import subprocess
import sys
import tempfile
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait

from kb_eval import out_of_memory

KB_EVAL = os.path.join(os.path.dirname(os.path.abspath(__file__)), "kb_eval.py")
BUILT = "kb-judge-built"  # written into a build directory once its build succeeded


def log(text):
    print("kb-judge: " + text, file=sys.stderr)


def one_line(text, limit=300):
    return " ".join(text.split())[-limit:]


def judge_env(build_jobs):
    """The environment of every step. Each file's extension build runs ninja with as many jobs as there are
    cores; KB_JOBS builds at once share them instead. KernelBench's eval.py imports `requests` for its remote
    mode only; where it is not installed (a GPU machine without network), an empty stand-in is put on the path."""
    env = dict(os.environ)
    env.setdefault("MAX_JOBS", str(max(1, (os.cpu_count() or 1) // build_jobs)))
    if subprocess.run([sys.executable, "-c", "import requests"], capture_output=True).returncode != 0:
        stand_in = tempfile.mkdtemp(prefix="kb-judge-shims-")
        with open(os.path.join(stand_in, "requests.py"), "w") as f:
            f.write('"""Stand-in: KernelBench imports requests only for remote evaluation."""\n')
        env["PYTHONPATH"] = stand_in + os.pathsep + env.get("PYTHONPATH", "")
    return env


class Steps:
    """kb_eval.py's two steps for the files of one export, with the builds kept in `builds`."""

    def __init__(self, export_dir, kb, builds, env, trials, timeout):
        self.export_dir, self.kb, self.builds, self.env = export_dir, kb, builds, env
        self.trials, self.timeout = trials, timeout

    def run(self, args):
        """The JSON line of one kb_eval.py step, or {"error"} saying why there is none."""
        try:
            done = subprocess.run([sys.executable, KB_EVAL, *args], capture_output=True, text=True,
                                  timeout=self.timeout, stdin=subprocess.DEVNULL, env=self.env)
        except subprocess.TimeoutExpired:
            return {"error": f"{args[0]} timed out after {self.timeout} s"}
        lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
        if done.returncode == 0 and lines:
            try:
                return json.loads(lines[-1])
            except json.JSONDecodeError:
                pass
        return {"error": f"{args[0]} exited {done.returncode}: {one_line(done.stderr or done.stdout)}"}

    def source(self, row):
        return os.path.join(self.export_dir, row["file"])

    def build_dir(self, row):
        with open(self.source(row), "rb") as f:
            digest = hashlib.sha256(f.read()).hexdigest()[:12]
        return os.path.join(self.builds, os.path.splitext(row["file"])[0] + "-" + digest)

    def build(self, row):
        """The build step's line for a file; a file built before (same content) is not built again."""
        where = self.build_dir(row)
        if os.path.exists(os.path.join(where, BUILT)):
            return {"compiled": True, "reused": True}
        built = self.run(["build", self.kb, self.source(row), where])
        if built.get("compiled"):
            os.makedirs(where, exist_ok=True)
            open(os.path.join(where, BUILT), "w").close()
        return built

    def verdict(self, row):
        reference = os.path.join(self.kb, row["problem"])
        if not os.path.exists(reference):
            return {"error": f"no problem file {reference}"}
        return self.run(["judge", self.kb, reference, self.source(row), self.build_dir(row),
                         "--trials", self.trials])


def judged_before(out):
    """The lines of OUT_JSONL that have KernelBench's verdict (an error or a run out of memory is none), by file."""
    done = {}
    if not os.path.exists(out):
        return done
    with open(out) as f:
        for text in f:
            try:
                line = json.loads(text)
            except json.JSONDecodeError:
                continue
            verdict = line.get("kernelbench", {"error": ""})
            if "error" not in verdict and not out_of_memory(verdict):
                done[line["file"]] = line
    return done


def record(row, verdict):
    kb_correct = verdict.get("correctness") if "error" not in verdict else None
    agree = None if kb_correct is None else bool(kb_correct) == bool(row.get("correct"))
    return {"file": row["file"], "task": row["task"], "problem": row["problem"], "record": row.get("record"),
            "kforge": {k: row.get(k) for k in ("correct", "speedup", "status")}, "kernelbench": verdict,
            "agree": agree}


class Sink:
    """OUT_JSONL, rewritten with the lines kept, then a line appended as each file is judged: a run stopped
    midway keeps what it judged."""

    def __init__(self, out, done, total):
        self.done, self.total = done, total
        with open(out + ".tmp", "w") as f:
            for line in done.values():
                f.write(json.dumps(line, default=str) + "\n")
        os.replace(out + ".tmp", out)
        self.file = open(out, "a")

    def keep(self, row, verdict):
        self.done[row["file"]] = record(row, verdict)
        self.file.write(json.dumps(self.done[row["file"]], default=str) + "\n")
        self.file.flush()
        kb_text = verdict.get("error") or f"compiled={verdict.get('compiled')} correct={verdict.get('correctness')}"
        print(f"kb-judge [{len(self.done)}/{self.total}] {row['file']}: kforge correct={row.get('correct')}, "
              f"KernelBench {kb_text}", file=sys.stderr)

    def close(self):
        self.file.close()


def judge_all(steps, todo, sink, build_jobs, gpu_jobs):
    """Builds `todo`, build_jobs at once, and judges each file as soon as its build is done (a file that does
    not build is judged too: its verdict says so). A file that ran out of GPU memory beside other judges is
    judged again alone, after the others: its first verdict is the neighbours', not KernelBench's."""
    crowded = []
    built = {"compiled": 0, "reused": 0, "failed": 0}
    with ThreadPoolExecutor(max_workers=build_jobs) as builders, ThreadPoolExecutor(max_workers=gpu_jobs) as judges:
        pending = {builders.submit(steps.build, row): ("build", row) for row in todo}
        while pending:
            finished, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in finished:
                kind, row = pending.pop(future)
                if kind == "build":
                    result = future.result()
                    built["reused" if result.get("reused") else "compiled" if result.get("compiled") else "failed"] += 1
                    if sum(built.values()) == len(todo):
                        log(f"{len(todo) - built['failed']} of {len(todo)} files built ({built['reused']} built "
                            f"before), {build_jobs} at once; judged {gpu_jobs} at once as they are built")
                    pending[judges.submit(steps.verdict, row)] = ("judge", row)
                    continue
                verdict = future.result()
                if gpu_jobs > 1 and out_of_memory(verdict):
                    crowded.append(row)
                    continue
                sink.keep(row, verdict)
    if crowded:
        log(f"{len(crowded)} files ran out of GPU memory beside the others; judging them alone")
    for row in crowded:
        sink.keep(row, steps.verdict(row))


def summarize(rows, done, out):
    """The summary line; exit 1 when kforge called a file correct that KernelBench did not (or gave no verdict on)."""
    counts = {"agree": 0, "disagree": 0, "no_verdict": 0}
    false_positives = []
    for row in rows:
        line = done[row["file"]]
        agree = line["agree"]
        counts["no_verdict" if agree is None else "agree" if agree else "disagree"] += 1
        kb_correct = line["kernelbench"].get("correctness") if "error" not in line["kernelbench"] else None
        if row.get("correct") and not kb_correct:
            false_positives.append(row["file"])
    log(f"{len(rows)} files: {counts['agree']} agree, {counts['disagree']} disagree, "
        f"{counts['no_verdict']} without a KernelBench verdict; verdicts in {out}")
    if false_positives:
        log("kforge called these correct, KernelBench did not: " + ", ".join(false_positives))
    return 1 if false_positives else 0


def main(argv):
    if len(argv) != 4:
        sys.exit("usage: kb_judge.py EXPORT_DIR KERNELBENCH_DIR OUT_JSONL")
    export_dir, kb, out = argv[1:4]
    with open(os.path.join(export_dir, "index.jsonl")) as f:
        rows = [json.loads(line) for line in f if line.strip()]
    limit = int(os.environ.get("KB_LIMIT", "0"))
    if limit > 0:
        rows = rows[:limit]
    build_jobs = max(1, int(os.environ.get("KB_JOBS", "4")))
    gpu_jobs = max(1, int(os.environ.get("KB_GPU_JOBS", "1")))
    steps = Steps(export_dir, kb, os.environ.get("KB_BUILD_DIR") or out + ".builds", judge_env(build_jobs),
                  os.environ.get("KB_TRIALS", "5"), int(os.environ.get("KB_TIMEOUT", "900")))

    done = judged_before(out)
    if done:
        log(f"{len(done)} files already judged in {out}; judging the other {len(rows) - len(done)}")
    sink = Sink(out, done, len(rows))
    try:
        judge_all(steps, [row for row in rows if row["file"] not in done], sink, build_jobs, gpu_jobs)
    finally:
        sink.close()
    return summarize(rows, done, out)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
