"""Integer `//` and `%`: Python's floor semantics, bit-exact against exact integer arithmetic
on every adapter (x // 0 == x % 0 == 0; i32 overflow wraps like numpy), and no signed WGSL
division in the emitted code: Vulkan leaves OpSDiv / OpSRem / OpSMod with negative operands
undefined, lavapipe happens to round like C and NVIDIA does not, so a check of the WGSL text
is what lets a CPU-only CI catch a regression that only a GPU would show."""
import re

import numpy as np
import pytest

import gfxrt as gr

I1 = gr.types.ndarray(dtype=gr.i32, ndim=1)
U1 = gr.types.ndarray(dtype=gr.u32, ndim=1)
I3 = gr.types.ndarray(dtype=gr.i32, ndim=3)
F1 = gr.types.ndarray(dtype=gr.f32, ndim=1)

I32_MIN, I32_MAX = -(2**31), 2**31 - 1
EDGES = [0, 1, -1, 2, -2, 3, -3, 5, -5, 7, -7, 100, -100, 65536, -65536, I32_MIN, I32_MIN + 1, I32_MAX, I32_MAX - 1]


def wrap(v: int, bits_signed: bool = True) -> int:
    v &= 0xFFFFFFFF
    return v - 2**32 if bits_signed and v >= 2**31 else v


def py_floordiv(a, b, signed=True):
    return 0 if b == 0 else wrap(a // b, signed)


def py_mod(a, b, signed=True):
    return 0 if b == 0 else wrap(a % b, signed)


@gr.kernel
def divmod_i32(a: I1, b: I1, q: I1, r: I1):
    for i in range(a.shape[0]):
        q[i] = a[i] // b[i]
        r[i] = a[i] % b[i]


@gr.kernel
def divmod_u32(a: U1, b: U1, q: U1, r: U1):
    for i in range(a.shape[0]):
        q[i] = a[i] // b[i]
        r[i] = a[i] % b[i]


@gr.kernel
def divmod_scalar(a: I1, d: gr.i32, q: I1, r: I1):
    for i in range(a.shape[0]):
        q[i] = a[i] // d
        r[i] = a[i] % d


@gr.kernel
def divmod_consts(a: I1, out: I1):
    for i in range(a.shape[0]):
        out[i * 6 + 0] = a[i] // 7
        out[i * 6 + 1] = a[i] % 7
        out[i * 6 + 2] = a[i] // -3
        out[i * 6 + 3] = a[i] % -3
        out[i * 6 + 4] = (i - 5) // 4   # a loop index made negative: not the non-negative path
        out[i * 6 + 5] = (i - 5) % 4


def _pairs(signed: bool, rng):
    edges = EDGES if signed else [wrap(e, False) for e in EDGES] + [2**32 - 1, 2**32 - 2, 2**31, 3_000_000_000]
    a, b = np.meshgrid(edges, edges)
    a, b = list(a.ravel()), list(b.ravel())
    lo, hi = (I32_MIN, I32_MAX) if signed else (0, 2**32 - 1)
    a += list(rng.integers(lo, hi, 400, endpoint=True)) + list(rng.integers(-1000, 1000, 400) if signed
                                                               else rng.integers(0, 1000, 400))
    b += list(rng.integers(-50, 50, 400) if signed else rng.integers(0, 50, 400)) + \
        list(rng.integers(lo, hi, 400, endpoint=True))
    dt = np.int32 if signed else np.uint32
    return np.array(a, dtype=np.int64).astype(dt), np.array(b, dtype=np.int64).astype(dt)


@pytest.mark.parametrize("signed", [True, False])
def test_divmod_bit_exact_on_edges_and_random_pairs(signed, rng):
    a, b = _pairs(signed, rng)
    q, r = np.zeros_like(a), np.zeros_like(a)
    (divmod_i32 if signed else divmod_u32)(a, b, q, r)
    want_q = [py_floordiv(int(x), int(y), signed) for x, y in zip(a, b)]
    want_r = [py_mod(int(x), int(y), signed) for x, y in zip(a, b)]
    np.testing.assert_array_equal(q.astype(np.int64), want_q)
    np.testing.assert_array_equal(r.astype(np.int64), want_r)
    if signed:  # the identity that ties the two together, where nothing wraps
        ok = (b != 0) & ~((a == I32_MIN) & (b == -1))
        np.testing.assert_array_equal((q.astype(np.int64) * b + r)[ok], a[ok])


def test_divmod_by_a_scalar_and_by_constants(rng):
    a = np.array(EDGES + list(rng.integers(-10**6, 10**6, 200)), dtype=np.int32)
    for d in (5, -5, 1, -1, 0, I32_MIN, I32_MAX):
        q, r = np.zeros_like(a), np.zeros_like(a)
        divmod_scalar(a, d, q, r)
        assert list(q) == [py_floordiv(int(x), d) for x in a], d
        assert list(r) == [py_mod(int(x), d) for x in a], d
    out = np.zeros(6 * len(a), np.int32)
    divmod_consts(a, out)
    idx = np.arange(len(a))
    want = np.stack([[py_floordiv(int(x), 7), py_mod(int(x), 7), py_floordiv(int(x), -3), py_mod(int(x), -3),
                      (k - 5) // 4, (k - 5) % 4] for x, k in zip(a, idx)])
    np.testing.assert_array_equal(out.reshape(-1, 6), want)


@gr.kernel
def index_decomposition(x: I3, lo: gr.i32, hi: gr.i32, out: I1, idx: I1):
    for i, j, k in x:            # flat index -> (i, j, k): division by the shapes
        x[i, j, k] = i * 10000 + j * 100 + k
    for i in range(hi, lo, -3):  # a negative step: the trip count divides a possibly negative span
        out[(i - lo) // 3] = i
    for i in range(idx.shape[0]):  # a loop index: the non-negative (unsigned) path
        idx[i] = (i // 7) * 1000 + (i % 7) * 100 + i // idx.shape[0] + (i + 3) % (idx.shape[0] // 2)


def test_index_decomposition_and_stepped_ranges():
    x = np.zeros((3, 5, 7), np.int32)
    out = np.full(40, -1, np.int32)
    idx = np.zeros(50, np.int32)
    index_decomposition(x, -20, 50, out, idx)
    i50 = np.arange(50)
    np.testing.assert_array_equal(idx, (i50 // 7) * 1000 + (i50 % 7) * 100 + (i50 + 3) % 25)
    i, j, k = np.meshgrid(np.arange(3), np.arange(5), np.arange(7), indexing="ij")
    np.testing.assert_array_equal(x, i * 10000 + j * 100 + k)
    want = np.full(40, -1, np.int32)
    for v in range(50, -20, -3):
        want[(v + 20) // 3] = v
    np.testing.assert_array_equal(out, want)


# -- the emitted WGSL has no `/` or `%` on i32 ---------------------------------------------------
@gr.kernel
def run_time_loop(x: F1, n: gr.i32, y: F1):
    for i in range(x.shape[0]):
        v = x[i]
        for _ in range(n):
            v = gr.sin(v) + 0.5 * v
        y[i] = v


def _divisor_end(code: str, start: int) -> int:
    depth = 0
    for k in range(start, len(code)):
        c = code[k]
        if c in "([":
            depth += 1
        elif c in ")]":
            if depth == 0:
                return k
            depth -= 1
        elif depth == 0 and (c in ";,{" or c.isspace()):  # the divisor: one unary expression
            return k
    return len(code)


SIGNED = ("i32", "vec2<i32>", "vec3<i32>", "vec4<i32>", "i64")


def signed_division_sites(device, wgsl: str) -> list[str]:
    """Each `/` or `%` of the module whose divisor is a signed integer (i32, i32 vectors, i64):
    its divisor, wrapped in a probe function that takes only that type, still validates."""
    code = re.sub(r"//[^\n]*", "", wgsl)
    found = []
    for m in re.finditer(r"(?<![/=<>!&|])\s[/%]\s", code):
        start = m.end()
        end = _divisor_end(code, start)
        for t in SIGNED:  # one probe per module: a device without i64 must not hide an i32 site
            probe = f"fn gr_probe_(v: {t}) -> {t} {{ return v; }}"
            probed = f"{code[:start]}gr_probe_({code[start:end]}){code[end:]}\n{probe}\n"
            try:
                device.create_shader_module(code=probed, label="probe")
            except Exception:  # noqa: BLE001 - naga's type error: the divisor is no i32
                continue
            found.append(code[max(0, m.start() - 60):end + 1])
            break
    return found


def test_probe_finds_a_signed_division():
    device = gr.runtime().device
    bad = "@compute @workgroup_size(1) fn main() { var a = 3i; var b = 2u; a = a % (a + 1i); b = b / 2u; }"
    sites = signed_division_sites(device, bad)
    assert len(sites) == 1 and "%" in sites[0]
    bad64 = "fn f(a: i64, b: i64) -> i64 { return a / b; }\n@compute @workgroup_size(1) fn main() { }"
    try:
        device.create_shader_module(code=bad64, label="i64")
    except Exception:  # noqa: BLE001 - no shader-int64 on this device: nothing 64-bit to check
        return
    assert len(signed_division_sites(device, bad64)) == 1


def test_emitted_wgsl_has_no_signed_division(rng):
    device = gr.runtime().device
    a = np.arange(-8, 8, dtype=np.int32)
    f = rng.standard_normal(16).astype(np.float32)
    x3 = np.zeros((2, 3, 4), np.int32)
    specs = [divmod_i32.specialize([a, a, a, a]), divmod_u32.specialize([a.view(np.uint32)] * 4),
             divmod_scalar.specialize([a, 3, a, a]), divmod_consts.specialize([a, a]),
             index_decomposition.specialize([x3, 0, 5, a, a])]
    xs, ys = gr.ndarray(gr.f32, (16,), needs_grad=True), gr.ndarray(gr.f32, (16,), needs_grad=True)
    xs.from_numpy(f)
    specs.append(run_time_loop.specialize([xs, 3, ys]))
    specs.append(run_time_loop.specialize([xs, 3, ys], mode="grad"))
    for c in specs:
        assert signed_division_sites(device, c.spec.wgsl) == [], c.spec.name
    from gfxrt.engine.blit_kernels import _KERNELS  # the runtime's own WGSL (fills, half-word copies)
    for name, (code, _) in _KERNELS.items():
        assert signed_division_sites(device, code) == [], name


def test_library_kernels_have_no_signed_division(rng):
    """kernels/ (reductions, scans, histograms, stencils, matmul): every specialization run."""
    from gfxrt import kernels
    from gfxrt.kernel import _KERNELS
    x = rng.standard_normal(3000).astype(np.float32)
    kernels.reduce.sum(x)
    kernels.scan.inclusive(x, np.zeros_like(x))
    kernels.histogram(rng.integers(0, 16, 3000).astype(np.int32), 16, np.zeros(16, np.int32))
    kernels.stencil.laplace5(x.reshape(50, 60), np.zeros((50, 60), np.float32))
    a = rng.standard_normal((33, 17)).astype(np.float32)
    kernels.linalg.matmul(a, a.T.copy(), np.zeros((33, 33), np.float32))
    device = gr.runtime().device
    seen = 0
    # the library's kernels only: the kernels other test files left in the process are theirs to
    # check (scanning them made this test's verdict depend on which files ran before it)
    for k in [k for k in list(_KERNELS) if k.func.__module__.startswith("gfxrt.kernels")]:
        for c in list(k._cache.values()):
            seen += 1
            assert signed_division_sites(device, c.spec.wgsl) == [], c.spec.name
    assert seen >= 5


def test_no_helper_function_has_a_signed_division():
    """Every WGSL helper the code generator can emit (f64 exp, pow, 64-bit integer ops, ...), with the
    helpers it calls, at every type it compiles for: whatever kernels a process has compiled (gr.exp on
    an f64 once made `ki / 2` appear only after such a kernel had run)."""
    from gfxrt.compiler.codegen.wgsl_exprs import HELPERS, helper_source, with_deps
    device = gr.runtime().device
    checked = set()
    for name, src in sorted(HELPERS.items()):
        for t in ("i32", "u32", "f32", "f64", "i64", "u64") if "{t}" in src else ("",):
            code = "\n".join(helper_source(n, tt) for n, tt in sorted(with_deps({(name, t)})))
            code += "\n@compute @workgroup_size(1) fn main() { }\n"
            try:
                device.create_shader_module(code=code, label=name)
            except Exception:  # noqa: BLE001 - not a type this helper takes, or no f64 / i64 here
                continue
            checked.add(name)
            assert signed_division_sites(device, code) == [], (name, t)
    assert {"floordiv_i32", "mod_i32", "floordiv_int", "mod_int"} <= checked  # the i32 ones every adapter has


@gr.kernel
def divmod_i64(a: gr.types.ndarray(dtype=gr.i64, ndim=1), b: gr.types.ndarray(dtype=gr.i64, ndim=1),
               q: gr.types.ndarray(dtype=gr.i64, ndim=1), r: gr.types.ndarray(dtype=gr.i64, ndim=1)):
    for i in range(a.shape[0]):
        q[i] = a[i] // b[i]
        r[i] = a[i] % b[i]


def test_i64_floor_division_is_python_and_has_no_signed_division(rng):
    """i64 // and % go through u64 magnitudes too (a GPU gets signed 64-bit remainders wrong)."""
    if "shader-int64" not in gr.runtime().device.features:
        pytest.skip("no shader-int64 on this adapter")
    edge = [0, 1, -1, 2, -2, 7, -7, 2**31, -2**31, 2**62 + 3, -(2**62) - 5, 2**63 - 1, -2**63]
    pairs = [(x, y) for x in edge for y in edge] + [tuple(p) for p in rng.integers(-10**12, 10**12, (400, 2))]
    a = np.array([p[0] for p in pairs], np.int64)
    b = np.array([p[1] for p in pairs], np.int64)
    q, r = np.zeros_like(a), np.zeros_like(a)
    divmod_i64(a, b, q, r)

    def py(x, y, op):
        if y == 0:
            return 0
        v = op(x, y)
        return (v + 2**63) % 2**64 - 2**63  # wraps like numpy (i64 min // -1)
    want_q = np.array([py(int(x), int(y), lambda u, v: u // v) for x, y in zip(a, b)], np.int64)
    want_r = np.array([py(int(x), int(y), lambda u, v: u % v) for x, y in zip(a, b)], np.int64)
    np.testing.assert_array_equal(q, want_q)
    np.testing.assert_array_equal(r, want_r)
    spec = divmod_i64.specialize([a, b, q, r]).spec
    assert signed_division_sites(gr.runtime().device, spec.wgsl) == []
