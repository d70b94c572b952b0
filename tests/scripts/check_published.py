#!/usr/bin/env python3
"""The published KernelBench solutions of tests/verify/published/, checked without a GPU:
  - manifest.json lists every solution file, and each entry has its source (URL at a commit, path),
    an SPDX licence that allows committing the file, the original's verdict and what KernelBench's
    judge is expected to say;
  - each file is a kforge solution for the task the manifest names;
  - every kernel argument has the kind of its kernel parameter (a tensor for a pointer, i32 for int,
    f32 for float...): `verify --compile-only` does not check that, the GPU check does;
  - `kforge verify --compile-only` parses and NVRTC-compiles every file against stub tasks made from
    the manifest's `tensors` (the problems' sizes), and gives the status the manifest records
    (`kforge_compile_only`: ok, or the compile_error / invalid_solution the kernel earns);
  - `kforge export --format kernelbench` renders each into a ModelNew file that Python can compile, the
    same bytes when exported again (scripts/kb-judge.sh keeps a build per file and content).

  usage: check_published.py KFORGE_BINARY [PUBLISHED_DIR]

Exit 0 when all hold, 1 otherwise (each failure on its own line)."""
import json
import os
import py_compile
import re
import subprocess
import sys
import tempfile

LICENCES = {"MIT", "Apache-2.0", "BSD-2-Clause", "BSD-3-Clause", "CC-BY-4.0"}
FIELDS = ("file", "task", "source", "source_url", "commit", "path", "license", "what", "original_verdict",
          "kernelbench_expected", "why", "kforge_compile_only", "tensors")
SCALAR_TYPES = {
    "i32": {"int", "int32_t", "signed", "signed int"},
    "u32": {"unsigned", "unsigned int", "uint32_t"},
    "i64": {"long long", "long long int", "int64_t", "long"},
    "u64": {"size_t", "uint64_t", "unsigned long long", "unsigned long"},
    "f32": {"float", "scalar_t"},
    "f64": {"double"},
}


def kernel_params(source, kernel):
    """The parameter declarations of the kernel a launch step names, or None when not found."""
    name = kernel.split("<")[0].split("::")[-1].strip()
    m = re.search(r"__global__\s+(?:__launch_bounds__\s*\([^)]*\)\s*)?void\s+" + re.escape(name) + r"\s*\(([^)]*)\)",
                  source)
    if not m:
        return None
    return [p.strip() for p in m.group(1).split(",") if p.strip()]


def argument_problems(solution):
    problems = []
    for i, step in enumerate(solution.get("launches", [])):
        if "kernel" not in step:
            continue
        params = kernel_params(solution["source"], step["kernel"])
        if params is None:
            problems.append(f"launches[{i}]: no __global__ {step['kernel']!r} found to check its arguments")
            continue
        if len(params) != len(step["args"]):
            problems.append(f"launches[{i}]: {step['kernel']} takes {len(params)} parameters, the plan passes "
                            f"{len(step['args'])}")
            continue
        for param, arg in zip(params, step["args"]):
            pointer = "*" in param
            kind = arg.split(":", 1)[0] if ":" in arg else "tensor"
            words = re.sub(r"\b(const|__restrict__|volatile)\b", " ", param).split()
            ctype = " ".join(words[:-1])
            if kind == "tensor":
                good = pointer
            elif kind == "item":
                good = True  # sized when the step runs
            elif pointer:
                good = arg == "u64:0"  # a null pointer, as a wrapper passes nullptr
            else:
                good = ctype in SCALAR_TYPES.get(kind, set())
            if not good:
                problems.append(f"launches[{i}]: {step['kernel']} parameter {param!r} gets {arg!r}")
    return problems


def main(argv):
    if len(argv) < 2:
        sys.exit(__doc__)
    kforge = argv[1]
    here = os.path.dirname(os.path.abspath(__file__))
    folder = argv[2] if len(argv) > 2 else os.path.join(here, "..", "verify", "published")
    failures = []
    with open(os.path.join(folder, "manifest.json")) as f:
        manifest = json.load(f)
    listed = [entry.get("file") for entry in manifest]
    on_disk = sorted(n for n in os.listdir(folder) if n.endswith(".json") and n != "manifest.json")
    for name in sorted(set(on_disk) - set(listed)):
        failures.append(f"{name}: not in manifest.json")
    for name in sorted(set(listed) - set(on_disk)):
        failures.append(f"manifest.json lists {name}, which is not there")
    if len(set(listed)) != len(listed):
        failures.append("manifest.json lists a file twice")

    with tempfile.TemporaryDirectory(prefix="kforge-published-") as tmp:
        tasks_root = os.path.join(tmp, "tasks")
        files, expected = [], {}
        for entry in manifest:
            name = entry.get("file", "?")
            missing = [k for k in FIELDS if k not in entry]
            if missing:
                failures.append(f"{name}: manifest entry lacks {', '.join(missing)}")
                continue
            if entry["license"] not in LICENCES:
                failures.append(f"{name}: licence {entry['license']!r} is not one that allows committing the file")
            if entry["commit"] not in entry["source_url"] or not re.fullmatch(r"[0-9a-f]{40}", entry["commit"]):
                failures.append(f"{name}: source_url must name the 40-digit commit")
            if entry["kernelbench_expected"] not in ("accepts", "rejects"):
                failures.append(f"{name}: kernelbench_expected is {entry['kernelbench_expected']!r}")
            path = os.path.join(folder, name)
            if not os.path.exists(path):
                continue
            try:
                with open(path) as f:
                    solution = json.load(f)
            except (OSError, ValueError) as e:
                failures.append(f"{name}: not JSON: {e}")
                continue
            if solution.get("task") != entry["task"]:
                failures.append(f"{name}: task {solution.get('task')!r}, the manifest says {entry['task']!r}")
                continue
            for problem in argument_problems(solution):
                failures.append(f"{name}: {problem}")
            task_dir = os.path.join(tasks_root, entry["task"])
            if not os.path.exists(os.path.join(task_dir, "task.json")):
                os.makedirs(task_dir)
                stub = {"schema": "kforge.task/1", "id": entry["task"], "tags": [], "reference": "reference.py",
                        "description": "stub for a compile check: the problem's tensors at its sizes", "symbols": {},
                        **entry["tensors"]}
                with open(os.path.join(task_dir, "task.json"), "w") as f:
                    json.dump(stub, f)
                with open(os.path.join(task_dir, "reference.py"), "w") as f:
                    f.write("# stub\n")
            files.append(path)
            expected[os.path.abspath(path)] = entry["kforge_compile_only"]

        if files:
            done = subprocess.run([kforge, "verify", "--compile-only", "--tasks", tasks_root, *files],
                                  capture_output=True, text=True, timeout=1800)
            verdicts = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
            if len(verdicts) != len(files):
                failures.append(f"verify --compile-only gave {len(verdicts)} verdicts for {len(files)} files: "
                                f"{done.stderr.strip()[-500:]}")
            for v in verdicts:
                want = expected.get(os.path.abspath(v["solution"]))
                if v["status"] != want:
                    failures.append(f"{os.path.basename(v['solution'])}: verify --compile-only says {v['status']} "
                                    f"({v['message'][:300]}), the manifest expects {want}")
            print(f"check_published: {len(verdicts)} solutions compiled: "
                  + ", ".join(f"{s} {sum(1 for v in verdicts if v['status'] == s)}"
                              for s in sorted({v['status'] for v in verdicts})))

            # The same path as scripts/gpu-published.sh up to KernelBench's judge: records, then export.
            records = os.path.join(tmp, "records.jsonl")
            verdict_file = os.path.join(tmp, "verdicts.jsonl")
            with open(verdict_file, "w") as f:
                f.write(done.stdout)
            script = os.path.join(here, "..", "..", "scripts", "published_records.py")
            made = subprocess.run([sys.executable, script, verdict_file, records, *files], capture_output=True,
                                  text=True)
            if made.returncode != 0:
                failures.append(f"published_records.py: {made.stderr.strip()[-300:]}")
            else:
                out = os.path.join(tmp, "kb-export")
                exported = subprocess.run([kforge, "export", records, "--format", "kernelbench", "--include-incorrect",
                                           "--tasks", tasks_root, "--out", out], capture_output=True, text=True)
                index = os.path.join(out, "index.jsonl")
                rows = [json.loads(l) for l in open(index)] if os.path.exists(index) else []
                if exported.returncode != 0 or len(rows) != len(files):
                    failures.append(f"export --format kernelbench wrote {len(rows)} files for {len(files)} solutions: "
                                    f"{exported.stderr.strip()[-300:]}")
                for row in rows:
                    try:
                        py_compile.compile(os.path.join(out, row["file"]), doraise=True)
                    except py_compile.PyCompileError as e:
                        failures.append(f"{row['file']} ({row['record']}): not valid Python: {str(e)[:200]}")
                # scripts/kb-judge.sh keeps a build per file and content: an export made again must be the same.
                again = os.path.join(tmp, "kb-export-again")
                subprocess.run([kforge, "export", records, "--format", "kernelbench", "--include-incorrect",
                                "--tasks", tasks_root, "--out", again], capture_output=True, text=True)
                for row in rows:
                    first, second = os.path.join(out, row["file"]), os.path.join(again, row["file"])
                    if not os.path.exists(second) or open(first, "rb").read() != open(second, "rb").read():
                        failures.append(f"{row['file']}: a second export of the same record differs")

    for failure in failures:
        print("FAIL", failure)
    print(f"check_published: {len(manifest)} manifest entries, {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
