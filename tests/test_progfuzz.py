"""The random-program fuzzer (tools/progfuzz, docs/testing.md): fixed seeds of every profile run
on the adapter and must match the reference evaluator, plus checks of the fuzzer itself (it is
deterministic, its oracle computes known values, its shrinker shrinks, and its checker fails on a
wrong device result)."""
import math
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
import progfuzz_children as kids
import pytest

from tools.progfuzz import hang, runner
from tools.progfuzz import numerics as N
from tools.progfuzz.check import compare
from tools.progfuzz.driver import Options, _profile, adapter_caps
from tools.progfuzz.generate import generate
from tools.progfuzz.gradcheck import check_gradients
from tools.progfuzz.oracle import Oracle
from tools.progfuzz.printer import source
from tools.progfuzz.program import (
    Array,
    Assign,
    AugAssign,
    Bin,
    Break,
    Cast,
    Compare,
    Const,
    For,
    If,
    Kernel,
    Load,
    Math,
    Program,
    Store,
    Var,
)
from tools.progfuzz.repro import _array_literal
from tools.progfuzz.shrink import nodes, shrink
from tools.progfuzz.typing import InvalidProgram
from tools.progfuzz.verdict import FORWARD, judge

# seeds the suite runs: the whole file takes 23 s on lavapipe (2 cores, mesa's shader cache cold), 41 s
# with the machine under load; the long mode runs thousands (docs/testing.md)
CI_SEEDS = {"loops": range(0, 30), "arith": range(0, 20), "mixed": range(0, 14), "grad": range(0, 12)}


@pytest.fixture(scope="module")
def caps():
    return adapter_caps()


@pytest.fixture(scope="module")
def workdir():
    with tempfile.TemporaryDirectory(prefix="progfuzz-") as d:
        yield d


@pytest.mark.parametrize("profile", sorted(CI_SEEDS))
def test_fixed_seeds_match_the_reference(profile, caps, workdir):
    found = []
    for seed in CI_SEEDS[profile]:
        program = generate(seed, profile, caps)
        v = judge(program, workdir)
        if v.kind != "ok":
            found.append(f"seed {seed}: {v.kind} {v.detail[:600]}\n{source(program)}")
    assert not found, ("\n\n".join(found) + "\n\nminimize with: python -m tools.progfuzz "
                       f"--profile {profile} --seed SEED --count 1 --out DIR")


# -- the fuzzer itself ------------------------------------------------------------------------------
def test_a_program_is_a_pure_function_of_its_seed(caps):
    for profile in CI_SEEDS:
        a, b = generate(7, profile, caps), generate(7, profile, caps)
        assert source(a) == source(b)
        assert a.inputs.keys() == b.inputs.keys()
        assert all(np.array_equal(a.inputs[k], b.inputs[k]) for k in a.inputs)
        assert source(generate(8, profile, caps)) != source(a)


def _break3_program() -> Program:
    """Taichi's test_for_break3 with a per-row sum (issue 21 item 1): rows 1, 2, 3 are 216, 144,
    72, every other row 0; plus Python's floor division and modulo of negative ints, i32
    wrap-around and a float the oracle must round to f32."""
    i, j = Var("i"), Var("j")
    body = (For("i", (Const(8),), (
        Assign("s", Const(0)),
        For("j", (i, Bin("-", Const(8), i)), (
            If(Compare(("==",), (i, Const(0))), (Break(),)),
            AugAssign("s", "+", Bin("+", Bin("*", Const(10), j), Const(1))),
        )),
        Store("row", (i,), Var("s")),
        Store("ints", (i,), Bin("+", Bin("//", Load("m", (i,)), Const(-3)),
                                Bin("%", Load("m", (i,)), Const(-3)))),
        Store("wrap", (i,), Bin("*", Load("m", (i,)), Const(1 << 30))),
        Store("f", (i,), Bin("/", Cast("f32", i, "float"), Const(3.0))),
    )),)
    arrays = (Array("m", "i32", (8,), "in"), Array("row", "i32", (8,), "out"), Array("ints", "i32", (8,), "out"),
              Array("wrap", "i32", (8,), "out"), Array("f", "f32", (8,), "out"))
    m = np.array([-7, 7, -1, 0, 5, -6, 2, 3], np.int32)
    inputs = {"m": m, **{a.name: np.zeros(8, np.float32 if a.dtype == "f32" else np.int32) for a in arrays[1:]}}
    return Program(0, "hand", (), Kernel(arrays, (), body), inputs)


def test_oracle_computes_known_values():
    p = _break3_program()
    out = Oracle(p).run(p.fresh_inputs())
    assert out.arrays["row"] == [0, 216, 144, 72, 0, 0, 0, 0]
    m = [-7, 7, -1, 0, 5, -6, 2, 3]
    assert out.arrays["ints"] == [v // -3 + v % -3 for v in m]
    assert out.arrays["wrap"] == [((v << 30) + 2**31) % 2**32 - 2**31 for v in m]
    assert [v for v, _ in out.arrays["f"]] == [float(np.float32(np.float32(k) / np.float32(3))) for k in range(8)]
    assert all(0 < e < 1e-6 for _, e in out.arrays["f"])     # one rounding (the driver's division: a few)
    assert "for j in range(i, (8 - i)):" in source(p) and "if (i == 0):" in source(p)


def test_printed_program_agrees_with_the_oracle_on_the_device(workdir):
    p = _break3_program()
    dev = runner.run(p, workdir)
    assert dev.error is None, dev.error
    assert list(dev.arrays["row"]) == [0, 216, 144, 72, 0, 0, 0, 0]
    assert compare(p, Oracle(p).run(p.fresh_inputs()), dev.arrays, dev.returns).ok


def test_the_checker_fails_on_a_wrong_device_result(caps, workdir, monkeypatch):
    p = _break3_program()
    out = Oracle(p).run(p.fresh_inputs())
    good = {a.name: np.array(out.arrays[a.name] if a.dtype != "f32" else [v for v, _ in out.arrays[a.name]])
            for a in p.kernel.arrays}
    assert compare(p, out, good, None).ok
    for name, delta in (("row", 1), ("f", 1e-5)):     # an int off by one, a float past its bound
        bad = {k: v.copy() for k, v in good.items()}
        bad[name][3] += delta
        c = compare(p, out, bad, None)
        assert not c.ok and c.mismatches[0].where == f"{name}[3]"
    real = runner.run

    def wrong_device(program, wd):      # the whole pipeline reports a corrupted readback
        r = real(program, wd)
        r.arrays["row"][2] += 1
        return r
    monkeypatch.setattr(runner, "run", wrong_device)
    v = judge(p, workdir)
    assert v.kind == FORWARD and "row[2]" in v.detail


def test_unstable_decisions_are_skipped_not_reported():
    """int() of a float within its error bound of an integer, and a comparison near a tie,
    are not compared: a device may decide them either way."""
    x = Bin("*", Load("x", (Var("i"),)), Const(10.0))      # 0.1f * 10 rounds to 1.0; 0.25 * 10 is exact
    body = (For("i", (Const(2),), (
        Store("o", (Var("i"),), Cast("i32", x, "int")),
        Store("c", (Var("i"),), Cast("i32", Math("floor", x), "int")),
    )),)
    arrays = (Array("x", "f32", (2,), "in"), Array("o", "i32", (2,), "out"), Array("c", "i32", (2,), "out"))
    p = Program(0, "hand", (), Kernel(arrays, (), body),
                {"x": np.array([0.1, 0.25], np.float32), "o": np.zeros(2, np.int32), "c": np.zeros(2, np.int32)})
    out = Oracle(p).run(p.fresh_inputs())
    assert out.unstable == 1 and out.taint["o"] == {0} and out.taint["c"] == {0}
    assert out.arrays["o"][1] == 2 and out.arrays["c"][1] == 2
    with pytest.raises(N.Unstable):
        N.fcompare("<", (1.0, 1e-7), (1.0 + 5e-8, 0.0))
    assert N.fcompare("<", (1.0, 1e-7), (1.001, 0.0))


def test_floor_and_ceil_keep_the_sign_of_a_zero_result():
    """ceil(-0.5) and floor(-0.0) are -0.0 (numpy, C, every adapter); the oracle gave +0.0, and
    atan2(0, ceil(v)) then expected 0 where the device rightly gave pi (H100 seeds 2035, 3365, 6545)."""
    for fn, x, want in (("ceil", -0.5, -0.0), ("floor", -0.0, -0.0), ("floor", 0.25, 0.0), ("ceil", -0.0, -0.0)):
        for t in ("f32", "f64"):
            r, e = N.fstep(fn, (x, 0.0), t)
            assert r == want and math.copysign(1.0, r) == math.copysign(1.0, want) and e == 0.0, (fn, x, t, r)


def test_a_subnormal_may_be_flushed_to_zero():
    """A driver may flush a subnormal float to zero where it is read or made (WGSL allows it;
    an H100 does): 1e-38 (subnormal in f32) * 1e30 may be 0 on the device, 1e-37 * 1e30 not."""
    x = Bin("*", Load("x", (Var("i"),)), Const(1e30))
    body = (For("i", (Const(2),), (Store("o", (Var("i"),), x),)),)
    arrays = (Array("x", "f32", (2,), "in"), Array("o", "f32", (2,), "out"))
    xs = np.array([1e-38, 1e-37], np.float32)
    p = Program(0, "hand", (), Kernel(arrays, (), body), {"x": xs, "o": np.zeros(2, np.float32)})
    out = Oracle(p).run(p.fresh_inputs())
    kept = [v for v, _ in out.arrays["o"]]

    def ok(o):
        return compare(p, out, {"x": xs, "o": np.array(o, np.float32)}, None).ok
    assert ok(kept) and ok([0.0, kept[1]])      # the subnormal operand read as 0
    assert not ok([kept[0], 0.0])               # a normal one may not be
    v, e = N.f2f((2.0 ** -149, 0.0), "f64", "f32")   # a conversion's subnormal result
    assert v == 2.0 ** -149 and e >= v and N.f2f((2.0 ** -125, 0.0), "f64", "f32")[1] == 0.0


def test_hang_shrinker_runs_each_candidate_in_a_fresh_process_with_a_timeout(tmp_path):
    """tools/progfuzz/hang.py: a child that reports is finished, one that is still busy after the
    timeout hangs (and is killed); the reproducer of a program runs it and prints 'finished'."""
    assert hang.in_child(kids.finishes, (42,), 60.0) == (True, 42)
    t = time.monotonic()
    assert hang.in_child(kids.sleeps, (30.0,), 1.0) == (False, None)
    assert time.monotonic() - t < 20
    body = (For("i", (Const(2),), (Store("o", (Var("i"),), Bin("*", Load("x", (Var("i"),)), Const(2.0))),)),)
    arrays = (Array("x", "f32", (2,), "in"), Array("o", "f32", (2,), "out"))
    p = Program(5, "hand", (), Kernel(arrays, (), body),
                {"x": np.array([1.0, -0.0], np.float32), "o": np.zeros(2, np.float32)})
    path = tmp_path / "repro_hang.py"
    path.write_text(hang.reproducer(p, 15.0, 9))
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH")) if p))
    r = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=120, env=env)
    assert r.returncode == 0 and r.stdout.strip() == "finished", r.stderr[-2000:]


def test_a_hang_is_reported_with_its_programs_profile():
    """The long mode names a hung or dead worker's seed with the profile its program has (it said
    'all' for the H100's seed 1411, an arith program)."""
    opts = Options(count=1, seed=0, profile="all", jobs=0, time_limit=None, out="x", extreme=False,
                   shrink_time=0, grads=True, verbose=False)
    for seed in (1411, 955, 6986, 7, 8):
        assert _profile(opts, seed) == generate(seed, "all").profile


def test_extreme_values_are_out_of_profile_unless_asked_for():
    N.MODE.extreme = False
    with pytest.raises(N.OutOfProfile):
        N.ishift("<<", 1, 33, "i32")
    with pytest.raises(N.OutOfProfile):
        N.fmod((1e30, 0.0), (100.0, 0.0), "f32")
    N.MODE.extreme = True
    try:     # SEMANTICS.md: numpy's results on the type
        assert N.ishift("<<", 1, 33, "i32") == 0 and N.ishift(">>", -5, 40, "i32") == -1
        assert N.fmod((1e30, 0.0), (100.0, 0.0), "f32")[0] == float(np.remainder(np.float32(1e30), np.float32(100)))
        assert N.ffloordiv((1.0, 0.0), (float(np.float32(0.1)), 0.0), "f32")[0] == 9.0
        assert math.isnan(N.fminmax("max", (math.nan, 0.0), (3.0, 0.0), "f32")[0])
        assert N.fpow((-1.0, 0.0), (2147483647.0, 0.0), "f64")[0] == -1.0
    finally:
        N.MODE.extreme = False


def test_the_shrinker_shrinks_while_the_failure_persists(caps):
    def fails(q) -> bool:     # "a valid program with a `//`" stands in for a device mismatch
        try:
            Oracle(q)
        except InvalidProgram:
            return False
        return any(isinstance(n, Bin) and n.op == "//" for _, n in nodes(q))
    p = next(q for q in (generate(s, "loops", caps) for s in range(3, 100)) if fails(q))
    small = shrink(p, fails, time_limit=30)
    assert fails(small)
    assert sum(1 for _ in nodes(small)) < sum(1 for _ in nodes(p)) // 3


def test_the_gradient_check_fails_on_a_wrong_gradient(caps, workdir):
    p = generate(CI_SEEDS["grad"][0], "grad", caps)
    dev = runner.run(p, workdir)
    assert dev.error is None, dev.error
    assert check_gradients(p, dev.grads).ok
    assert check_gradients(p, dev.grads).compared > 0
    bad = {k: v.copy() for k, v in dev.grads.items()}
    for name in ("x", "z"):
        bad[name].reshape(-1)[:] += 0.5
    assert not check_gradients(p, bad).ok


def test_the_cli_writes_a_reproducer_per_finding(tmp_path, monkeypatch):
    from tools.progfuzz.__main__ import main
    real = runner.run

    def wrong_device(program, wd):
        r = real(program, wd)
        for a in program.kernel.arrays:
            if a.role == "out" and a.dtype == "i32":
                r.arrays[a.name].reshape(-1)[0] ^= 1
        return r
    monkeypatch.setattr(runner, "run", wrong_device)
    rc = main(["--count", "1", "--seed", "0", "--profile", "loops", "--out", str(tmp_path), "--shrink-time", "0"])
    files = os.listdir(tmp_path)
    assert rc == 1 and len(files) == 1 and files[0].startswith("repro_forward_loops_0")
    text = (tmp_path / files[0]).read_text()
    compile(text, files[0], "exec")
    assert "def test_progfuzz_0" in text and "EXPECTED" in text


def test_reproducer_arrays_keep_negative_zeros_and_nan():
    """A reproducer's inputs are the program's bit for bit: -0.0 is not written as np.zeros (it
    decides atan2(-0.0, -17.0) = -pi), and nan / inf are names the file defines."""
    values = {"np": np, "nan": math.nan, "inf": math.inf}
    cases = ((np.float32([0.0, -0.0]), "f32"), (np.float64([math.nan, -math.inf, 1.5]), "f64"),
             (np.zeros(3, np.int32), "i32"))
    for a, t in cases:
        back = eval(_array_literal(a, t), values)
        np.testing.assert_array_equal(back.view(f"u{a.itemsize}"), a.view(f"u{a.itemsize}"))
