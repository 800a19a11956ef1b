"""Scalar types of generated programs and the typing rules of docs/language.md ("Promotion",
"Arithmetic follows Python"), written from the docs, not from the compiler.

Types are plain strings: 'i32', 'u32', 'i64', 'u64', 'f32', 'f64' and 'bool'.
"""
from __future__ import annotations

import numpy as np

INTS = ("i32", "u32", "i64", "u64")
FLOATS = ("f32", "f64")
BITS = {"i32": 32, "u32": 32, "i64": 64, "u64": 64, "f32": 32, "f64": 64, "bool": 1}
NUMPY = {"i32": np.int32, "u32": np.uint32, "i64": np.int64, "u64": np.uint64,
         "f32": np.float32, "f64": np.float64, "bool": np.bool_}
DEFAULT_INT, DEFAULT_FLOAT = "i32", "f32"   # gr.init() defaults (default_ip, default_fp)


def is_float(t: str) -> bool:
    return t in FLOATS


def is_int(t: str) -> bool:
    return t in INTS


def is_signed(t: str) -> bool:
    return t in ("i32", "i64")


def int_range(t: str) -> tuple[int, int]:
    b = BITS[t]
    return (-(1 << (b - 1)), (1 << (b - 1)) - 1) if is_signed(t) else (0, (1 << b) - 1)


def wrap(v: int, t: str) -> int:
    """v reduced to the fixed-width integer type t (two's complement wrap-around)."""
    b = BITS[t]
    v &= (1 << b) - 1
    if is_signed(t) and v >> (b - 1):
        v -= 1 << b
    return v


def promote(a: str, b: str) -> str:
    """The type of `a op b` (docs: "int op float -> the float type; between floats the wider;
    between integers the wider, unsigned at equal width"; bool computes as i32)."""
    a = "i32" if a == "bool" else a
    b = "i32" if b == "bool" else b
    if a == b:
        return a
    if is_float(a) or is_float(b):
        if is_float(a) and is_float(b):
            return a if BITS[a] >= BITS[b] else b
        return a if is_float(a) else b
    if BITS[a] != BITS[b]:
        return a if BITS[a] > BITS[b] else b
    return a if not is_signed(a) else b


def literal_type(v) -> str:
    """The type of a Python number on its own: the defaults."""
    if isinstance(v, bool):
        return "bool"
    return DEFAULT_INT if isinstance(v, int) else DEFAULT_FLOAT


def adopt(v, other: str) -> str:
    """The type a Python number takes next to an operand of type `other` (docs: "A Python
    number adopts the other operand's type where the kinds allow (as in NumPy 2)"; an int too
    big for the type widens to the default int type where it fits)."""
    if isinstance(v, bool):
        return other if is_int(other) or other == "bool" else "bool"
    if isinstance(v, int):
        if is_int(other):
            lo, hi = int_range(other)
            if not lo <= v <= hi:
                wider = promote(other, DEFAULT_INT)
                lo, hi = int_range(wider)
                return wider if lo <= v <= hi else other
            return other
        return other if is_float(other) else DEFAULT_INT
    return other if is_float(other) else DEFAULT_FLOAT


def gr_name(t: str) -> str:
    return "bool" if t == "bool" else f"gr.{t}"
