"""How far the float32 golden outputs lie from a float64 eager run of the same reference.

A reference whose float32 outputs are mostly rounding noise cannot judge any kernel: a perfectly
accurate candidate fails against it. KernelBench's level3/24_EfficientNetB2 is one: its
squeeze-and-excitation blocks leave (N, C, 1, 1) features, and training-mode BatchNorm then
normalises over two values per channel. docs/tasks.md, "Conditioning".

The same run says, per output, whether the float32 values have a scale at all: an output whose
float64 values are zero within atol while the float32 ones are not close to them (a mean of
normalised values, 1e-8 of rounding either way) is `noise`, and the judge checks it by elements
alone. Every other output is held to the relative-L2 bound, however small its values.
"""

import math

import torch

# Default tolerance by output dtype, as the C++ loader (src/common/task.cc) applies it.
_HALF_DTYPES = ("float16", "bfloat16")
# Tolerances a float32 task may be given when its own float32 rounding exceeds the default
# (tolerance_for): each at most KernelBench's 1e-2.
TOLERANCE_LADDER = (1e-4, 2e-4, 5e-4, 1e-3, 2e-3, 5e-3, 1e-2)


def default_tolerance(dtype):
    return {"atol": 1e-2, "rtol": 1e-2} if dtype in _HALF_DTYPES else {"atol": 1e-4, "rtol": 1e-4}


def task_tolerance(written, output_dtypes):
    """The tolerance the judge uses: task.json's, missing keys from the first output's dtype
    default; without one, the loosest default over the outputs' dtypes."""
    if written is not None:
        return {**default_tolerance(output_dtypes[0]), **written}
    defaults = [default_tolerance(d) for d in output_dtypes]
    return {key: max(d[key] for d in defaults) for key in ("atol", "rtol")}


def rel_l2_bound(tol):
    """The judge's bound on an output's relative L2 error (src/worker/judge.cc)."""
    return max(10 * tol["rtol"], 1e-3)


def to_float64(t):
    return t.double() if isinstance(t, torch.Tensor) and t.is_floating_point() else t


def run_in_float64(run, tensors, state):
    """run(*tensors, *state) with floating tensors in float64, and tensors that forward makes
    without a dtype (`torch.zeros(...)`) in float64 too."""
    previous = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        with torch.no_grad():
            return run(*[to_float64(t) for t in tensors], *[to_float64(t) for t in state])
    finally:
        torch.set_default_dtype(previous)


def _finite(t):
    return torch.where(torch.isfinite(t), t, torch.zeros_like(t))


def is_noise(accurate, golden, tol):
    """True when the float32 output `golden` carries no scale: the float64 values are zero within
    atol and the float32 ones are not within the relative-L2 bound of them (or both are zero)."""
    exact = _finite(accurate.double())
    if exact.numel() == 0 or float(exact.abs().max()) > tol["atol"]:
        return False
    exact_norm = float(torch.linalg.vector_norm(exact))
    if exact_norm == 0:
        return True
    err = float(torch.linalg.vector_norm(_finite(golden.double()) - exact))
    return err / exact_norm > rel_l2_bound(tol)


def compare(accurate, golden, tol, noise_tol=None):
    """(relative L2 error, mismatches, numel) of `accurate` judged against `golden` as a candidate
    is; the error is None for an output the judge checks by elements alone (noise, decided under
    `noise_tol`, default `tol`)."""
    a = accurate.to(golden.dtype).double()
    b = golden.double()
    same = (a == b) | (torch.isnan(a) & torch.isnan(b))
    diff = torch.where(same, torch.zeros_like(a), (a - b).abs())
    close = same | (diff <= tol["atol"] + tol["rtol"] * b.abs())
    mismatches = int((~close).sum())
    finite_b = torch.where(same & ~torch.isfinite(b), torch.zeros_like(b), b)  # equal inf/NaN: no scale
    if b.numel() == 0 or is_noise(accurate, golden, noise_tol or tol):
        return None, mismatches, b.numel()
    ref_norm = float(torch.linalg.vector_norm(finite_b))
    err_norm = float(torch.linalg.vector_norm(diff))
    rel = err_norm / ref_norm if ref_norm > 0 else math.inf
    return (rel if math.isfinite(rel) else math.inf), mismatches, b.numel()


def _pairs(accurate_outputs, golden_outputs, names):
    return [(n, a, g) for n, a, g in zip(names, accurate_outputs, golden_outputs)
            if g.is_floating_point() and isinstance(a, torch.Tensor) and a.shape == g.shape]


def record(accurate_outputs, golden_outputs, tol, names=None, variant="default", noise_tol=None):
    """task.json's `conditioning` object over the floating outputs, or None when there is none.
    Noise is decided under `noise_tol` (default `tol`): the default tolerance, also for a task whose
    tolerance was derived, so that a wider atol never makes an output with a scale noise."""
    names = names or [f"out{i}" for i in range(len(golden_outputs))]
    pairs = _pairs(accurate_outputs, golden_outputs, names)
    if not pairs:
        return None
    worst, mismatches, numel = None, 0, 0  # worst: over the outputs held to the L2 bound
    outputs = {}
    for name, a, g in pairs:
        rel, bad, n = compare(a, g, tol, noise_tol)
        if rel is not None:
            worst = rel if worst is None else max(worst, rel)
        outputs[name] = {"float64_rel_l2": _json_number(rel), "noise": rel is None}
        mismatches += bad
        numel += n
    bound = rel_l2_bound(tol)
    return {"float64_rel_l2": _json_number(worst), "float64_mismatches": mismatches, "numel": numel,
            "rel_l2_bound": bound, "ill_conditioned": worst is not None and worst > bound,
            "variant": variant, "outputs": outputs}


def judgeable(accurate_outputs, golden_outputs, tol, margin=1.0, noise_tol=None):
    """True when a float64-exact kernel passes against `golden_outputs` under `tol` with room to
    spare: no element outside tolerance/margin and every relative L2 error under bound/margin
    (noise decided under `noise_tol`, default `tol`)."""
    scaled = {k: v / margin for k, v in tol.items()}
    for a, g in zip(accurate_outputs, golden_outputs):
        if not (isinstance(a, torch.Tensor) and g.is_floating_point() and a.shape == g.shape):
            continue
        rel, bad, _ = compare(a, g, scaled, noise_tol or tol)
        if bad or (rel is not None and rel > rel_l2_bound(tol) / margin):
            return False
    return True


def tolerance_for(accurate_outputs, golden_outputs, tol):
    """The smallest tolerance of TOLERANCE_LADDER (not below `tol`) under which a float64-exact
    kernel passes with a factor 2 to spare, or None when none does (or `tol` already does)."""
    if judgeable(accurate_outputs, golden_outputs, tol, margin=2.0):
        return None
    for t in TOLERANCE_LADDER:
        if t <= max(tol["atol"], tol["rtol"]):
            continue
        candidate = {"atol": t, "rtol": t}
        if judgeable(accurate_outputs, golden_outputs, candidate, margin=2.0, noise_tol=tol):
            return candidate
    return None


def _json_number(x):
    """Four significant digits; "inf" for infinity (as the worker's records write it); None stays."""
    if x is None:
        return None
    return float(f"{x:.4g}") if math.isfinite(x) else "inf"


def note(conditioning):
    """The import's one-line note for a flagged task, else None."""
    if not conditioning or not conditioning["ill_conditioned"]:
        return None
    return (f"ill-conditioned: a float64 run of the reference differs from the golden outputs by relative L2 "
            f"{conditioning['float64_rel_l2']} (the judge allows {conditioning['rel_l2_bound']:g}); "
            "no kernel can be judged against it")
