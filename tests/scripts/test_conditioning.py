"""The float64 rerun at import (docs/tasks.md, "Conditioning"): task.json's `conditioning` and the note."""

import json
import math
import sys
from pathlib import Path

import pytest
import torch

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "scripts"))

from kforge_tasks import conditioning, schema  # noqa: E402
from preloaded import EXPORT_REFERENCE  # noqa: E402

# Training-mode BatchNorm over a batch of two rows that differ by a few ulps: the output is the
# rows' difference over sqrt(eps), so float32 rounding of the inputs' mean is most of it.
ILL = '''import torch
B, C = 2, 64
class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.bn = torch.nn.BatchNorm1d(C)
    def forward(self, x):
        return self.bn(x)
def get_inputs():
    return [torch.rand(1, C) * 0.5 + 1 + torch.randn(B, C) * 1e-6]
'''

WELL = '''import torch
class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(16, 8)
    def forward(self, x):
        return torch.relu(self.fc(x))
def get_inputs():
    return [torch.randn(4, 16)]
'''


def run(*args):
    proc = EXPORT_REFERENCE.run(*args)
    return proc.returncode, proc.stdout, proc.stderr


def import_module(tmp_path, name, source):
    ref = tmp_path / f"{name}.py"
    ref.write_text(source)
    code, _, stderr = run("module", ref, "--out", tmp_path / "out", "--id", f"user/{name}", "--device", "cpu")
    assert code == 0, stderr
    doc = json.loads((tmp_path / f"out/user/{name}/task.json").read_text())
    schema.validate(doc, f"user/{name}")
    return doc, stderr


def test_the_module_is_ill_conditioned_in_float32():
    namespace = {}
    exec(ILL, namespace)
    torch.manual_seed(0)
    model = namespace["Model"]()
    x = namespace["get_inputs"]()[0]
    with torch.no_grad():
        single = model(x)
        double = model.double()(x.double())
    rel = float((single.double() - double).norm() / single.double().norm())
    assert rel > 1e-2, rel


def test_ill_conditioned_reference_is_flagged(tmp_path):
    doc, stderr = import_module(tmp_path, "ill", ILL)
    c = doc["conditioning"]
    assert c["ill_conditioned"] is True
    assert c["rel_l2_bound"] == 1e-3 and c["float64_rel_l2"] > 1e-2
    assert c["numel"] == 2 * 64
    notes = [line for line in stderr.splitlines() if "ill-conditioned" in line]
    assert len(notes) == 1 and notes[0].startswith("note user/ill: ill-conditioned: a float64 run"), stderr
    assert "no kernel can be judged against it" in notes[0]


def test_well_conditioned_reference_is_recorded_unflagged(tmp_path):
    doc, stderr = import_module(tmp_path, "well", WELL)
    c = doc["conditioning"]
    assert c["ill_conditioned"] is False and c["float64_mismatches"] == 0 and c["numel"] == 32
    assert 0 <= c["float64_rel_l2"] < 1e-6
    assert "ill-conditioned" not in stderr


def test_no_field_without_golden_or_floating_outputs(tmp_path):
    big = ("import torch\nclass Model(torch.nn.Module):\n    def forward(self, x):\n        return torch.relu(x)\n"
           "def get_inputs():\n    return [torch.randn(20_000_000)]\n")  # 80 MB in, 80 MB out: no golden
    doc, stderr = import_module(tmp_path, "big", big)
    assert "golden" not in doc["artifacts"] and "conditioning" not in doc
    argmax = ("import torch\nclass Model(torch.nn.Module):\n    def forward(self, x):\n"
              "        return torch.argmax(x, dim=1)\ndef get_inputs():\n    return [torch.randn(4, 16)]\n")
    doc, _ = import_module(tmp_path, "argmax", argmax)
    assert "golden" in doc["artifacts"] and "conditioning" not in doc


def test_reference_that_cannot_run_in_float64_imports_with_a_note(tmp_path):
    fixed = ("import torch\nclass Model(torch.nn.Module):\n    def forward(self, x):\n"
             "        return x @ torch.ones(16, 4, dtype=torch.float32)\n"
             "def get_inputs():\n    return [torch.randn(4, 16)]\n")
    doc, stderr = import_module(tmp_path, "fixed", fixed)
    assert "conditioning" not in doc and "golden" in doc["artifacts"]
    assert "note user/fixed: conditioning not measured: the float64 run failed: RuntimeError" in stderr


def test_no_float64_run_over_the_memory_limit(tmp_path, monkeypatch):
    from kforge_tasks import exporter
    base = {"tags": [], "description": "d"}
    ref = tmp_path / "well.py"
    ref.write_text(WELL)
    monkeypatch.setattr(exporter, "FLOAT64_LIMIT", 8 * (16 * 8 + 8 + 4 * 16) - 1)  # one element short
    doc, notes = exporter.build(ref, "user/well", tmp_path / "out/user/well", base=base, symbols_from_module=True)
    assert "conditioning" not in doc and "golden" in doc["artifacts"]
    assert "conditioning not measured: float64 copies of the parameters and inputs would take 0 MiB" in notes[-1]
    monkeypatch.setattr(exporter, "FLOAT64_LIMIT", 8 * (16 * 8 + 8 + 4 * 16))
    doc, _ = exporter.build(ref, "user/well", tmp_path / "out/user/well", base=base, symbols_from_module=True)
    assert doc["conditioning"]["ill_conditioned"] is False


def test_task_tolerance_sets_the_bound(tmp_path):
    src = tmp_path / "src" / "ill"
    src.mkdir(parents=True)
    (src / "reference.py").write_text(ILL)
    (src / "task.json").write_text(json.dumps({
        "schema": "kforge.task/1", "id": "user/ill", "tags": [], "description": "d", "reference": "reference.py",
        "symbols": {"B": 2, "C": 64}, "inputs": [], "params": [], "outputs": [], "tolerance": {"rtol": 1.0},
        "conditioning": {"stale": True}}))
    code, _, stderr = run("task", src, "--out", tmp_path / "out", "--device", "cpu", "--rederive")
    assert code == 0, stderr
    c = json.loads((tmp_path / "out/user/ill/task.json").read_text())["conditioning"]
    assert c["rel_l2_bound"] == 10.0 and c["ill_conditioned"] is False and c["float64_mismatches"] == 0
    code, _, stderr = run("task", src, "--specs-only", "--device", "cpu", "--rederive")
    assert code == 0, stderr
    assert "conditioning" not in json.loads((src / "task.json").read_text())  # goes with the golden file


def test_bulk_import_notes_and_counts_ill_conditioned_problems(tmp_path):
    level = tmp_path / "kb" / "level1"
    level.mkdir(parents=True)
    (level / "1_Ill.py").write_text(ILL)
    (level / "2_Well.py").write_text(WELL)
    code, stdout, stderr = run("bulk-kernelbench", tmp_path / "kb", "--out", tmp_path / "out", "--levels", "1",
                               "--device", "cpu")
    assert code == 0, stdout + stderr
    assert "note kernelbench/level1/1_Ill: ill-conditioned: " in stdout, stdout
    assert "2_Well: ill-conditioned" not in stdout
    assert "level1: 2/2 imported, 0 failed, 1 ill-conditioned" in stdout, stdout


def test_record_follows_the_judge():
    tol = {"atol": 1e-4, "rtol": 1e-4}
    golden = torch.tensor([1.0, 2.0, 3.0])
    exact = conditioning.record([golden.double()], [golden], tol)
    assert exact == {"float64_rel_l2": 0.0, "float64_mismatches": 0, "numel": 3, "rel_l2_bound": 1e-3,
                     "ill_conditioned": False, "variant": "default",
                     "outputs": {"out0": {"float64_rel_l2": 0.0, "noise": False}}}
    off = conditioning.record([golden.double() * 1.01], [golden], tol)
    assert off["ill_conditioned"] and off["float64_mismatches"] == 3 and math.isclose(off["float64_rel_l2"], 0.01)
    # An output whose float32 values are rounding noise around a float64 zero is judged by elements
    # alone: no relative L2, no flag.
    noise = conditioning.record([torch.full((3,), 5e-5, dtype=torch.float64)], [torch.zeros(3)], tol)
    assert noise["float64_rel_l2"] is None and not noise["ill_conditioned"] and noise["float64_mismatches"] == 0
    assert noise["outputs"]["out0"] == {"float64_rel_l2": None, "noise": True}
    # Values below atol that float32 carries faithfully keep their scale (softmax over many classes).
    small = torch.tensor([4e-6, 1e-6, 2.5e-6])
    scaled = conditioning.record([small.double()], [small], tol)
    assert scaled["outputs"]["out0"]["noise"] is False and scaled["float64_rel_l2"] < 1e-6
    overflow = conditioning.record([golden.double()], [torch.tensor([1.0, 2.0, math.inf])], tol)
    assert overflow["float64_rel_l2"] == "inf" and overflow["ill_conditioned"]
    assert conditioning.record([torch.tensor([1, 2])], [torch.tensor([1, 2])], tol) is None


def test_tolerance_defaults_as_the_loader_does():
    assert conditioning.task_tolerance(None, ["float32"]) == {"atol": 1e-4, "rtol": 1e-4}
    assert conditioning.task_tolerance(None, ["float32", "bfloat16"]) == {"atol": 1e-2, "rtol": 1e-2}
    assert conditioning.task_tolerance({"atol": 0.5}, ["float16", "float32"]) == {"atol": 0.5, "rtol": 1e-2}
    assert conditioning.rel_l2_bound({"atol": 0, "rtol": 1e-5}) == 1e-3
    assert conditioning.rel_l2_bound({"atol": 0, "rtol": 1e-3}) == 1e-2


def test_schema_checks_the_field():
    doc = json.loads((REPO / "tasks/demo/relu/task.json").read_text())
    doc["conditioning"] = {"float64_rel_l2": 0.5, "float64_mismatches": 3, "numel": 8, "rel_l2_bound": 1e-3,
                           "ill_conditioned": True}
    schema.validate(doc)
    for key, value, says in [("ill_conditioned", "yes", "expected true or false"),
                             ("float64_rel_l2", -1, "expected a number >= 0"),
                             ("numel", 1.5, "expected an integer >= 0")]:
        bad = json.loads(json.dumps(doc))
        bad["conditioning"][key] = value
        with pytest.raises(schema.TaskError, match=f"task.conditioning.{key}: {says}"):
            schema.validate(bad)
    del doc["conditioning"]["numel"]
    with pytest.raises(schema.TaskError, match="task.conditioning.numel: missing"):
        schema.validate(doc)
