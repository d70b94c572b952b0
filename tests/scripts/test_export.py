"""Tests of scripts/export_reference.py: task.json per docs/formats.md, params/golden, reload parity."""

import json
import os
import shutil
import sys
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "scripts"))

from kforge_tasks import expr, schema  # noqa: E402
from preloaded import EXPORT_REFERENCE  # noqa: E402
from torch.export.pt2_archive._package import load_pt2  # noqa: E402


def run(*args):
    proc = EXPORT_REFERENCE.run(*args)
    return proc.returncode, proc.stdout, proc.stderr


def copy_task(src, tmp_path):
    dst = tmp_path / "src" / src.name
    shutil.copytree(src, dst)
    return dst


def run_package(task_dir, variant, inputs, params_doc):
    package = task_dir / json.loads((task_dir / "task.json").read_text())["artifacts"]["packages"][variant]["cpu"]
    ep = load_pt2(str(package)).exported_programs["forward"]
    params = load_file(str(task_dir / "params.safetensors")) if params_doc else {}
    return ep.module()(*inputs, *[params[p["name"]] for p in params_doc])


@pytest.fixture(scope="module")
def built_demo(tmp_path_factory):
    out = tmp_path_factory.mktemp("out")
    code, stdout, stderr = run("task", REPO / "tasks/demo/vector_add", "--out", out, "--device", "cpu")
    assert code == 0, stderr
    return out / "demo/vector_add"


def test_demo_task_json_is_valid(built_demo):
    doc = json.loads((built_demo / "task.json").read_text())
    schema.validate(doc, "demo/vector_add")
    assert [i["name"] for i in doc["inputs"]] == ["a", "b"]
    assert doc["inputs"][0]["shape"] == ["N"] and doc["inputs"][0]["init"] == {"dist": "randn"}
    assert doc["outputs"] == [{"name": "out0", "dtype": "float32", "shape": ["N"]}]
    assert doc["artifacts"]["packages"] == {"default": {"cpu": "ref.default.cpu.pt2"},
                                            "odd": {"cpu": "ref.odd.cpu.pt2"}}
    assert doc["artifacts"]["golden"] == {"seed": 0, "variant": "default", "file": "golden.safetensors"}
    assert (built_demo / "reference.py").read_text() == (REPO / "tasks/demo/vector_add/reference.py").read_text()


def test_golden_matches_reloaded_package(built_demo):
    doc = json.loads((built_demo / "task.json").read_text())
    golden = load_file(str(built_demo / "golden.safetensors"))
    assert sorted(golden) == ["input.a", "input.b", "output.out0"]
    assert golden["input.a"].shape == (doc["symbols"]["N"],)
    out = run_package(built_demo, "default", [golden["input.a"], golden["input.b"]], doc["params"])
    torch.testing.assert_close(out[0], golden["output.out0"], rtol=0, atol=0)
    torch.testing.assert_close(out[0], golden["input.a"] + golden["input.b"])


def test_variant_package_runs_odd_shape(built_demo):
    doc = json.loads((built_demo / "task.json").read_text())
    n = expr.evaluate(doc["inputs"][0]["shape"][0], {**doc["symbols"], **doc["variants"][0]["symbols"]})
    assert n == 1000003
    a, b = torch.randn(n), torch.randn(n)
    out = run_package(built_demo, "odd", [a, b], doc["params"])
    torch.testing.assert_close(out[0], a + b)


def test_params_are_lifted_inputs(tmp_path):
    src = REPO / "tasks/core/linear_bias_relu"
    code, _, stderr = run("task", src, "--out", tmp_path, "--device", "cpu")
    assert code == 0, stderr
    task_dir = tmp_path / "core/linear_bias_relu"
    doc = json.loads((task_dir / "task.json").read_text())
    assert [p["name"] for p in doc["params"]] == ["fc.weight", "fc.bias"]
    assert doc["params"][0]["shape"] == ["OUT", "IN"]
    params = load_file(str(task_dir / "params.safetensors"))
    assert sorted(params) == ["fc.bias", "fc.weight"]
    golden = load_file(str(task_dir / "golden.safetensors"))
    x = golden["input.x"]
    expected = torch.relu(x @ params["fc.weight"].T + params["fc.bias"])
    torch.testing.assert_close(golden["output.out0"], expected)
    # Different parameter values flow through: the package holds no weights of its own.
    w = torch.randn_like(params["fc.weight"])
    ep = load_pt2(str(task_dir / "ref.default.cpu.pt2")).exported_programs["forward"]
    torch.testing.assert_close(ep.module()(x, w, params["fc.bias"])[0], torch.relu(x @ w.T + params["fc.bias"]))


def test_constants_and_derived_init(tmp_path):
    ref = tmp_path / "prog.py"
    ref.write_text(
        "import torch\nN = 64\n"
        "class Model(torch.nn.Module):\n"
        "    def forward(self, x, mask, k: float):\n        return (x * k * mask,)\n"
        "def get_inputs():\n"
        "    return [torch.rand(N, N) * 2 - 1, torch.randint(0, 2, (N, N)).float() * 2 - 1, 3.0]\n"
        "def get_init_inputs():\n    return []\n")
    code, _, stderr = run("module", ref, "--out", tmp_path / "out", "--id", "user/prog", "--device", "cpu")
    assert code == 0, stderr
    doc = json.loads((tmp_path / "out/user/prog/task.json").read_text())
    schema.validate(doc, "user/prog")
    assert doc["constants"] == {"k": 3.0}
    assert doc["symbols"] == {"N": 64}
    assert doc["inputs"][0]["init"] == {"dist": "rand", "scale": 2, "shift": -1}
    assert doc["inputs"][1]["init"] == {"dist": "randint", "low": 0, "high": 2, "scale": 2, "shift": -1}



def test_a_random_scalar_factor_is_kept_as_the_inputs_factor(tmp_path):
    # KernelBench's loss problems scale one input by `torch.rand(())`, a new number on every draw: without
    # it every draw of a large input gives the same mean, and a kernel returning that constant passes.
    ref = tmp_path / "loss.py"
    ref.write_text(
        "import torch\nN = 64\n"
        "class Model(torch.nn.Module):\n"
        "    def forward(self, p, t, q):\n        return torch.mean((p - t) ** 2) + q.sum()\n"
        "def get_inputs():\n"
        "    scale = torch.rand(())\n"
        "    return [torch.rand(N, N) * scale, torch.rand(N, N), (torch.rand(N) * scale).softmax(dim=-1)]\n"
        "def get_init_inputs():\n    return []\n")
    code, _, stderr = run("module", ref, "--out", tmp_path / "out", "--id", "user/loss", "--device", "cpu")
    assert code == 0, stderr
    doc = json.loads((tmp_path / "out/user/loss/task.json").read_text())
    schema.validate(doc, "user/loss")
    assert doc["inputs"][0]["init"] == {"dist": "rand", "factor": {"low": 0, "high": 1}}
    assert doc["inputs"][1]["init"] == {"dist": "rand"}
    # Through a softmax the draw is fitted from observed values, and keeps its factor.
    assert doc["inputs"][2]["init"]["factor"] == {"low": 0, "high": 1}
    assert doc["inputs"][2]["init"]["dist"] == "rand" and doc["inputs"][2]["init"]["scale"] > 0
    bad = dict(doc, inputs=[dict(doc["inputs"][0], init={"dist": "rand", "factor": {"low": 1, "high": 1}})] + doc["inputs"][1:])
    with pytest.raises(schema.TaskError, match="factor"):
        schema.validate(bad, "user/loss")


def test_triangular_and_symmetric_inputs_keep_their_structure(tmp_path):
    # KernelBench's level1/13, 14 and 15: get_inputs makes symmetric or triangular matrices, and a kernel
    # may rely on it. A dense draw would make a correct kernel that skips the zero half fail.
    ref = tmp_path / "structured.py"
    ref.write_text(
        "import torch\nN = 48\n"
        "class Model(torch.nn.Module):\n"
        "    def forward(self, a, b, c, d):\n        return torch.tril(a @ b) + c @ d\n"
        "def get_inputs():\n"
        "    a = torch.tril(torch.rand(N, N))\n    b = torch.rand(N, N).triu()\n"
        "    c = torch.rand(N, N)\n    c = (c + c.T) / 2\n"
        "    return [a, b, c, torch.rand(N, N)]\n"
        "def get_init_inputs():\n    return []\n")
    code, _, stderr = run("module", ref, "--out", tmp_path / "out", "--id", "user/structured", "--device", "cpu")
    assert code == 0, stderr
    doc = json.loads((tmp_path / "out/user/structured/task.json").read_text())
    schema.validate(doc, "user/structured")
    assert [i.get("structure") for i in doc["inputs"]] == ["lower", "upper", "symmetric", None]
    assert doc["inputs"][0]["init"] == {"dist": "rand"}, "a triangle of an exact draw keeps the draw"
    for domain in doc.get("domains", []):
        assert "structure" not in json.dumps(domain), "a domain replaces the init, the input keeps its structure"
    bad = dict(doc, inputs=[dict(doc["inputs"][0], structure="diagonal")] + doc["inputs"][1:])
    with pytest.raises(schema.TaskError, match="structure"):
        schema.validate(bad, "user/structured")
    bad = dict(doc, outputs=[dict(doc["outputs"][0], structure="lower")])
    with pytest.raises(schema.TaskError, match="structure"):
        schema.validate(bad, "user/structured")


def test_structure_seen_in_values_and_tags():
    from kforge_tasks import behaviour, provenance
    x = torch.rand(3, 5, 5)
    assert provenance.structure_of(x) is None
    assert provenance.structure_of(x.tril()) == "lower" and provenance.structure_of(x.triu()) == "upper"
    assert provenance.structure_of(x + x.mT) == "symmetric"
    assert provenance.structure_of(torch.zeros(4, 4)) is None and provenance.structure_of(torch.eye(4)) is None
    assert provenance.structure_of(torch.rand(4, 5).tril()) is None, "only square matrices"
    gen = torch.Generator().manual_seed(1)
    drawn = behaviour.draw({"dist": "rand"}, (6, 6), "float32", gen, "symmetric")
    assert torch.equal(drawn, drawn.mT)
    assert provenance.structure_of(behaviour.draw({"dist": "randn"}, (6, 6), "float32", gen, "upper")) == "upper"


BAD_PROGRAMS = {
    "no_get_inputs": ("import torch\nclass Model(torch.nn.Module):\n    def forward(self, x):\n        return x\n",
                      "no get_inputs defined"),
    "syntax_error": ("import torch\nclass Model(torch.nn.Module)\n    pass\n", "SyntaxError"),
    "complex_dtype": ("import torch\nclass Model(torch.nn.Module):\n    def forward(self, x):\n        return x * 2\n"
                      "def get_inputs():\n    return [torch.randn(4, dtype=torch.complex64)]\n",
                      "unsupported dtype complex64"),
    "raises": ("import torch\nclass Model(torch.nn.Module):\n    def forward(self, x):\n        return x\n"
               "def get_inputs():\n    raise ValueError('boom')\n", "get_inputs() failed: ValueError: boom"),
    "eager_run_raises": ("import torch\nclass Model(torch.nn.Module):\n    def forward(self, x):\n"
                         "        if not torch.compiler.is_exporting():\n            raise ValueError('eager boom')\n"
                         "        return x\ndef get_inputs():\n    return [torch.rand(4)]\n",
                         "ValueError: eager boom"),
}


@pytest.mark.parametrize("name", sorted(BAD_PROGRAMS))
def test_bad_program_fails_in_one_line_and_leaves_nothing(tmp_path, name):
    source, reason = BAD_PROGRAMS[name]
    ref = tmp_path / f"{name}.py"
    ref.write_text(source)
    out = tmp_path / "out"
    code, stdout, stderr = run("module", ref, "--out", out, "--id", f"user/{name}", "--device", "cpu")
    assert code == 1
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"FAIL user/{name}: "), stderr
    assert reason in lines[0]
    assert not out.exists() or not any(p.is_file() for p in out.rglob("*"))


def test_task_json_errors_name_the_path():
    doc = json.loads((REPO / "tasks/demo/relu/task.json").read_text())
    doc["inputs"][0]["dtype"] = "float8"
    with pytest.raises(schema.TaskError, match=r"task.inputs\[0\].dtype: unsupported dtype 'float8'"):
        schema.validate(doc)
    doc = json.loads((REPO / "tasks/demo/relu/task.json").read_text())
    doc["colour"] = 1
    with pytest.raises(schema.TaskError, match="task.colour: unknown field"):
        schema.validate(doc)


def all_task_dirs():
    return sorted(p.parent for p in (REPO / "tasks").glob("*/*/task.json"))


@pytest.mark.parametrize("task_dir", all_task_dirs(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_committed_task_json_is_valid(task_dir):
    doc = json.loads((task_dir / "task.json").read_text())
    schema.validate(doc, f"{task_dir.parent.name}/{task_dir.name}")
    assert doc.get("variants"), "curated tasks carry at least one extra variant"
    assert "artifacts" not in doc


def test_curated_suite_size():
    core = [p for p in all_task_dirs() if p.parent.name == "core"]
    assert len(core) >= 24


@pytest.mark.parametrize("expression,value", [
    ("cdiv(N, 256)", 4), ("-7 / 2", -3), ("-7 % 2", -1), ("2 * (N + 1) - max(3, N)", 1002), ("min(N, 5)", 5),
])
def test_expressions(expression, value):
    assert expr.evaluate(expression, {"N": 1000}) == value


@pytest.mark.parametrize("expression,message", [
    ("N / 0", "division by zero"), ("M + 1", "unknown symbol 'M'"), ("2 ** 3", "expected a number"),
    ("9223372036854775807 + 1", "64-bit overflow"),
])
def test_expression_errors(expression, message):
    with pytest.raises(expr.ExprError, match=message):
        expr.evaluate(expression, {"N": 1})


def test_bulk_import_survives_a_problem_over_the_memory_limit(tmp_path):
    level = tmp_path / "kb" / "level1"
    level.mkdir(parents=True)
    body = '''import torch
class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.big = torch.empty(%d)
    def forward(self, x):
        return x * 2
def get_inputs():
    return [torch.rand(8)]
def get_init_inputs():
    return []
'''
    (level / "1_Small.py").write_text(body % 1)
    (level / "2_Huge.py").write_text(body % (1 << 34))  # 64 GiB: over the 2 GB limit, and over the retry's
    out = tmp_path / "out"
    code, stdout, stderr = run("bulk-kernelbench", tmp_path / "kb", "--out", out, "--levels", "1",
                               "--mem-limit-gb", "2", "--device", "cpu")
    assert code == 1, stdout + stderr
    assert "ok   kernelbench/level1/1_Small" in stdout
    assert "retry kernelbench/level1/2_Huge: " in stdout and "can't allocate memory" in stdout, stdout
    assert "FAIL kernelbench/level1/2_Huge" in stdout
    assert "level1: 1/2 imported, 1 failed (1 retried alone with more memory)" in stdout
    assert (out / "kernelbench/level1/1_Small/task.json").is_file()
    assert not (out / "kernelbench/level1/2_Huge").exists()


# Each problem logs when its Model.__init__ ran (after a temporary of `big` floats was allocated),
# so that the test can tell which attempts ran at the same time, and with how many torch threads.
TIMED_PROBLEM = '''import time
import torch
class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        start = time.time()
        torch.empty(%(big)d)  # never written: no real memory, only the heap limit counts it
        time.sleep(%(sleep)s)
        with open(%(log)r, "a") as f:
            f.write(f"%(name)s {start} {time.time()} {torch.get_num_threads()}\\n")
    def forward(self, x):
        return x * 2
def get_inputs():
    %(inputs)s
    return [torch.rand(8)]
def get_init_inputs():
    return []
'''


def test_bulk_import_retries_a_problem_over_the_memory_limit_alone_with_more(tmp_path):
    from kforge_tasks import bulk
    available = bulk._available_gb()
    if available is not None and bulk.retry_limit_gb(1.5, available) < 4:
        pytest.skip(f"{available:.1f} GB of memory available: too little for a 4 GB retry")
    level = tmp_path / "kb" / "level1"
    level.mkdir(parents=True)
    log = tmp_path / "attempts.log"
    problems = {
        "1_Slow": dict(big=1, sleep=1.5, inputs="pass"),  # still running when the Mediums are refused
        "2_Medium": dict(big=1 << 29, sleep=0.5, inputs="pass"),  # 2 GiB: over 1.5 GB, under 4x that
        "3_Medium": dict(big=1 << 29, sleep=0.5, inputs="pass"),
        "4_Broken": dict(big=1, sleep=0, inputs="raise ValueError('not a memory problem')"),
    }
    for name, fields in problems.items():
        (level / f"{name}.py").write_text(TIMED_PROBLEM % dict(fields, name=name, log=str(log)))
    out = tmp_path / "out"
    code, stdout, stderr = run("bulk-kernelbench", tmp_path / "kb", "--out", out, "--levels", "1",
                               "--mem-limit-gb", "1.5", "--jobs", "2", "--device", "cpu")
    assert code == 1, stdout + stderr
    lines = stdout.splitlines()
    for name in ("2_Medium", "3_Medium"):
        first = [i for i, l in enumerate(lines) if l.startswith(f"retry kernelbench/level1/{name}: ")]
        then = [i for i, l in enumerate(lines) if l.startswith(f"ok   kernelbench/level1/{name} (")]
        assert len(first) == 1 and "can't allocate memory" in lines[first[0]], stdout
        assert len(then) == 1 and "retried alone with a" in lines[then[0]] and first[0] < then[0], stdout
        assert (out / f"kernelbench/level1/{name}/task.json").is_file()
    assert "ok   kernelbench/level1/1_Slow (" in stdout
    assert "FAIL kernelbench/level1/4_Broken: " in stdout and "not a memory problem" in stdout
    assert "retry kernelbench/level1/4_Broken" not in stdout  # other failures are final
    assert "level1: 3/4 imported, 1 failed (2 retried alone with more memory)" in stdout, stdout
    # Only the retries got past the allocation, and each ran alone: after the slow problem, one at a
    # time, with all the cores where the two workers had half each.
    attempts = [line.split() for line in log.read_text().splitlines()]
    spans = sorted((float(start), float(end), name) for name, start, end, _ in attempts)
    assert sorted(name for *_, name in spans) == ["1_Slow", "2_Medium", "3_Medium"], spans
    assert all(end <= next_start for (_, end, _), (next_start, _, _) in zip(spans, spans[1:])), spans
    cores = len(os.sched_getaffinity(0))
    assert {name: int(threads) for name, *_, threads in attempts} == \
        {"1_Slow": max(1, cores // 2), "2_Medium": cores, "3_Medium": cores}


def test_retry_limit_is_four_times_the_limit_within_the_memory_available():
    from kforge_tasks import bulk
    assert bulk.retry_limit_gb(12, None) == 48
    assert bulk.retry_limit_gb(12, 100) == 48
    assert bulk.retry_limit_gb(12, 30) == 30 - bulk.MEMORY_MARGIN_GB


STATEFUL_PROGRAM = '''import torch
B, N = 4, 8
class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(N, N)
        self.hidden = torch.randn(B, N)  # a plain tensor attribute, reassigned in forward
        self.h0 = torch.randn(B, N)      # another, never read outside __init__; forward has an input h0
    def forward(self, x, h0):
        self.hidden = self.hidden.to(x.device)
        self.hidden.mul_(0.5)
        if not hasattr(self, "steps"):   # state created by the first call
            self.steps = torch.zeros(())
        self.steps = self.steps + 1
        self.hidden = torch.tanh(self.fc(x) + self.hidden + h0)
        return self.hidden * self.steps
def get_inputs():
    return [torch.rand(B, N), torch.rand(B, N)]
def get_init_inputs():
    return []
'''


def test_tensor_attribute_reassigned_in_forward_becomes_a_buffer(tmp_path):
    ref = tmp_path / "stateful.py"
    ref.write_text(STATEFUL_PROGRAM)
    code, _, stderr = run("module", ref, "--out", tmp_path / "out", "--id", "user/stateful", "--device", "cpu")
    assert code == 0, stderr
    assert "note user/stateful: plain tensor attribute 'hidden' lifted into a buffer" in stderr
    assert "'h0' lifted" not in stderr
    task_dir = tmp_path / "out/user/stateful"
    doc = json.loads((task_dir / "task.json").read_text())
    schema.validate(doc, "user/stateful")
    assert [i["name"] for i in doc["inputs"]] == ["x", "h0"]
    assert [p["name"] for p in doc["params"]] == ["fc.weight", "fc.bias", "hidden"]
    assert doc["params"][2]["shape"] == ["B", "N"]

    # The original program, first call on a fresh model built with the exporter's seed.
    namespace = {}
    exec(compile(STATEFUL_PROGRAM, str(ref), "exec"), namespace)
    torch.manual_seed(0)
    model = namespace["Model"]()
    params = load_file(str(task_dir / "params.safetensors"))
    torch.testing.assert_close(params["hidden"], model.hidden, rtol=0, atol=0)
    golden = load_file(str(task_dir / "golden.safetensors"))
    with torch.no_grad():
        expected = model(golden["input.x"], golden["input.h0"])
    torch.testing.assert_close(golden["output.out0"], expected, rtol=0, atol=0)

    # The package carries no state from call to call and leaves its inputs alone.
    ep = load_pt2(str(task_dir / "ref.default.cpu.pt2")).exported_programs["forward"]
    state = [params[p["name"]] for p in doc["params"]]
    hidden = params["hidden"].clone()
    for _ in range(2):
        out = ep.module()(golden["input.x"], golden["input.h0"], *state)
        torch.testing.assert_close(out[0], expected)
    # Likewise in NativeRT, which runs the package for kforge (the in-place mul_ stays on a clone).
    runner = torch._C._nativert.PyModelRunner(str(task_dir / "ref.default.cpu.pt2"), "forward")
    for _ in range(2):
        torch.testing.assert_close(runner.run(golden["input.x"], golden["input.h0"], *state)[0], expected)
    torch.testing.assert_close(params["hidden"], hidden, rtol=0, atol=0)


RELU = '''import torch
class Model(torch.nn.Module):
    def forward(self, x):
        return torch.relu(x)
def get_inputs():
    return [torch.randn(8)]
'''

GOOD_IDS = ["core/softmax", "kernelbench/level1/19_ReLU", "kernelbench/level1/1_Square_.x-y", "a/b/c/d/e/f/g/h", "_/9"]
BAD_IDS = ["", "b", "../../victim", "core/..", "core/.", "core/../x", "/abs/x", "core//x", "core/x/", "core/.hidden",
           "core/-x", "core/a b", "core/x\\y", "a/b/c/d/e/f/g/h/i", "kernelbench/level1/.", "core/\u00e9",
           "core/" + "a" * 129]


@pytest.mark.parametrize("task_id", GOOD_IDS + BAD_IDS)
def test_id_grammar_matches_the_cpp_one(task_id):
    # tests/common/task_test.cc (TaskIdTest.Grammar) checks the same ids against CheckTaskId.
    if task_id in GOOD_IDS:
        assert schema.check_id(task_id) == task_id
    else:
        with pytest.raises(schema.UsageError, match="expected <suite>/.../<name>"):
            schema.check_id(task_id)


def _victim(tmp_path):
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "keep.txt").write_text("precious")
    return victim


@pytest.mark.parametrize("task_id", ["../../victim", "../victim/x", "suite/..", "kernelbench/level1/."])
def test_import_refuses_ids_that_leave_out(tmp_path, task_id):
    victim = _victim(tmp_path)
    (tmp_path / "relu.py").write_text(RELU)
    out = tmp_path / "imp" / "out"
    code, stdout, stderr = run("module", tmp_path / "relu.py", "--out", out, "--id", task_id, "--device", "cpu")
    assert code == 2, stderr
    assert len(stderr.strip().splitlines()) == 1 and "Traceback" not in stderr, stderr
    assert (victim / "keep.txt").read_text() == "precious"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["relu.py", "victim"]  # not even --out is made


def test_import_refuses_a_destination_linked_outside_out(tmp_path):
    victim = _victim(tmp_path)
    (tmp_path / "relu.py").write_text(RELU)
    out = tmp_path / "out"
    out.mkdir()
    (out / "suite").symlink_to(victim)
    code, stdout, stderr = run("module", tmp_path / "relu.py", "--out", out, "--id", "suite/keep.txt",
                               "--device", "cpu")
    assert code == 2, stderr
    assert "outside" in stderr and "Traceback" not in stderr, stderr
    assert (victim / "keep.txt").read_text() == "precious"


def test_task_json_id_cannot_leave_out(tmp_path):
    victim = _victim(tmp_path)
    task = tmp_path / "src" / "t"
    task.mkdir(parents=True)
    (task / "reference.py").write_text(RELU)
    doc = json.loads((REPO / "tasks/demo/relu/task.json").read_text())
    doc["id"] = "../../victim"
    (task / "task.json").write_text(json.dumps(doc))
    code, stdout, stderr = run("task", task, "--out", tmp_path / "out" / "x", "--device", "cpu")
    assert code == 1, stderr
    assert "FAIL" in stderr and "malformed" not in stdout and "Traceback" not in stderr, stderr
    assert (victim / "keep.txt").read_text() == "precious"


def test_bulk_file_named_dotdot_fails_alone(tmp_path):
    level = tmp_path / "kb" / "level1"
    level.mkdir(parents=True)
    (level / "..py").write_text(RELU)
    out = tmp_path / "out"
    keep = out / "kernelbench" / "level1" / "1_Kept"
    keep.mkdir(parents=True)
    (keep / "task.json").write_text("{}")
    code, stdout, stderr = run("bulk-kernelbench", tmp_path / "kb", "--out", out, "--levels", "1", "--device", "cpu")
    assert code == 1, stdout + stderr
    assert "FAIL kernelbench/level1/.: file name 'kernelbench/level1/.'" in stdout
    assert "level1: 0/1 imported, 1 failed" in stdout
    assert (keep / "task.json").read_text() == "{}"


@pytest.mark.parametrize("args,says", [
    (["bulk-kernelbench", "/nonexistent", "--out", "OUT"], "/nonexistent: not a folder"),
    (["bulk-kernelbench", "KB", "--out", "OUT", "--levels", "1,x"], "--levels '1,x'"),
    (["bulk-kernelbench", "KB", "--out", "OUT", "--levels", "2"], "no level2/ folder"),
    (["bulk-kernelbench", "EMPTYKB", "--out", "OUT", "--levels", "1"], "no problem files"),
    (["bulk-kernelbench", "KB", "--out", "/proc/nope", "--levels", "1"], "--out /proc/nope"),
    (["module", "KB", "--out", "OUT", "--id", "a/b"], "not a file"),
    (["module", "KB/level1/1_Relu.py", "--out", "/proc/nope", "--id", "a/b"], "--out /proc/nope"),
    (["task", "KB/level1", "--out", "/proc/nope"], "--out /proc/nope"),
])
def test_usage_errors_are_one_line_exit_2(tmp_path, args, says):
    (tmp_path / "kb" / "level1").mkdir(parents=True)
    (tmp_path / "kb" / "level1" / "1_Relu.py").write_text(RELU)
    (tmp_path / "empty" / "level1").mkdir(parents=True)
    names = {"KB": str(tmp_path / "kb"), "EMPTYKB": str(tmp_path / "empty"), "OUT": str(tmp_path / "out")}
    args = [names.get(a, a.replace("KB", str(tmp_path / "kb"), 1) if a.startswith("KB/") else a) for a in args]
    code, stdout, stderr = run(*args, "--device", "cpu")
    assert code == 2, stdout + stderr
    assert says in stderr, stderr
    assert len(stderr.strip().splitlines()) == 1 and "Traceback" not in stderr, stderr
    assert not (tmp_path / "out").exists()


def test_module_file_without_py_suffix_imports(tmp_path):
    ref = tmp_path / "relu_module"  # no .py: importlib found no loader for it
    ref.write_text(RELU)
    code, stdout, stderr = run("module", ref, "--out", tmp_path / "out", "--id", "user/relu", "--device", "cpu")
    assert code == 0, stderr
    assert (tmp_path / "out/user/relu/task.json").is_file()
