"""Tolerances that hold on every adapter. A GPU may fuse `a * x + y` into one fused
multiply-add (one rounding instead of two): the result then differs from numpy's by up to
half an ulp of `a * x`, which is no *relative* bound when the sum cancels. Such results are
compared within a few f32 ulps of the terms' magnitudes."""
import numpy as np


def assert_close_fma(got, want, *terms, rtol: float = 1e-6, ulps: float = 4.0):
    """|got - want| <= rtol |want| + `ulps` f32 ulps of sum(|term|), element by element."""
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    mag = sum(np.abs(np.asarray(t, dtype=np.float64)) for t in terms)
    bad = np.abs(got - want) > rtol * np.abs(want) + ulps * 2.0**-23 * mag
    assert not bad.any(), f"{bad.sum()} of {bad.size} differ, first at {np.argwhere(bad)[0]}: " \
                          f"{got[bad][0]} vs {want[bad][0]}"
