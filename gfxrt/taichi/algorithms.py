"""`gr.algorithms`: Taichi's `ti.algorithms` on 1-d fields, on the device.

`parallel_sort(keys, values=None)` sorts `keys` in place, ascending, with Taichi's odd-even
merge sort (Batcher's network, one kernel launch per stage, the same compare-exchanges as
taichi/_kernels.py's sort_stage), permuting `values` along with them. The network is not
stable, as Taichi's is not.

`PrefixSumExecutor(length).run(arr)` replaces an i32 field by its inclusive prefix sums, as
Taichi's (which refuses other dtypes). Taichi scans 64-element blocks with subgroup
operations; here each thread sums one block serially, one thread scans the block totals, and
a third launch adds them back: the same result (integer sums are exact) without the subgroup
feature.
"""
from gfxrt.compiler.types import i32

from ..data.field import Field, field
from ..kernel import kernel
from ..types import template


def _check_1d(x, what: str) -> Field:
    if not isinstance(x, Field) or len(x.shape) != 1:
        raise TypeError(f"{what} must be a 1-d gr.field, got {x!r}")
    return x


@kernel
def _sort_stage(keys: template(), use_values: int, values: template(), n: int, p: int, k: int, invocations: int,
                koff: int, voff: int):
    for inv in range(invocations):
        j = k % p + inv * 2 * k
        for i in range(0, min(k, n - j - k)):
            a = i + j
            b = i + j + k
            if a // (p * 2) == b // (p * 2):
                key_a = keys[a + koff]
                key_b = keys[b + koff]
                if key_a > key_b:
                    keys[a + koff] = key_b
                    keys[b + koff] = key_a
                    if use_values != 0:
                        temp = values[a + voff]
                        values[a + voff] = values[b + voff]
                        values[b + voff] = temp


def parallel_sort(keys, values=None) -> None:
    """Sort the 1-d field `keys` in place (ascending), moving `values` (a 1-d field of at least
    as many elements) with them: Taichi's odd-even merge sort."""
    _check_1d(keys, "parallel_sort's keys")
    if values is not None:
        _check_1d(values, "parallel_sort's values")
        if values.shape[0] < keys.shape[0]:
            raise ValueError(f"parallel_sort: values has {values.shape[0]} elements, keys {keys.shape[0]}")
    n = keys.shape[0]
    koff = keys.offset[0] if keys.offset else 0
    other = keys if values is None else values
    voff = other.offset[0] if other.offset else 0
    p = 1
    while p < n:
        k = p
        while k >= 1:
            invocations = (n - k - k % p) // (2 * k) + 1
            _sort_stage(keys, 0 if values is None else 1, other, n, p, k, invocations, koff, voff)
            k //= 2
        p *= 2


_BLOCK = 64


@kernel
def _scan_blocks(arr: template(), tot: template(), n: int, off: int):
    for blk in range((n + _BLOCK - 1) // _BLOCK):
        s = 0
        for t in range(_BLOCK):
            i = blk * _BLOCK + t
            if i < n:
                s += arr[i + off]
                arr[i + off] = s
        tot[blk] = s


@kernel
def _scan_totals(tot: template(), nb: int):
    for _ in range(1):
        s = 0
        for b in range(nb):
            s += tot[b]
            tot[b] = s


@kernel
def _add_totals(arr: template(), tot: template(), n: int, off: int):
    for i in range(_BLOCK, n):
        arr[i + off] += tot[i // _BLOCK - 1]


class PrefixSumExecutor:
    """Taichi's `ti.algorithms.PrefixSumExecutor(length)`: `run(arr)` replaces the first
    `length` elements of the 1-d i32 field `arr` by their inclusive prefix sums, in place."""

    def __init__(self, length: int):
        if not isinstance(length, int) or length < 1:
            raise ValueError(f"PrefixSumExecutor needs a positive length, got {length!r}")
        self.sorting_length = length
        self._totals = field(i32, shape=(length + _BLOCK - 1) // _BLOCK)

    def run(self, input_arr) -> None:
        _check_1d(input_arr, "PrefixSumExecutor.run's array")
        if input_arr.dtype != i32:
            raise RuntimeError("Only gr.i32 type is supported for prefix sum.")  # Taichi's message
        n = self.sorting_length
        if input_arr.shape[0] < n:
            raise ValueError(f"PrefixSumExecutor({n}).run: the array has {input_arr.shape[0]} elements")
        off = input_arr.offset[0] if input_arr.offset else 0
        _scan_blocks(input_arr, self._totals, n, off)
        _scan_totals(self._totals, self._totals.shape[0])
        _add_totals(input_arr, self._totals, n, off)


__all__ = ["parallel_sort", "PrefixSumExecutor"]
