"""scripts/published_agreement.py: kforge's verdicts on published kernels beside KernelBench's, where a
KernelBench run that ran out of GPU memory or gave an error is no verdict, not a refusal."""

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def write_lines(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def setup(tmp_path, kernelbench):
    """Four kernels kforge judged ok, mismatch, ok and ok; `kernelbench` gives KernelBench's line for each."""
    statuses = ["ok", "mismatch", "ok", "ok"]
    names = [f"k{i}.json" for i in range(len(statuses))]
    (tmp_path / "manifest.json").write_text(json.dumps(
        [{"file": n, "kforge_expected": s, "kernelbench_expected": "accepts" if s == "ok" else "rejects"}
         for n, s in zip(names, statuses)]))
    write_lines(tmp_path / "verdicts.jsonl", [{"status": s, "checks": {}, "message": ""} for s in statuses])
    write_lines(tmp_path / "records-map.jsonl", [{"file": "published/" + n, "task": "kernelbench/level1/1_A",
                                                  "record": f"r{i}"} for i, n in enumerate(names)])
    write_lines(tmp_path / "kb-judge.jsonl", [{"record": f"r{i}", "kernelbench": kb} for i, kb in enumerate(kernelbench)])


def run(tmp_path):
    return subprocess.run([sys.executable, str(REPO / "scripts/published_agreement.py"), str(tmp_path / "manifest.json"),
                           str(tmp_path), "95"], capture_output=True, text=True)


CORRECT = {"compiled": True, "correctness": True, "metadata": {}}
INCORRECT = {"compiled": True, "correctness": False, "metadata": {}}
OUT_OF_MEMORY = {"compiled": True, "correctness": False, "metadata": {
    "runtime_error_name": "torch.OutOfMemoryError", "runtime_error": "CUDA out of memory. Tried to allocate 8.00 GiB."}}


def test_out_of_memory_and_errors_are_no_verdict(tmp_path):
    setup(tmp_path, [CORRECT, INCORRECT, OUT_OF_MEMORY, {"error": "judge exited 1: illegal address"}])
    done = run(tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "4 published kernels: 2 judged by both, 2 agree, 0 disagree: agreement 100.0% (goal 95%); " \
           "2 without a verdict from both" in done.stdout
    rows = [json.loads(line) for line in (tmp_path / "agreement.jsonl").read_text().splitlines()]
    assert [r["agreement"] for r in rows] == ["agree", "agree", "-", "-"]
    assert rows[2]["kernelbench"] == "no verdict: ran out of GPU memory"
    assert (tmp_path / "agreement.md").read_text().startswith("| kernel | task | kforge |")


def test_a_disagreement_below_the_goal_fails_and_is_named(tmp_path):
    setup(tmp_path, [CORRECT, CORRECT, INCORRECT, CORRECT])
    done = run(tmp_path)
    assert done.returncode == 1
    assert "4 judged by both, 2 agree, 2 disagree: agreement 50.0%" in done.stdout
    assert "disagreement: k1.json (kernelbench/level1/1_A): kforge mismatch" in done.stdout
    assert "disagreement: k2.json" in done.stdout
