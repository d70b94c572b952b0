"""What the import measures of a reference beyond its shapes, so the judge can trust it.

- `behaviour`: whether the outputs depend on the inputs in a way the judge can see (a second,
  independent draw whose outputs would pass as the first's are `constant`) and
  whether the reference agrees with itself run to run (a rerun under another random state). A task
  whose outputs are zero or constant whatever the input is `degenerate`: any no-op "solves" it. One
  that disagrees with itself (dropout in training mode) is `nondeterministic`: nothing can match it.
- `domains`: wider input distributions for inputs drawn from a one-signed interval (`torch.rand`),
  kept only when the reference is measured to be finite and well-conditioned on them, so that a
  kernel is tried where the function is not the identity (ReLU on [0, 1) is) without ever giving a
  reference inputs it cannot take (log, sqrt and acos keep their domain).
docs/tasks.md, "What the import measures".
"""

import torch

from . import conditioning

_WIDENABLE = ("rand", "uniform")
_RERUN_SEED_OFFSET = 7919


def draw(init, shape, dtype, gen, structure=None):
    """A tensor drawn as the C++ input generator draws distribution 0 of `init` (src/reference/inputs.cc),
    with the input's `structure` after it."""
    work = torch.float64 if dtype == "float64" else torch.float32
    dist = init["dist"]
    if dist == "randn":
        x = torch.randn(shape, generator=gen, dtype=work)
    elif dist == "rand":
        x = torch.rand(shape, generator=gen, dtype=work)
    elif dist == "uniform":
        x = torch.rand(shape, generator=gen, dtype=work) * (init["high"] - init["low"]) + init["low"]
    elif dist == "randint":
        x = torch.randint(int(init["low"]), int(init["high"]), shape, generator=gen).to(work)
    elif dist == "ones":
        x = torch.ones(shape, dtype=work)
    else:
        x = torch.zeros(shape, dtype=work)
    x = x * init.get("scale", 1) + init.get("shift", 0)
    if "factor" in init and work.is_floating_point:
        low, high = init["factor"]["low"], init["factor"]["high"]
        x = x * (low + (high - low) * torch.rand((), generator=gen, dtype=torch.float64).item())
    target = getattr(torch, dtype)
    if not target.is_floating_point:
        x = x != 0 if target == torch.bool else x.round()
    return structured(x.to(target), structure)


def structured(x, structure):
    """`x` with an input's structure over its last two dimensions, as the C++ input generator gives it."""
    if structure == "lower":
        return x.tril()
    if structure == "upper":
        return x.triu()
    if structure == "symmetric":
        return (x + x.mT) * 0.5
    return x


def _interval(init):
    """[lo, hi) of a rand/uniform init after scale and shift."""
    lo, hi = (0.0, 1.0) if init["dist"] == "rand" else (float(init["low"]), float(init["high"]))
    scale, shift = init.get("scale", 1), init.get("shift", 0)
    a, b = lo * scale + shift, hi * scale + shift
    return min(a, b), max(a, b)


def _candidates(init):
    """Wider inits for one input, in the order they are tried: signed around the centre, then wider
    on the same side."""
    lo, hi = _interval(init)
    centre, half = (lo + hi) / 2, (hi - lo) / 2
    if half <= 0:
        return []
    signed = {"dist": "uniform", "low": _round(centre - 4 * half), "high": _round(centre + 4 * half)}
    wider = {"dist": "uniform", "low": _round(lo), "high": _round(lo + 4 * (hi - lo))}
    return [("signed", signed), ("wide", wider)]


def _round(x):
    x = float(f"{x:.6g}")
    return int(x) if x.is_integer() else x


def _floating(dtype):
    return getattr(torch, dtype).is_floating_point


def _run(lifted, tensors, state, rng):
    torch.set_rng_state(rng)
    with torch.no_grad():
        return [o.detach() for o in lifted(*tensors, *state)]


def choose_domains(lifted, probe, items, state, inits, tol, rng, noise_tol=None, structures=None):
    """task.json's `domains`: for the rand/uniform floating inputs, the first wider init (all such
    inputs at once) on which the reference's float32 outputs are finite and a float64-exact kernel
    passes under `tol`. [] when none qualifies or no input is widenable."""
    widenable = [(pos, name, shape, dt) for pos, name, shape, dt, _ in probe.tensors
                 if _floating(dt) and inits[name]["dist"] in _WIDENABLE]
    if not widenable:
        return []
    tried = {}
    for pos, name, shape, dt in widenable:
        for label, init in _candidates(inits[name]):
            tried.setdefault(label, {})[name] = (pos, shape, dt, init)
    domains = []
    for label, chosen in tried.items():
        if len(chosen) != len(widenable):
            continue
        gen = torch.Generator().manual_seed(0x5EED)
        tensors = list(items)
        for name, (pos, shape, dt, init) in chosen.items():
            tensors[pos] = draw(init, shape, dt, gen, (structures or {}).get(name))
        tensors = [tensors[pos] for pos, *_ in probe.tensors]
        try:
            golden = _run(lifted, tensors, state, rng)
            torch.set_rng_state(rng)
            accurate = conditioning.run_in_float64(lifted, tensors, state)
        except Exception:  # the reference refuses these inputs: not its domain
            continue
        if not all(torch.isfinite(o).all() for o in golden if o.is_floating_point()):
            continue
        if not conditioning.judgeable(accurate, golden, tol, noise_tol=noise_tol):
            continue
        measured = conditioning.record(accurate, golden, tol, noise_tol=noise_tol)
        domains.append({"name": label, "inputs": {n: c[3] for n, c in chosen.items()},
                        "float64_rel_l2": measured["float64_rel_l2"] if measured else None,
                        "float64_mismatches": measured["float64_mismatches"] if measured else 0})
        break  # one domain: each costs a trial of every check
    return domains


def _passes(candidate, golden, tol, noise_tol):
    """True when `candidate` (the outputs of other inputs) passes the judge against `golden`: the
    judge cannot tell the output of one draw from another's."""
    if not golden.is_floating_point():
        return False
    return conditioning.judgeable([candidate.double()], [golden], tol, noise_tol=noise_tol)


def measure(lifted, probe, state, seed, tensors, golden, accurate, tol, names, variant, noise_tol=None):
    """task.json's `behaviour` for the golden run `golden` (float32, on `tensors` drawn from `seed`)
    and its float64 rerun `accurate` (None when not measured) on `variant`."""
    items = probe.materialise(seed + 1)
    second = [items[pos] for pos, *_ in probe.tensors]
    with torch.no_grad():
        other = [o.detach() for o in lifted(*second, *state)]
    torch.manual_seed(seed + _RERUN_SEED_OFFSET)
    with torch.no_grad():
        rerun = [o.detach() for o in lifted(*tensors, *state)]
    outputs = {}
    for i, (name, g, o) in enumerate(zip(names, golden, other)):
        a = accurate[i] if accurate is not None else None
        if g.is_floating_point() and isinstance(a, torch.Tensor) and a.shape == g.shape and \
                conditioning.is_noise(a, g, noise_tol or tol):
            outputs[name] = "zero"
        elif g.shape == o.shape and (torch.equal(g, o) or _passes(o, g, tol, noise_tol)):
            outputs[name] = "zero" if not g.any() else "constant"
        else:
            outputs[name] = "varies"
    mismatches = 0
    for g, r in zip(golden, rerun):
        if g.shape != r.shape:
            mismatches += g.numel()
        elif g.is_floating_point():
            _, bad, _ = conditioning.compare(r, g, tol, noise_tol)
            mismatches += bad
        else:
            mismatches += int((g != r).sum())
    nondeterministic = not conditioning.judgeable(rerun, golden, tol, noise_tol=noise_tol) or mismatches > 0
    return {"variant": variant, "outputs": outputs, "rerun_mismatches": mismatches,
            "degenerate": all(v != "varies" for v in outputs.values()),
            "nondeterministic": nondeterministic}


def notes(behaviour, domains):
    """The import's one-line notes on a flagged task and on the domains chosen."""
    out = []
    if behaviour and behaviour["degenerate"]:
        kinds = ", ".join(f"{k} {v}" for k, v in behaviour["outputs"].items())
        out.append(f"degenerate: the outputs do not depend on the inputs ({kinds}); any no-op passes")
    if behaviour and behaviour["nondeterministic"]:
        out.append(f"nondeterministic: a rerun on the same inputs differs in {behaviour['rerun_mismatches']} "
                   "elements; no kernel can match it")
    for d in domains:
        out.append(f"domain '{d['name']}' measured: " + ", ".join(
            f"{n} uniform [{i['low']}, {i['high']})" for n, i in d["inputs"].items()))
    return out
