"""Costs derived from a reference file alone, without exporting it: the check of the derivation
against the bundled tasks' hand-written costs (tests/scripts/test_cost.py) and the sweep over a
KernelBench copy (`python3 -m kforge_tasks.cost_check KB_DIR`, docs/tasks.md, "Derived costs").

The model is built on fake tensors, so not even its parameters are allocated, unless its
constructor reads values (`.item()`), as the import's real build does.
"""

import argparse
import json
import sys
from pathlib import Path

from torch._subclasses.fake_tensor import FakeTensorMode

from . import cost, program, small_variant
from .lifted import Lifted, model_state
from .schema import TaskError


def traces(path, symtabs):
    """One cost.Trace per symbol table (None: the module's own sizes)."""
    out = []
    for syms in symtabs:
        module = program.load(path, syms)
        probe = program.Probe(module, path)
        model = _model(module, path)
        program.lift_tensor_attributes(model, path)
        params, buffers = model_state(model, path)
        lifted = Lifted(model, probe, [n for n, _ in params], [n for n, _ in buffers])
        out.append(cost.trace(lifted, probe, params + buffers))
    return out


def probe_symbols(symtabs):
    """A symbol table that tells apart size symbols whose values coincide in every variant
    (batch_size and height both 128, then both 63), or None when none do. Its sizes are the last
    variant's, moved apart by distinct even steps, so odd sizes stay odd."""
    if len(symtabs) < 2:
        return None
    varying = [s for s in symtabs[0] if len({t[s] for t in symtabs}) > 1]
    columns = [tuple(t[s] for t in symtabs) for s in varying]
    if len(set(columns)) == len(columns):
        return None
    return {**symtabs[-1], **{s: symtabs[-1][s] + 2 * (i + 1) for i, s in enumerate(varying)}}


def derive(path, known, symtabs):
    """cost.derive over `known` traces (one per symtab), with the probe variant traced too when
    some sizes coincide and the program accepts it."""
    probe = probe_symbols(symtabs)
    if probe is not None:
        try:
            return cost.derive(known + traces(path, [probe]), symtabs + [probe])
        except Exception:  # the program refuses the probe's sizes: the variants alone decide
            pass
    return cost.derive(known, symtabs)


def derive_built(path, built, symtabs):
    """(cost, notes) for the variants the exporter built (exporter.Built), or (None, notes)."""
    try:
        known = [cost.trace(b.lifted, b.probe, b.params + b.buffers) for b in built]
        return derive(path, known, symtabs)
    except Exception as e:  # an op the fake run cannot take: the import goes on without a cost
        return None, [f"no derived cost: the counting run failed: {type(e).__name__}: {program._first_line(e)}"]


def _model(module, path):
    try:
        with FakeTensorMode(allow_non_fake_inputs=True):
            return program.make_model(module, path, 0)
    except TaskError:  # a constructor that reads values: built for real, as the import builds it
        return program.make_model(module, path, 0)


def derive_task(task_dir):
    """(derived cost or None, notes) for a task folder, over its default and declared variants."""
    doc = json.loads((Path(task_dir) / "task.json").read_text())
    symtabs = [doc["symbols"]] + [{**doc["symbols"], **v["symbols"]} for v in doc.get("variants", [])]
    path = Path(task_dir) / doc["reference"]
    return derive(path, traces(path, symtabs), symtabs)


def derive_problem(path):
    """(derived cost or None, notes) for a KernelBench file: its sizes and the small variant the
    import would derive (sizes only; nothing is exported)."""
    module = program.load(path)
    declared = program.int_globals(module)
    probe = program.Probe(module, path)
    model = _model(module, path)
    program.lift_tensor_attributes(model, path)
    state = [tuple(t.shape) for _, t in list(model.named_parameters()) + list(model.named_buffers())]
    default = traces(path, [declared])
    for symbols in small_variant.plans(path, declared, probe, state):  # the first plan the program accepts
        overrides = small_variant.shrink(path, declared, symbols)
        if not overrides:
            continue
        small = {**declared, **overrides}
        if small_variant._param_shapes(path, small) not in (None, state):
            continue  # the import refuses a variant that changes the parameters' shapes
        try:
            known = default + traces(path, [small])
        except Exception:  # the program refuses these sizes: the import tries the next plan too
            continue
        return derive(path, known, [declared, small])
    return cost.derive(default, [declared])


def main(argv=None):
    ap = argparse.ArgumentParser(description="derive costs for every KernelBench problem, print one JSON line each")
    ap.add_argument("kernelbench", help="a KernelBench copy (its level1..3 folders, or KernelBench/ inside)")
    ap.add_argument("--levels", default="1,2,3")
    args = ap.parse_args(argv)
    root = Path(args.kernelbench)
    got = 0
    problems = []
    for level in [int(x) for x in args.levels.split(",")]:
        folder = next((d for d in (root / f"level{level}", root / "KernelBench" / f"level{level}") if d.is_dir()), None)
        if folder is None:
            print(f"error: no level{level} folder in {root}", file=sys.stderr)
            return 2
        problems += [(level, p) for p in sorted(folder.glob("*.py"))]
    for level, path in problems:
        try:
            derived, notes = derive_problem(path)
        except (TaskError, Exception) as e:  # a problem the tracer cannot run: counted, named
            derived, notes = None, [f"no derived cost: {type(e).__name__}: {program._first_line(e)}"]
        got += derived is not None
        print(json.dumps({"level": level, "problem": path.name, "cost": derived, "notes": notes}), flush=True)
    print(f"derived costs: {got} of {len(problems)} problems", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
