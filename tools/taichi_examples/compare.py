"""Compare a program's final state with Taichi's, with tolerances calibrated per array.

Each array is compared in one of two ways, chosen by how Taichi's own CPU and Vulkan
backends agree on it (the calibration):

* elementwise: max |a - b| / max |b|. Used where Taichi's backends agree to `DET_GAP`
  (deterministic arrays). Tolerance: max(`FLOOR`, `FACTOR` x their gap).
* as a distribution: mean |sort(a) - sort(b)| / max |b| (the 1-Wasserstein distance of the
  values, scaled). Used where Taichi's two backends disagree elementwise by more than
  `DET_GAP`: the program draws `ti.random()` (whose streams differ between backends, and
  between Taichi and gfxrt) or sums floats in a parallel order that is not fixed. Tolerance:
  max(`DIST_FLOOR`, `FACTOR` x their distance).

* by count, for integer and boolean arrays: the fraction of elements that differ. Such an
  array is a classification (a mask, a cell index, a particle count per cell), and one element
  on a geometric edge flips where the float test before it rounds the other way: Taichi leaves
  the last bits of `ti.sin`, `ti.cos`, ... to the backend (its GPU backends use approximate
  intrinsics under the default fast_math, WGSL allows `sin` 2^-11 absolute error), so the
  largest difference (1 of a 0/1 mask) says nothing; how many elements flipped does. Used
  where Taichi's backends agree to `DET_GAP` (else as a distribution). Tolerance:
  max(`FLOOR`, `FACTOR` x their fraction): a scalar, or an array under 1 / FLOOR elements,
  must still agree exactly.

Without a calibration (Taichi ran on one backend only) every float array is compared
elementwise and every integer array by count, against `FLOOR`. NaNs must sit in the same
places (elementwise) or be as many (distribution).
"""
import numpy as np

DET_GAP = 1e-3
FLOOR = 1e-5
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
    d = np.where(same_inf, 0.0, d)
    if not np.isfinite(d).all():
        return float("inf")
    return float(np.abs(d).max() / _scale(b)) if d.size else 0.0


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


def count(a, b) -> float:
    """The fraction of elements that differ."""
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape:
        return float("inf")
    return float(np.count_nonzero(a != b) / a.size) if a.size else 0.0


def exact_mode(b) -> str:
    """How an array is compared where Taichi's backends agree on it: integers by count."""
    return "count" if np.asarray(b).dtype.kind in "iub" else "elementwise"


MODES = {"elementwise": elementwise, "distribution": distribution, "count": count}


def calibrate(cpu: dict, vulkan: dict) -> dict:
    """name -> (mode, tolerance) from Taichi's two backends' states of the same program."""
    cal = {}
    for k, b in vulkan.items():
        if k not in cpu or np.shape(cpu[k]) != np.shape(b):
            continue
        mode = exact_mode(b)
        gap = MODES[mode](cpu[k], b)
        if gap <= DET_GAP:
            cal[k] = (mode, max(FLOOR, FACTOR * gap))
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
        mode, tol = (cal or {}).get(k, (exact_mode(ref[k]), FLOOR))
        err = MODES[mode](cand[k], ref[k])
        ratio = err / tol
        if ratio > worst_ratio:
            worst, worst_ratio = (k, err, tol, mode), ratio
        if not err <= tol:
            ok = False
    return {"match": ok and bool(ref), "worst": worst, "missing": missing}
