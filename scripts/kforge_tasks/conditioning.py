"""How far the float32 golden outputs lie from a float64 eager run of the same reference.

A reference whose float32 outputs are mostly rounding noise cannot judge any kernel: a perfectly
accurate candidate fails against it. KernelBench's level3/24_EfficientNetB2 is one: its
squeeze-and-excitation blocks leave (N, C, 1, 1) features, and training-mode BatchNorm then
normalises over two values per channel. docs/tasks.md, "Conditioning".
"""

import math

import torch

# Default tolerance by output dtype, as the C++ loader (src/common/task.cc) applies it.
_HALF_DTYPES = ("float16", "bfloat16")


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


def compare(accurate, golden, tol):
    """(relative L2 error or None, mismatches, numel) of `accurate` judged against `golden` as a
    candidate is: None when the judge checks this output by elements alone (zero within atol)."""
    a = accurate.to(golden.dtype).double()
    b = golden.double()
    same = (a == b) | (torch.isnan(a) & torch.isnan(b))
    diff = torch.where(same, torch.zeros_like(a), (a - b).abs())
    close = same | (diff <= tol["atol"] + tol["rtol"] * b.abs())
    mismatches = int((~close).sum())
    finite_b = torch.where(same & ~torch.isfinite(b), torch.zeros_like(b), b)  # equal inf/NaN: no scale
    if b.numel() == 0 or float(finite_b.abs().max()) <= tol["atol"]:
        return None, mismatches, b.numel()
    ref_norm = float(torch.linalg.vector_norm(finite_b))
    err_norm = float(torch.linalg.vector_norm(diff))
    rel = err_norm / ref_norm
    return (rel if math.isfinite(rel) else math.inf), mismatches, b.numel()


def record(accurate_outputs, golden_outputs, tol):
    """task.json's `conditioning` object over the floating outputs, or None when there is none."""
    pairs = [(a, g) for a, g in zip(accurate_outputs, golden_outputs)
             if g.is_floating_point() and isinstance(a, torch.Tensor) and a.shape == g.shape]
    if not pairs:
        return None
    worst, mismatches, numel = None, 0, 0  # worst: over the outputs held to the L2 bound
    for a, g in pairs:
        rel, bad, n = compare(a, g, tol)
        if rel is not None:
            worst = rel if worst is None else max(worst, rel)
        mismatches += bad
        numel += n
    bound = rel_l2_bound(tol)
    return {"float64_rel_l2": _json_number(worst), "float64_mismatches": mismatches, "numel": numel,
            "rel_l2_bound": bound, "ill_conditioned": worst is not None and worst > bound}


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
