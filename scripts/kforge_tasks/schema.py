"""task.json (kforge.task/1) constants and validation, mirroring docs/formats.md."""

import re
from pathlib import Path

from . import expr

SCHEMA = "kforge.task/1"
DTYPES = ("float32", "float16", "bfloat16", "float64", "int64", "int32", "int8", "uint8", "bool")
DISTS = {
    "randn": set(), "rand": set(), "uniform": {"low", "high"}, "randint": {"low", "high"},
    "ones": set(), "zeros": set(),
}
TOP_FIELDS = {
    "schema", "id", "level", "tags", "license", "description", "spec", "reference", "symbols", "constants",
    "inputs", "params", "outputs", "variants", "tolerance", "conditioning", "behaviour", "domains", "cost",
    "artifacts",
}
CONDITIONING_FIELDS = ("float64_rel_l2", "float64_mismatches", "numel", "rel_l2_bound", "ill_conditioned")
CONDITIONING_OPTIONAL = ("variant", "outputs")
BEHAVIOUR_FIELDS = ("variant", "outputs", "rerun_mismatches", "degenerate", "nondeterministic")
OUTPUT_KINDS = ("varies", "constant", "zero")
REQUIRED = ("schema", "id", "tags", "description", "reference", "symbols", "inputs", "params", "outputs")


class TaskError(ValueError):
    pass


class UsageError(TaskError):
    """Bad command-line input (a missing folder, a malformed id): the exporter exits 2."""


# Task ids (docs/formats.md, "Task"): 2 to 8 segments of at most 128 characters, each starting
# with a letter, digit or '_' and going on with letters, digits, '_', '.' and '-'. No empty
# segment, no '.' or '..', no leading '/': an id is always a folder below the task root.
_SEGMENT = r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}"
# The C++ loader's CheckLicense (src/common/task.cc) accepts the same.
LICENSE_RE = re.compile(r"[A-Za-z0-9.+()-](?:[A-Za-z0-9 .+()-]{0,62}[A-Za-z0-9.+()-])?")
ID_RE = re.compile(rf"{_SEGMENT}(?:/{_SEGMENT}){{1,7}}")


def check_id(task_id, what="id"):
    """Raises UsageError unless `task_id` matches the id grammar."""
    if not isinstance(task_id, str) or not ID_RE.fullmatch(task_id):
        shown = task_id[:80] if isinstance(task_id, str) else repr(task_id)[:80]
        raise UsageError(f"{what} '{shown}': expected <suite>/.../<name>, 2 to 8 segments of 1 to 128 letters, digits, "
                         "'_', '.' and '-' that do not start with '.' or '-'")
    return task_id


def task_dir(root, task_id, what="id"):
    """ROOT/<id>, checked to stay inside ROOT once symbolic links are followed."""
    check_id(task_id, what)
    root = Path(root)
    dest = root / task_id
    real_root, real_dest = root.resolve(), dest.resolve()
    if real_dest == real_root or real_root not in real_dest.parents:
        raise UsageError(f"{what} '{task_id}': {dest} resolves to {real_dest}, outside {real_root}")
    return dest


def make_root(root):
    """Creates the output root (and its parents); a one-line UsageError when that is impossible."""
    try:
        Path(root).mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise UsageError(f"--out {root}: {e.strerror or e}") from None
    if not Path(root).is_dir():
        raise UsageError(f"--out {root}: not a folder")


def _fail(path, msg):
    raise TaskError(f"{path}: {msg}")


def _check_keys(obj, allowed, path, required=()):
    if not isinstance(obj, dict):
        _fail(path, "expected an object")
    for key in obj:
        if key not in allowed:
            _fail(f"{path}.{key}", "unknown field")
    for key in required:
        if key not in obj:
            _fail(f"{path}.{key}", "missing")


def _check_number(v, path):
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        _fail(path, "expected a number")


def _check_tensor_spec(spec, path, symbols, structured=False):
    _check_keys(spec, {"name", "dtype", "shape", "init"} | ({"structure"} if structured else set()), path,
                ("name", "dtype", "shape"))
    if not isinstance(spec["name"], str) or not spec["name"]:
        _fail(f"{path}.name", "expected a non-empty string")
    if spec["dtype"] not in DTYPES:
        _fail(f"{path}.dtype", f"unsupported dtype '{spec['dtype']}'")
    if not isinstance(spec["shape"], list):
        _fail(f"{path}.shape", "expected a list")
    for i, dim in enumerate(spec["shape"]):
        try:
            value = expr.evaluate(dim, symbols)
        except expr.ExprError as e:
            _fail(f"{path}.shape[{i}]", str(e))
        if value < 0:
            _fail(f"{path}.shape[{i}]", f"negative size {value}")
    if "structure" in spec and (spec["structure"] not in ("lower", "upper", "symmetric") or len(spec["shape"]) < 2):
        _fail(f"{path}.structure", "expected lower, upper or symmetric, on a tensor of two dimensions or more")
    if "init" in spec:
        init = spec["init"]
        if not isinstance(init, dict) or init.get("dist") not in DISTS:
            _fail(f"{path}.init.dist", f"expected one of {', '.join(DISTS)}")
        extra = DISTS[init["dist"]]
        _check_keys(init, {"dist", "scale", "shift", "factor"} | extra, f"{path}.init", tuple(extra))
        for key in init:
            if key not in ("dist", "factor"):
                _check_number(init[key], f"{path}.init.{key}")
        if "factor" in init:
            factor = init["factor"]
            if not isinstance(factor, dict):
                _fail(f"{path}.init.factor", "expected an object {low, high}")
            _check_keys(factor, {"low", "high"}, f"{path}.init.factor", ("low", "high"))
            for key in ("low", "high"):
                _check_number(factor[key], f"{path}.init.factor.{key}")
            if not factor["low"] < factor["high"]:
                _fail(f"{path}.init.factor", "low must be below high")


def validate(doc, task_id=None):
    """Raises TaskError naming the JSON path of the first problem in a kforge.task/1 document."""
    _check_keys(doc, TOP_FIELDS, "task", REQUIRED)
    if doc["schema"] != SCHEMA:
        _fail("task.schema", f"expected '{SCHEMA}', got {doc['schema']!r}")
    if task_id is not None and doc["id"] != task_id:
        _fail("task.id", f"'{doc['id']}' does not match the folder '{task_id}'")
    if not isinstance(doc["id"], str) or not ID_RE.fullmatch(doc["id"]):
        _fail("task.id", "expected '<suite>/.../<name>' (docs/formats.md, \"Task\")")
    if not isinstance(doc["tags"], list) or not all(isinstance(t, str) for t in doc["tags"]):
        _fail("task.tags", "expected a list of strings")
    for key in ("description", "reference") + (("spec",) if "spec" in doc else ()):
        if not isinstance(doc[key], str):
            _fail(f"task.{key}", "expected a string")
    if "license" in doc and (not isinstance(doc["license"], str) or not LICENSE_RE.fullmatch(doc["license"])):
        _fail("task.license", "expected an SPDX licence id such as 'MIT' or 'Apache-2.0' (1 to 64 letters, "
              "digits, spaces and .+-())")
    if "level" in doc and (isinstance(doc["level"], bool) or not isinstance(doc["level"], int)):
        _fail("task.level", "expected an integer")
    symbols = doc["symbols"]
    if not isinstance(symbols, dict):
        _fail("task.symbols", "expected an object")
    for name, value in symbols.items():
        if not name.isidentifier() or isinstance(value, bool) or not isinstance(value, int):
            _fail(f"task.symbols.{name}", "expected an identifier mapped to an integer")
    for name, value in doc.get("constants", {}).items():
        _check_number(value, f"task.constants.{name}")
    variants = doc.get("variants", [])
    if not isinstance(variants, list):
        _fail("task.variants", "expected a list")
    seen = {"default"}
    all_symbols = [symbols]
    for i, v in enumerate(variants):
        path = f"task.variants[{i}]"
        _check_keys(v, {"name", "symbols", "kind"}, path, ("name", "symbols"))
        if v.get("kind", "declared") not in ("declared", "derived"):
            _fail(f"{path}.kind", f"{v['kind']!r} is not 'declared' or 'derived'")
        if not isinstance(v["name"], str) or v["name"] in seen:
            _fail(f"{path}.name", f"duplicate or invalid variant name {v['name']!r}")
        seen.add(v["name"])
        for name in v["symbols"]:
            if name not in symbols:
                _fail(f"{path}.symbols.{name}", "not a task symbol")
        all_symbols.append({**symbols, **v["symbols"]})
    names = set()
    for group in ("inputs", "params", "outputs"):
        if not isinstance(doc[group], list):
            _fail(f"task.{group}", "expected a list")
        for i, spec in enumerate(doc[group]):
            for syms in all_symbols:
                _check_tensor_spec(spec, f"task.{group}[{i}]", syms, structured=group == "inputs")
            if spec["name"] in names:
                _fail(f"task.{group}[{i}].name", f"duplicate tensor name '{spec['name']}'")
            names.add(spec["name"])
    for i, spec in enumerate(doc["outputs"]):
        if spec["name"] != f"out{i}":
            _fail(f"task.outputs[{i}].name", f"expected 'out{i}'")
    if "tolerance" in doc:
        _check_keys(doc["tolerance"], {"atol", "rtol"}, "task.tolerance")
        for key, value in doc["tolerance"].items():
            _check_number(value, f"task.tolerance.{key}")
    if "conditioning" in doc:
        _check_conditioning(doc["conditioning"])
    if "behaviour" in doc:
        _check_behaviour(doc["behaviour"])
    if "domains" in doc:
        _check_domains(doc["domains"], {s["name"]: s for s in doc["inputs"]})
    if "cost" in doc:
        _check_keys(doc["cost"], {"flops", "bytes", "derived"}, "task.cost")
        derived = doc["cost"].get("derived")
        if "derived" in doc["cost"] and (not isinstance(derived, str) or not derived):
            _fail("task.cost.derived", "expected the counter's name and version")
        for key, text in doc["cost"].items():
            if key == "derived":
                continue
            for syms in all_symbols:
                try:
                    expr.evaluate(text, syms)
                except expr.ExprError as e:
                    _fail(f"task.cost.{key}", str(e))
    if "artifacts" in doc:
        _check_artifacts(doc["artifacts"], seen)


def _check_behaviour(b):
    path = "task.behaviour"
    _check_keys(b, set(BEHAVIOUR_FIELDS), path, BEHAVIOUR_FIELDS)
    if not isinstance(b["outputs"], dict) or any(v not in OUTPUT_KINDS for v in b["outputs"].values()):
        _fail(f"{path}.outputs", f"expected {{output: one of {', '.join(OUTPUT_KINDS)}}}")
    if isinstance(b["rerun_mismatches"], bool) or not isinstance(b["rerun_mismatches"], int) or \
            b["rerun_mismatches"] < 0:
        _fail(f"{path}.rerun_mismatches", "expected an integer >= 0")
    for key in ("degenerate", "nondeterministic"):
        if not isinstance(b[key], bool):
            _fail(f"{path}.{key}", "expected true or false")


def _check_domains(domains, inputs):
    if not isinstance(domains, list):
        _fail("task.domains", "expected a list")
    for i, d in enumerate(domains):
        path = f"task.domains[{i}]"
        _check_keys(d, {"name", "inputs", "float64_rel_l2", "float64_mismatches"}, path, ("name", "inputs"))
        if not isinstance(d["inputs"], dict) or not d["inputs"]:
            _fail(f"{path}.inputs", "expected {input name: init}")
        for name, init in d["inputs"].items():
            if name not in inputs:
                _fail(f"{path}.inputs.{name}", "not an input of the task")
            spec = {k: v for k, v in inputs[name].items() if k != "structure"}  # a domain keeps the input's
            _check_tensor_spec({**spec, "shape": [], "init": init}, f"{path}.inputs.{name}", {})


def _check_conditioning(c):
    path = "task.conditioning"
    _check_keys(c, set(CONDITIONING_FIELDS + CONDITIONING_OPTIONAL), path, CONDITIONING_FIELDS)
    for key in ("float64_rel_l2", "rel_l2_bound"):
        if key == "float64_rel_l2" and c[key] in (None, "inf"):
            continue
        _check_number(c[key], f"{path}.{key}")
        if c[key] < 0:
            _fail(f"{path}.{key}", "expected a number >= 0")
    for key in ("float64_mismatches", "numel"):
        if isinstance(c[key], bool) or not isinstance(c[key], int) or c[key] < 0:
            _fail(f"{path}.{key}", "expected an integer >= 0")
    if not isinstance(c["ill_conditioned"], bool):
        _fail(f"{path}.ill_conditioned", "expected true or false")


def _check_artifacts(art, variants):
    _check_keys(art, {"packages", "params", "golden"}, "task.artifacts", ("packages",))
    for variant, per_device in art["packages"].items():
        if variant not in variants:
            _fail(f"task.artifacts.packages.{variant}", "unknown variant")
        _check_keys(per_device, {"cpu", "cuda"}, f"task.artifacts.packages.{variant}")
    if "params" in art and not isinstance(art["params"], str):
        _fail("task.artifacts.params", "expected a path")
    if "golden" in art:
        _check_keys(art["golden"], {"seed", "variant", "file"}, "task.artifacts.golden",
                    ("seed", "variant", "file"))
