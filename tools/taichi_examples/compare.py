"""Compare a program's final state with Taichi's, with tolerances calibrated per array.

Each array is compared in one of two ways, chosen by how Taichi's own CPU and Vulkan
backends agree on it (the calibration):

* elementwise: max |a - b| / max |b|, leaving out the `OUTLIERS` x size largest differences
  (none below 1 / OUTLIERS elements). Used where Taichi's backends agree to `DET_GAP`
  (deterministic arrays). Tolerance: max(`FLOOR`, `FACTOR` x their gap). The outliers are
  cells on a geometric edge: a test like `taichi_logo(p) == 0` or `int(x / dx)` flips where
  the float before it rounds the other way, and Taichi leaves the last bits of `ti.sin`,
  `ti.cos`, ... to the backend (its GPU backends use approximate intrinsics under the default
  fast_math; WGSL allows `sin` 2^-11 absolute error), so one such cell (a 0/1 mask's 1, an
  image's level) says nothing about the program; a row, a block or a field of them does.
* as a distribution: mean |sort(a) - sort(b)| / max |b| (the 1-Wasserstein distance of the
  values, scaled). Used where Taichi's two backends disagree elementwise by more than
  `DET_GAP`: the program draws `ti.random()` (whose streams differ between backends, and
  between Taichi and gfxrt) or sums floats in a parallel order that is not fixed. Tolerance:
  max(`DIST_FLOOR`, `FACTOR` x their distance).

Without a calibration (Taichi ran on one backend only) every array is compared elementwise
against `FLOOR`. NaNs must sit in the same places (elementwise) or be as many (distribution).
"""
import numpy as np

DET_GAP = 1e-3
FLOOR = 1e-5
OUTLIERS = 1e-5
DIST_FLOOR = 1e-3
FACTOR = 10.0


def _scale(b):
    fin = np.abs(b[np.isfinite(b)])
    return max(float(fin.max()) if fin.size else 0.0, 1e-30)


def elementwise(a, b) -> float:
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    if a.shape != b.shape:
        return float("inf")
    na, nb = np.isnan(a), np.isnan(b)
    if (na != nb).any():
        return float("inf")
    ok = ~nb
    if not ok.any():
        return 0.0
    d = a[ok] - b[ok]
    same_inf = np.isinf(a[ok]) & (a[ok] == b[ok])
    d = np.abs(np.where(same_inf, 0.0, d))
    d = np.where(np.isfinite(d), d, np.inf)
    skip = int(a.size * OUTLIERS)  # isolated edge cells, left out
    if skip >= d.size:
        return 0.0
    worst = np.partition(d, d.size - 1 - skip)[d.size - 1 - skip]
    return float(worst / _scale(b))


def distribution(a, b) -> float:
    a, b = np.asarray(a, np.float64).ravel(), np.asarray(b, np.float64).ravel()
    if a.shape != b.shape:
        return float("inf")
    if np.isnan(a).sum() != np.isnan(b).sum():
        return float("inf")
    a, b = np.sort(a[~np.isnan(a)]), np.sort(b[~np.isnan(b)])
    if not a.size:
        return 0.0
    d = a - b
    d = np.where(np.isinf(a) & (a == b), 0.0, d)
    if not np.isfinite(d).all():
        return float("inf")
    return float(np.abs(d).mean() / _scale(b))


def calibrate(cpu: dict, vulkan: dict) -> dict:
    """name -> (mode, tolerance) from Taichi's two backends' states of the same program."""
    cal = {}
    for k, b in vulkan.items():
        if k not in cpu or np.shape(cpu[k]) != np.shape(b):
            continue
        gap = elementwise(cpu[k], b)
        if gap <= DET_GAP:
            cal[k] = ("elementwise", max(FLOOR, FACTOR * gap))
        else:
            cal[k] = ("distribution", max(DIST_FLOOR, FACTOR * distribution(cpu[k], b)))
    return cal


def compare(cand: dict, ref: dict, cal: dict | None) -> dict:
    """The verdict for one program: {"match": bool, "worst": (name, err, tol, mode) or None, "missing": [...]}."""
    missing = sorted(k for k in ref if k not in cand)
    worst, worst_ratio, ok = None, -1.0, not missing
    for k in sorted(ref):
        if k not in cand:
            continue
        mode, tol = (cal or {}).get(k, ("elementwise", FLOOR))
        err = (elementwise if mode == "elementwise" else distribution)(cand[k], ref[k])
        ratio = err / tol
        if ratio > worst_ratio:
            worst, worst_ratio = (k, err, tol, mode), ratio
        if not err <= tol:
            ok = False
    return {"match": ok and bool(ref), "worst": worst, "missing": missing}
