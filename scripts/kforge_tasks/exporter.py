"""Exports one task: task.json, reference.py, per-variant per-device .pt2 packages, params, golden.

Shapes come from FakeTensor runs of get_inputs() and of the exported graph, so no full-size input
is ever allocated; real tensors are drawn only for the golden file (small tasks) and to fit the
init of inputs that get_inputs() derives in non-affine ways.
"""

import copy
import json
import os
import re
import shutil
import sys
from pathlib import Path

import torch
from safetensors.torch import save_file
from torch._subclasses.fake_tensor import FakeTensorMode
from torch.export.pt2_archive._package import package_pt2

from . import behaviour, conditioning, cost_check, expr, program, provenance, rnn_shapes, shapes, small_variant
from .lifted import Lifted, model_state
from .schema import SCHEMA, TaskError, validate

GOLDEN_LIMIT = 64 << 20  # inputs + outputs of the golden file
OBSERVE_LIMIT = 512 << 20  # materialise inputs to fit inexact init descriptions
FLOAT64_LIMIT = 4 << 30  # float64 copies of the state and inputs for the conditioning run
FIELD_ORDER = ("schema", "id", "level", "tags", "license", "description", "spec", "reference", "symbols",
               "constants", "inputs", "params", "outputs", "variants", "tolerance", "conditioning", "behaviour", "domains", "cost",
               "artifacts")


def _export(lifted, probe, state, device):
    mode = FakeTensorMode(allow_non_fake_inputs=True)
    with mode:
        args = [torch.empty(s, dtype=getattr(torch, d), device=device) for _, _, s, d, _ in probe.tensors]
        args += [torch.empty_strided(t.shape, t.stride(), dtype=t.dtype, device=device) for _, t in state]
    try:
        with rnn_shapes.fake_rnn_shapes():
            ep = torch.export.export(lifted, tuple(args), strict=False)
    except TaskError:
        raise
    except Exception as e:
        raise TaskError(f"torch.export failed: {type(e).__name__}: {program._first_line(e)}") from None
    ep.example_inputs = None  # fake tensors; NativeRT gets real ones at run time
    outs = [n for n in ep.graph.nodes if n.op == "output"][0].args[0]
    out_specs = []
    for i, node in enumerate(outs):
        val = node.meta.get("val") if hasattr(node, "meta") else None
        if not isinstance(val, torch.Tensor):
            raise TaskError(f"output {i} is not a tensor")
        out_specs.append((f"out{i}", tuple(val.shape), program.dtype_name(val.dtype, f"output {i}")))
    return ep, out_specs


def _observe(t):
    f = t.detach().double()
    if f.numel() == 0:
        return None
    return (f.min().item(), f.max().item(), f.mean().item(), f.std().item() if f.numel() > 1 else 0.0)


class Built:
    """One variant, exported: probe, state, packages by device, output specs."""

    def __init__(self, name, symbols, probe, params, buffers, out_specs, packages):
        self.name, self.symbols, self.probe = name, symbols, probe
        self.params, self.buffers = params, buffers
        self.out_specs, self.packages = out_specs, packages


def build_variant(path, name, symbols, overrides, devices, seed, workdir, log):
    module = program.load(path, overrides)
    probe = program.Probe(module, path)
    model = program.make_model(module, path, seed)
    lifted_attrs = program.lift_tensor_attributes(model, path)
    params, buffers = model_state(model, path)
    lifted = Lifted(model, probe, [n for n, _ in params], [n for n, _ in buffers])
    packages, out_specs = {}, None
    for device in devices:
        if device != "cpu":
            model.to(device)
        ep, specs = _export(lifted, probe, params + buffers, device)
        if out_specs is not None and specs != out_specs:
            raise TaskError(f"variant {name}: outputs differ between devices")
        out_specs = specs
        file = f"ref.{name}.{device}.pt2"
        package_pt2(str(workdir / file), exported_programs={"forward": ep})
        packages[device] = file
        log(f"  exported {name}/{device}")
    model.to("cpu")
    built = Built(name, symbols, probe, params, buffers, out_specs, packages)
    built.module, built.model, built.lifted = module, model, lifted
    built.notes = [f"plain tensor attribute '{n}' lifted into a buffer, a param of the task" for n in lifted_attrs]
    return built


def _observed_inits(probe, items):
    """({name: init}, {name: structure}, notes) from the probe's tags, fitted to `items` (real inputs)
    when given; the structures (triangular, symmetric) seen in `items`, else in the tags."""
    inits, structures, notes = {}, {}, []
    for pos, name, shape, dt, tag in probe.tensors:
        observed = _observe(items[pos]) if items is not None else None
        init, exact = provenance.init_spec(tag, observed)
        inits[name] = init
        structure = provenance.structure_of(items[pos]) if items is not None else (tag or {}).get("structure")
        if structure:
            structures[name] = structure
            notes.append(f"input '{name}': {structure} structure, kept on every draw")
        if not exact:
            how = "fitted to observed values" if observed else "base distribution only (too large to observe)"
            notes.append(f"input '{name}': init approximated ({how})")
    return inits, structures, notes


def _materialise(probe, seed):
    items = probe.materialise(seed)
    for pos, name, shape, dt, _ in probe.tensors:
        t = items[pos]
        if not isinstance(t, torch.Tensor) or tuple(t.shape) != shape or program.dtype_name(t.dtype, name) != dt:
            raise TaskError(f"get_inputs() is not deterministic in shape/dtype for input '{name}'")
    return items


def _golden_and_inits(default, small, seed, workdir, golden_limit, tolerance, hand_inits):
    """Writes golden.safetensors for the default variant when it is small enough, else for the
    derived `small` variant when there is one. Returns (golden artifact or None, inits, structures,
    notes, measures: {conditioning, behaviour, domains, tolerance} of the golden variant, or {})."""
    probe = default.probe
    out_bytes = sum(program.nbytes(s, d) for _, s, d in default.out_specs)
    fits = probe.bytes + out_bytes <= golden_limit
    need_observe = any(not (tag or {}).get("exact", False) for *_, tag in probe.tensors)
    observe = fits or (need_observe and probe.bytes <= OBSERVE_LIMIT)
    items = _materialise(probe, seed) if observe else None
    small_items = None
    if items is None and small is not None:
        small_items = _materialise(small.probe, seed)  # same positions, same draws, smaller
        inits, structures, notes = _observed_inits(probe, small_items)
    else:
        inits, structures, notes = _observed_inits(probe, items)
    chosen = default if fits else small
    if chosen is None:
        notes.append(f"golden omitted: inputs+outputs are {(probe.bytes + out_bytes) >> 20} MiB "
                     f"(limit {golden_limit >> 20} MiB)")
        return None, inits, structures, notes, {}
    chosen_items = items if chosen is default else (small_items or _materialise(chosen.probe, seed))
    tensors = [chosen_items[pos] for pos, *_ in chosen.probe.tensors]
    state = [t for _, t in chosen.params + chosen.buffers]
    rng = torch.get_rng_state()
    try:
        with torch.no_grad():
            eager = chosen.lifted(*tensors, *state)
    except (MemoryError, RuntimeError) as e:
        if "alloc" not in str(e) and not isinstance(e, MemoryError):
            raise
        notes.append("golden omitted: the eager run ran out of memory")
        return None, inits, structures, notes, {}
    golden = {f"input.{name}": chosen_items[pos].contiguous() for pos, name, *_ in chosen.probe.tensors}
    golden.update({f"output.{n}": o.detach().contiguous() for (n, _, _), o in zip(chosen.out_specs, eager)})
    save_file(golden, str(workdir / "golden.safetensors"))
    measures = _measure(chosen, tensors, state, chosen_items, eager, tolerance, rng, seed,
                        {**inits, **hand_inits}, structures, notes)
    return {"seed": seed, "variant": chosen.name, "file": "golden.safetensors"}, inits, structures, notes, measures


def _measure(chosen, tensors, state, items, eager, tolerance, rng, seed, inits, structures, notes):
    """{conditioning, behaviour, domains, tolerance} of the golden run (docs/tasks.md, "What the
    import measures"); keys absent where nothing could be measured."""
    names = [n for n, _, _ in chosen.out_specs]
    written = tolerance is not None
    tol = conditioning.task_tolerance(tolerance, [dtype for _, _, dtype in chosen.out_specs])
    noise_tol = tol  # noise is decided under the written or default tolerance, never a derived one
    accurate = _float64_run(chosen, tensors, state, eager, rng, notes)
    out = {}
    if accurate is not None:
        derived = None if written else conditioning.tolerance_for(accurate, eager, tol)
        if derived:
            notes.append(f"tolerance derived: float32 rounding of the reference exceeds atol=rtol="
                         f"{tol['atol']:g}; a float64-exact kernel passes at {derived['atol']:g}")
            tol = derived
            out["tolerance"] = derived
        measured = conditioning.record(accurate, eager, tol, names, chosen.name, noise_tol)
        if measured:
            out["conditioning"] = measured
            flagged = conditioning.note(measured)
            if flagged:
                notes.append(flagged)
    try:
        out["behaviour"] = behaviour.measure(chosen.lifted, chosen.probe, state, seed, tensors, eager, accurate,
                                             tol, names, chosen.name, noise_tol)
        out["domains"] = behaviour.choose_domains(chosen.lifted, chosen.probe, items, state, inits, tol, rng,
                                                  noise_tol, structures)
    except (MemoryError, RuntimeError) as e:
        notes.append(f"behaviour not measured: {type(e).__name__}: {program._first_line(e)}")
    notes.extend(behaviour.notes(out.get("behaviour"), out.get("domains", [])))
    return out


def _float64_run(chosen, tensors, state, eager, rng, notes):
    """The golden run again in float64 (docs/tasks.md, "Conditioning"), or None with a note.

    functional_call swaps in every parameter and buffer, so the same model (same mode: training
    stays training) runs on float64 copies of the state; `rng` replays the golden run's draws.
    """
    if not any(o.is_floating_point() for o in eager):
        return None
    copies = sum(8 * t.numel() for t in tensors + state if isinstance(t, torch.Tensor) and t.is_floating_point())
    if copies > FLOAT64_LIMIT:
        notes.append(f"conditioning not measured: float64 copies of the parameters and inputs would take "
                     f"{copies >> 20} MiB (limit {FLOAT64_LIMIT >> 20} MiB)")
        return None
    torch.set_rng_state(rng)
    try:
        return conditioning.run_in_float64(chosen.lifted, tensors, state)
    except Exception as e:  # a reference that only runs in float32: the import goes on
        notes.append(f"conditioning not measured: the float64 run failed: {type(e).__name__}: "
                     f"{program._first_line(e)}")
        return None


def _tensor_specs(entries, variants, hand, single):
    """entries: {name: [(shape, dtype) per variant]} -> [TensorSpec] with symbolic shapes."""
    hand = {s["name"]: s for s in hand or []}
    specs = []
    for name, per_variant in entries.items():
        dtype = per_variant[0][1]
        if name in hand:
            shape = hand[name]["shape"]
            for (actual, _), syms in zip(per_variant, variants):
                got = [expr.evaluate(d, syms) for d in shape]
                if tuple(got) != tuple(actual):
                    raise TaskError(f"task.json: shape of '{name}' evaluates to {got}, program gives {list(actual)}")
            if hand[name].get("dtype", dtype) != dtype:
                raise TaskError(f"task.json: dtype of '{name}' is {hand[name]['dtype']}, program gives {dtype}")
        else:
            shape = shapes.infer(name, [s for s, _ in per_variant], variants, single)
        specs.append({"name": name, "dtype": dtype, "shape": shape})
    return specs


def build(path, task_id, out_dir, base=None, devices=("cpu",), seed=0, golden_limit=GOLDEN_LIMIT,
          symbols_from_module=False, log=lambda m: None):
    """Builds the task folder out_dir (replaced atomically). base: hand-written task.json fields."""
    path = Path(path)
    base = dict(base or {})
    out_dir = Path(out_dir)
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    work = out_dir.parent / f".{out_dir.name}.tmp{os.getpid()}"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir()
    try:
        doc, notes = _build_into(path, task_id, work, base, devices, seed, golden_limit, symbols_from_module, log)
        _replace_dir(work, out_dir)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    return doc, notes


def _check_same_state(default, b):
    if [(n, tuple(t.shape)) for n, t in b.params + b.buffers] != \
       [(n, tuple(t.shape)) for n, t in default.params + default.buffers]:
        raise TaskError(f"variant '{b.name}' changes parameter shapes; variants may change input shapes only")
    if b.probe.constants != default.probe.constants or [t[1] for t in b.probe.tensors] != [t[1] for t in default.probe.tensors]:
        raise TaskError(f"variant '{b.name}' changes the inputs' names or constants")


def _derive_small(path, declared, default, devices, seed, work, log):
    """(the `small` variant built, notes), or (None, notes saying why there is none)."""
    param_shapes = [tuple(t.shape) for _, t in default.params + default.buffers]
    why = "no module-level integer sizes an input alone"
    for symbols in small_variant.plans(path, declared, default.probe, param_shapes):
        try:
            overrides = small_variant.shrink(path, declared, symbols)
            if overrides is None:
                why = "no smaller sizes fit its size limit"
                continue
            syms = {**declared, **overrides}
            b = build_variant(path, small_variant.NAME, syms, syms, devices, seed, work, log)
            _check_same_state(default, b)
            for group in ("tensors", "outputs"):
                _expressible(default, b, group)
            return b, []
        except TaskError as e:
            why = str(e)
        except Exception as e:  # the program refuses these sizes
            why = f"{type(e).__name__}: {program._first_line(e)}"
        for device in devices:
            (work / f"ref.{small_variant.NAME}.{device}.pt2").unlink(missing_ok=True)
    return None, [f"no small variant: {why}"]


def _expressible(default, small, group):
    """Raises TaskError unless every input (group "tensors") or output shape of the two variants
    can be written over the symbols."""
    pairs = zip(default.probe.tensors, small.probe.tensors) if group == "tensors" else \
        zip(default.out_specs, small.out_specs)
    for a, b in pairs:
        name, sa, sb = (a[1], a[2], b[2]) if group == "tensors" else (a[0], a[1], b[1])
        shapes.infer(name, [sa, sb], [default.symbols, small.symbols], False)


def _build_into(path, task_id, work, base, devices, seed, golden_limit, symbols_from_module, log):
    declared = base.get("symbols")
    if declared is None:
        declared = program.int_globals(program.load(path)) if symbols_from_module else {}
    variant_defs = [("default", dict(declared))]
    for v in base.get("variants", []):
        variant_defs.append((v["name"], {**declared, **v["symbols"]}))
    built = []
    for name, syms in variant_defs:
        built.append(build_variant(path, name, syms, syms if base.get("symbols") is not None else None,
                                   devices, seed, work, log))
    default = built[0]
    for b in built[1:]:
        _check_same_state(default, b)
    small, small_notes = None, []
    if symbols_from_module and base.get("symbols") is None and not base.get("variants"):
        small, small_notes = _derive_small(path, declared, default, devices, seed, work, log)
        if small:
            built.append(small)
            variant_defs.append((small.name, small.symbols))
    symtabs = [b.symbols for b in built]
    single = len(built) == 1
    hand_inits = {s["name"]: s["init"] for s in base.get("inputs", []) if "init" in s}
    golden, inits, structures, notes, measured = _golden_and_inits(default, small, seed, work, golden_limit,
                                                                   base.get("tolerance"), hand_inits)
    notes = default.notes + small_notes + notes
    inputs = _tensor_specs({n: [(b.probe.tensors[i][2], b.probe.tensors[i][3]) for b in built]
                            for i, (_, n, *_r) in enumerate(default.probe.tensors)},
                           symtabs, base.get("inputs"), single)
    hand_structures = {s["name"]: s["structure"] for s in base.get("inputs", []) if "structure" in s}
    for spec in inputs:
        spec["init"] = hand_inits.get(spec["name"], inits[spec["name"]])
        structure = hand_structures.get(spec["name"], structures.get(spec["name"]))
        if structure:
            spec["structure"] = structure
    state = default.params + default.buffers
    params = _tensor_specs({n: [(tuple(t.shape), program.dtype_name(t.dtype, n))] * len(built) for n, t in state},
                           symtabs, base.get("params"), single)
    outputs = _tensor_specs({n: [(b.out_specs[i][1], b.out_specs[i][2]) for b in built]
                             for i, (n, _, _) in enumerate(default.out_specs)},
                            symtabs, base.get("outputs"), single)
    if state:
        save_file({n: t.contiguous() for n, t in state}, str(work / "params.safetensors"))
    shutil.copyfile(path, work / "reference.py")
    doc = {k: v for k, v in base.items() if k not in ("conditioning", "behaviour")}  # measured again below
    doc.update({"schema": SCHEMA, "id": task_id, "reference": "reference.py",
                "symbols": declared, "inputs": inputs, "params": params, "outputs": outputs})
    if small:
        doc["variants"] = [{"name": small.name, "kind": "derived", "symbols": {k: v for k, v in small.symbols.items()
                                                            if declared.get(k) != v}}]
    for key in ("tolerance", "conditioning", "behaviour"):
        if key in measured:
            doc[key] = measured[key]
    if measured.get("domains") and "domains" not in base:
        doc["domains"] = measured["domains"]
    if default.probe.constants:
        doc["constants"] = default.probe.constants
    if "cost" not in base:  # hand-written costs are kept as written
        derived, cost_notes = cost_check.derive_built(path, built, symtabs)
        notes.extend(cost_notes)
        if derived:
            doc["cost"] = derived
    artifacts = {"packages": {b.name: b.packages for b in built}}
    if state:
        artifacts["params"] = "params.safetensors"
    if golden:
        artifacts["golden"] = golden
    doc["artifacts"] = artifacts
    doc = {k: doc[k] for k in FIELD_ORDER if k in doc}
    validate(doc)
    (work / "task.json").write_text(dumps(doc))
    return doc, notes


def dumps(doc):
    """JSON with two-space indent and lists of scalars (shapes) kept on one line."""
    text = json.dumps(doc, indent=2)
    scalar_list = re.compile(r"\[\n\s*([^\[\]{}\n]+(?:,\n\s*[^\[\]{}\n]+)*)\n\s*\]")
    return scalar_list.sub(lambda m: "[" + ", ".join(x.strip() for x in m.group(1).split(",\n")) + "]", text) + "\n"


def _replace_dir(src, dst):
    if dst.exists():
        old = dst.parent / f".{dst.name}.old{os.getpid()}"
        os.rename(dst, old)
        os.rename(src, dst)
        shutil.rmtree(old, ignore_errors=True)
    else:
        os.rename(src, dst)
