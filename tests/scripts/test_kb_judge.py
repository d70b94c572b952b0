"""scripts/kb-judge.sh around a stand-in for KernelBench's harness (kernelbench/eval.py with
build_compile_cache and eval_kernel_against_ref, which scripts/kb_eval.py calls): every file built before
it is judged, and judged with what was built; a line per file as it is judged, the agreement counts, and a
rerun that keeps the files already judged and judges only those left without a verdict."""

import json
import os
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

# The stand-in evaluation. A build leaves a marker in its build directory (named after the file); a
# kernel file saying "nobuild" does not build. The judge logs the file, and is correct unless the kernel
# file says "wrong" or the build's marker is missing (compiled false); a kernel file saying "fail" makes
# it exit 1 the first time (a marker file remembers), as a judge stopped midway leaves a file unjudged;
# one saying "big" runs out of memory the first time, as beside other judges.
EVAL = '''
import os, sys, types


def _name(build_dir):  # the build directory is the file's stem, a dash and a digest of its content
    return os.path.basename(build_dir).rsplit("-", 1)[0] + ".py"


def build_compile_cache(custom_model_src, verbose=False, build_dir=None):
    with open(os.environ["KB_STANDIN_BUILDS"], "a") as log:
        log.write(_name(build_dir) + "\\n")
    if "nobuild" in custom_model_src:
        return False, "", "nvcc failed"
    os.makedirs(build_dir, exist_ok=True)
    open(os.path.join(build_dir, "built"), "w").close()
    return True, "", None


def eval_kernel_against_ref(original_model_src, custom_model_src, num_correct_trials=1, build_dir=None, **_):
    name = _name(build_dir)
    with open(os.environ["KB_STANDIN_LOG"], "a") as log:
        log.write(name + "\\n")
    seen = os.path.join(os.environ["KB_STANDIN_STATE"], name + ".seen")
    result = lambda **kw: types.SimpleNamespace(**{"runtime": -1, "ref_runtime": -1, "metadata": {}, **kw})
    if not os.path.exists(os.path.join(build_dir, "built")):
        return result(compiled=False, correctness=False, metadata={"compilation_error": "not built"})
    if "fail" in custom_model_src and not os.path.exists(seen):
        open(seen, "w").close()
        sys.exit(1)
    if "big" in custom_model_src and not os.path.exists(seen):
        open(seen, "w").close()
        return result(compiled=True, correctness=False, metadata={
            "runtime_error": "CUDA out of memory. Tried to allocate 8.00 GiB.",
            "runtime_error_name": "torch.OutOfMemoryError"})
    return result(compiled=True, correctness="wrong" not in custom_model_src)
'''


def setup(tmp_path):
    kb = tmp_path / "kb"
    (kb / "harness" / "kernelbench").mkdir(parents=True)
    (kb / "harness" / "kernelbench" / "__init__.py").write_text("")
    (kb / "harness" / "kernelbench" / "eval.py").write_text(EVAL)
    (tmp_path / "state").mkdir()
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


def add_file(export, name, text, kforge_correct, status):
    """One more exported file, with its line in the index."""
    (export / name).write_text(text)
    with open(export / "index.jsonl", "a") as index:
        index.write(json.dumps({"file": name, "task": "kernelbench/level1/1_A", "problem": "level1/1_A.py",
                                "correct": kforge_correct, "status": status}) + "\n")


def run(kb, export, out, log):
    env = dict(os.environ, KB_STANDIN_LOG=str(log), KB_STANDIN_BUILDS=str(log) + ".builds",
               KB_STANDIN_STATE=str(log.parent / "state"), KB_JOBS="2", KB_GPU_JOBS="2")
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

    builds = Path(str(log) + ".builds")
    assert sorted(builds.read_text().split()) == ["a.py", "b.py", "c.py", "d.py"]
    log.write_text("")
    second = run(kb, export, out, log)
    assert log.read_text().split() == ["c.py"], second.stderr
    assert len(builds.read_text().split()) == 4, "c.py was built by the first run: it is not built again"
    assert "1 of 1 files built (1 built before)" in second.stderr
    assert "3 files already judged" in second.stderr
    judged = lines(out)
    assert sorted(judged) == ["a.py", "b.py", "c.py", "d.py"]
    assert judged["c.py"]["agree"] is True
    assert "3 agree, 1 disagree, 0 without a KernelBench verdict" in second.stderr


def test_a_file_out_of_memory_beside_others_is_judged_again_alone(tmp_path):
    kb, export = setup(tmp_path)
    add_file(export, "e.py", "big", True, "ok")
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


def test_a_file_that_does_not_build_is_still_judged_and_its_verdict_says_so(tmp_path):
    kb, export = setup(tmp_path)
    add_file(export, "e.py", "nobuild", False, "compile_error")
    out, log = tmp_path / "kb.jsonl", tmp_path / "judged.log"
    first = run(kb, export, out, log)
    assert "4 of 5 files built (0 built before), 2 at once; judged 2 at once as they are built" in first.stderr
    judged = lines(out)
    assert judged["e.py"]["kernelbench"]["compiled"] is False and judged["e.py"]["agree"] is True
    assert judged["a.py"]["kernelbench"]["compiled"] is True, "the judge loads what the build step built"


def test_a_file_whose_content_changed_is_built_again(tmp_path):
    kb, export = setup(tmp_path)
    out, log = tmp_path / "kb.jsonl", tmp_path / "judged.log"
    run(kb, export, out, log)
    builds = Path(str(log) + ".builds")
    assert len(builds.read_text().split()) == 4
    (export / "c.py").write_text("ok, edited")  # c.py had no verdict: judged again, and built again
    second = run(kb, export, out, log)
    assert builds.read_text().split()[4:] == ["c.py"], second.stderr
    assert lines(out)["c.py"]["kernelbench"]["correctness"] is True
