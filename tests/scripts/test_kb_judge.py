"""scripts/kb-judge.sh around a stand-in for KernelBench's harness/judge.py (a script that prints a verdict
line, or fails, per file): a line per file as it is judged, the agreement counts, and a rerun that keeps
the files already judged and judges only those left without a verdict."""

import json
import os
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

# The stand-in judge: correct unless the kernel file says "wrong"; a kernel file saying "fail" makes it
# exit 1 the first time (a marker file remembers), as a judge stopped midway leaves a file unjudged.
JUDGE = '''
import json, os, sys
reference, model_new = sys.argv[1], sys.argv[2]
text = open(model_new).read()
with open(os.environ["KB_STANDIN_LOG"], "a") as log:
    log.write(os.path.basename(model_new) + "\\n")
if "fail" in text and not os.path.exists(model_new + ".seen"):
    open(model_new + ".seen", "w").close()
    sys.exit(1)
if "big" in text and not os.path.exists(model_new + ".seen"):  # out of memory the first time, beside others
    open(model_new + ".seen", "w").close()
    print(json.dumps({"compiled": True, "correctness": False, "metadata": {
        "runtime_error": "CUDA out of memory. Tried to allocate 8.00 GiB.", "runtime_error_name": "torch.OutOfMemoryError"}}))
    sys.exit(0)
print(json.dumps({"compiled": True, "correctness": "wrong" not in text}))
'''


def setup(tmp_path):
    kb = tmp_path / "kb"
    (kb / "harness").mkdir(parents=True)
    (kb / "harness" / "judge.py").write_text(JUDGE)
    (kb / "level1").mkdir()
    (kb / "level1" / "1_A.py").write_text("# problem\n")
    export = tmp_path / "export"
    export.mkdir()
    rows = []
    for name, text, kforge_correct in [("a.py", "ok", True), ("b.py", "wrong", True), ("c.py", "fail", True),
                                       ("d.py", "wrong", False)]:
        (export / name).write_text(text)
        rows.append({"file": name, "task": "kernelbench/level1/1_A", "problem": "level1/1_A.py",
                     "correct": kforge_correct, "status": "ok" if kforge_correct else "mismatch"})
    (export / "index.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return kb, export


def run(kb, export, out, log):
    env = dict(os.environ, KB_STANDIN_LOG=str(log), KB_JOBS="2")
    return subprocess.run(["bash", str(REPO / "scripts/kb-judge.sh"), str(export), str(kb), str(out)],
                          capture_output=True, text=True, env=env)


def lines(out):
    return {line["file"]: line for line in map(json.loads, out.read_text().splitlines())}


def test_each_file_gets_a_line_and_a_rerun_judges_only_those_left(tmp_path):
    kb, export = setup(tmp_path)
    out, log = tmp_path / "kb.jsonl", tmp_path / "judged.log"
    first = run(kb, export, out, log)
    assert first.returncode == 1, first.stderr  # b.py: kforge correct, KernelBench not
    judged = lines(out)
    assert sorted(judged) == ["a.py", "b.py", "c.py", "d.py"]
    assert judged["a.py"]["agree"] is True and judged["b.py"]["agree"] is False
    assert judged["d.py"]["agree"] is True
    assert "error" in judged["c.py"]["kernelbench"] and judged["c.py"]["agree"] is None
    assert "2 agree, 1 disagree, 1 without a KernelBench verdict" in first.stderr

    log.write_text("")
    second = run(kb, export, out, log)
    assert log.read_text().split() == ["c.py"], second.stderr
    assert "3 files already judged" in second.stderr
    judged = lines(out)
    assert sorted(judged) == ["a.py", "b.py", "c.py", "d.py"]
    assert judged["c.py"]["agree"] is True
    assert "3 agree, 1 disagree, 0 without a KernelBench verdict" in second.stderr


def test_a_file_out_of_memory_beside_others_is_judged_again_alone(tmp_path):
    kb, export = setup(tmp_path)
    (export / "e.py").write_text("big")
    with open(export / "index.jsonl", "a") as index:
        index.write(json.dumps({"file": "e.py", "task": "kernelbench/level1/1_A", "problem": "level1/1_A.py",
                                "correct": True, "status": "ok"}) + "\n")
    out, log = tmp_path / "kb.jsonl", tmp_path / "judged.log"
    first = run(kb, export, out, log)
    assert "1 files ran out of GPU memory beside the others; judging them alone" in first.stderr
    assert log.read_text().split().count("e.py") == 2 and log.read_text().split()[-1] == "e.py"
    judged = lines(out)
    assert judged["e.py"]["agree"] is True and judged["e.py"]["kernelbench"]["correctness"] is True
    assert len(out.read_text().splitlines()) == 5, "one line per file: the crowded verdict is not kept"


def test_a_rerun_judges_again_a_verdict_that_ran_out_of_memory(tmp_path):
    kb, export = setup(tmp_path)
    out, log = tmp_path / "kb.jsonl", tmp_path / "judged.log"
    run(kb, export, out, log)
    kept = lines(out)
    kept["a.py"]["kernelbench"] = {"compiled": True, "correctness": False, "metadata": {
        "runtime_error": "CUDA out of memory. Tried to allocate 6.00 GiB."}}
    out.write_text("".join(json.dumps(line) + "\n" for line in kept.values()))
    log.write_text("")
    run(kb, export, out, log)
    assert sorted(log.read_text().split()) == ["a.py", "c.py"]  # c.py: no verdict the first time
    assert lines(out)["a.py"]["kernelbench"]["correctness"] is True
