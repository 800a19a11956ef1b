"""The benchmark harness (bench/): a real run on tiny cases, the JSON it writes, the table, and
that a case which kills its worker process costs that case only."""
import json
import os
import subprocess
import sys
import textwrap

import pytest

from bench import report
from bench.registry import BENCHMARKS, Case, Work, benchmark
from bench.timing import Config, measure

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STATUSES = {"ok", "wrong", "n/a", "error"}


def _run_bench(tmp_path, *args, env_extra=None, plots=False):
    # keep the inherited PYTHONPATH: where wgpu and the test dependencies are installed outside
    # the venv (the GPU machine's /tmp/site), dropping it left the worker without gfxrt's imports
    path = os.pathsep.join(p for p in (ROOT, str(tmp_path), os.environ.get("PYTHONPATH")) if p)
    env = dict(os.environ, PYTHONPATH=path, XDG_RUNTIME_DIR="/tmp", **(env_extra or {}))
    out = tmp_path / "out"
    args = args if plots else (*args, "--no-plots")
    proc = subprocess.run([sys.executable, "-m", "bench", "--quick", "--out", str(out), *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    files = sorted(out.glob("bench-*.json"))
    assert len(files) == 1
    return proc.stdout, json.loads(files[0].read_text())


def _check_schema(run):
    assert run["schema"] == report.SCHEMA
    for key in ("started", "finished", "git", "machine", "frameworks", "results", "benchmarks", "quick"):
        assert key in run, key
    assert run["machine"]["cores"] >= 1 and run["machine"]["python"]
    assert set(run["git"]) == {"commit", "branch", "dirty"}
    for r in run["results"]:
        assert r["status"] in STATUSES
        assert r["benchmark"] in run["benchmarks"] and r["framework"] in run["frameworks"]
        if r["status"] in ("ok", "wrong"):
            host = r["host_s"]
            assert 0 < host["min"] <= host["median"] <= host["max"]
            assert host["n"] == len(host["samples"]) >= 1 and host["inner"] >= 1
            assert r["value"] > 0
        else:
            assert r["reason"]


def test_quick_run_numpy_and_gfxrt(tmp_path):
    stdout, run = _run_bench(tmp_path, "--only", "launch,reduction", "--no-peers", plots=True)
    _check_schema(run)
    assert run["quick"] is True and run["benchmarks"] == ["launch", "reduction"]
    fws = run["frameworks"]
    assert fws["gfxrt"]["ok"] and fws["numpy"]["ok"]
    assert fws["gfxrt"]["info"]["backend"].startswith("wgpu/") and fws["numpy"]["info"]["version"]
    got = {(r["benchmark"], r["framework"], r["case"]): r for r in run["results"]}
    launch = [("launch", f, c) for f in ("gfxrt", "numpy") for c in ("device array", "numpy arguments")]
    reduction = [("reduction", f, c) for f in ("gfxrt", "numpy") for c in ("2^16", "2^20")]
    assert set(got) == set(launch + reduction)
    for key in launch:
        r = got[key]
        if key[1] == "numpy":
            assert r["status"] == "n/a" and "host" in r["reason"]
            continue
        assert r["status"] == "ok", r
        assert r["unit"] == "us" and r["higher_is_better"] is False
        assert r["value"] == pytest.approx(r["host_s"]["median"] * 1e6)
    for key in reduction:
        r = got[key]
        assert r["status"] == "ok", r  # the sums were checked against float64
        assert r["unit"] == "GB/s" and r["amount"] == 4 * (1 << int(key[2][2:]))
        assert r["value"] == pytest.approx(r["amount"] / r["host_s"]["median"] / 1e9)
    # numpy is the CPU reference: its own column, no ratio; the header says no like-for-like peer ran
    assert "numpy (CPU ref)" in stdout and "reduction" in stdout and "vs best" not in stdout
    assert "no peer ran on Vulkan" in stdout
    # the charts are drawn beside the JSON by default, and their paths printed
    plots = tmp_path / "out" / (sorted((tmp_path / "out").glob("bench-*.json"))[0].stem + "-plots")
    assert {p.name for p in plots.glob("*.png")} == {"launch.png", "reduction.png"}  # no peer: no overview
    assert f"charts: 2 PNGs in {plots}/" in stdout and str(plots / "launch.png") in stdout


CRASHY = textwrap.dedent("""
    import os
    import time
    import numpy as np
    from bench.registry import Case, Work, NA, benchmark

    b = benchmark("zz_crashy", "a case that aborts its worker", unit="us",
                  cases=lambda quick: [Case("ok", 0), Case("abort, once", 1), Case("na", 2), Case("hang", 3),
                                       Case("after", 4)])

    @b.impl("numpy")
    def _(fw, p):
        if p == 1:
            os.abort()
        if p == 2:
            raise NA("not here")
        if p == 3:
            time.sleep(120)
        a = np.ones(4)
        return Work(run=lambda: a.sum(), check=lambda: None if a.sum() == 4 else "bad")
""")


def test_a_crashing_or_hanging_case_costs_only_itself(tmp_path):
    (tmp_path / "crashy_bench.py").write_text(CRASHY)
    _, run = _run_bench(tmp_path, "--only", "zz_crashy", "--peers", "numpy", "--ours", "numpy", "--case-timeout", "3",
                        env_extra={"GFXRT_BENCH_MODULES": "crashy_bench"})
    _check_schema(run)
    got = {r["case"]: r for r in run["results"]}
    assert got["ok"]["status"] == "ok" and got["after"]["status"] == "ok"
    assert got["abort, once"]["status"] == "error" and "worker died" in got["abort, once"]["reason"]
    assert got["hang"]["status"] == "error" and "timed out after 3 s" in got["hang"]["reason"]
    assert len(run["results"]) == 5  # each restarted worker skipped the cases already done
    assert got["na"]["status"] == "n/a" and got["na"]["reason"] == "not here"


def test_measure_batches_runs_and_syncs():
    calls = {"run": 0, "sync": 0}

    def run():
        calls["run"] += 1

    def sync():
        calls["sync"] += 1
    host, device = measure(run, sync, Config(warmup=1, repeats=3, target_s=0.002, max_inner=64))
    assert device is None and host["n"] == 3
    assert host["inner"] > 1  # a cheap run is batched between syncs
    assert calls["run"] > calls["sync"] >= 3


def test_table_ranks_like_for_like_and_flags():
    b = "zz_table"
    if b not in BENCHMARKS:
        benchmark(b, "t", unit="GB/s", cases=lambda q: [Case("x", 1)])

    def res(fw, status, value=None):
        return {"benchmark": b, "case": "x", "framework": fw, "unit": "GB/s", "higher_is_better": True,
                "status": status, "value": value, "reason": "why"}

    def fw(backend):
        return {"ok": True, "info": {"backend": backend}}
    run = {"benchmarks": [b], "frameworks": {"gfxrt": fw("wgpu/vulkan"), "numpy": fw("cpu"), "torch": fw("cuda"),
                                             "taichi:vulkan": fw("vulkan"), "quadrants:vulkan": fw("vulkan")},
           "results": [res("gfxrt", "ok", 50.0), res("numpy", "ok", 1000.0), res("torch", "ok", 25.0),
                       res("taichi:vulkan", "ok", 100.0), res("quadrants:vulkan", "wrong", 1000.0)]}
    run["notes"] = {b: "torch   fuses it", "zz_absent": "not shown"}
    assert {r: report.roles_of(run)[r] for r in ("same", "other", "ref")} == {
        "same": ["taichi:vulkan", "quadrants:vulkan"], "other": ["torch"], "ref": ["numpy"]}
    text = report.table(run, width=1000)  # one part, headings on one line
    head = text.splitlines()[0].split()
    # gfxrt, the peers on its driver and their ratio, the other peers and theirs, the CPU reference last
    assert head[3:] == ["gfxrt", "taichi:vulkan", "quadrants:vulkan", "gfxrt", "vs", "best", "Vulkan", "peer",
                        "torch", "gfxrt", "vs", "best", "other", "peer", "numpy", "(CPU", "ref)"]
    assert "0.50x (taichi:vulkan)" in text  # the wrong (faster) quadrants figure is not the best peer
    assert "2.00x (torch)" in text and "(numpy)" not in text  # numpy is faster, but only the reference
    assert "1,000!" in text and "! = wrong result" in text
    assert report.best_peer(report.rows(run)[0]) == ("numpy", 1000.0)
    assert f"notes:\n  {b}: torch fuses it" in text and "not shown" not in text
    assert "*" not in text
    run["unlike"] = {b: ["taichi"]}  # taichi runs another algorithm class here: its ratio is starred
    assert "0.50x (taichi:vulkan*)" in report.table(run) and "* that peer runs" in report.table(run)
    assert "100*" in report.table(run)  # its figure too: one meaning of `*` wherever it stands
    device = report.table(run, device=True)  # no device figures: neither wrong results nor notes
    assert "! = wrong" not in device and "notes:" not in device
    assert "like for like" in report.header(run) and "CPU reference" in report.header(run)


def test_default_peers_are_like_for_like():
    from bench.cli import parse_args
    assert {"taichi:vulkan", "quadrants:vulkan", "numpy", "torch"} <= set(parse_args([]).peers)
    assert parse_args(["--no-peers"]).peers == ["numpy"]
    assert parse_args(["--peers", "none"]).peers == []


def test_work_value_units():
    b = benchmark("zz_units", "u", unit="GFLOP/s", cases=lambda q: []) if "zz_units" not in BENCHMARKS \
        else BENCHMARKS["zz_units"]
    assert b.value(0.5, 2e9) == pytest.approx(4.0) and b.higher_is_better
    assert Work().run is None


def _synthetic_run(started, results):
    return {"schema": report.SCHEMA, "started": started, "benchmarks": ["zz_plot"], "titles": {"zz_plot": "t"},
            "frameworks": {fw: {"ok": True, "info": {}} for fw in ("gfxrt", "numpy", "taichi:vulkan")},
            "results": results}


def _res(fw, case, value, status="ok"):
    return {"benchmark": "zz_plot", "case": case, "framework": fw, "unit": "us", "higher_is_better": False,
            "status": status, "value": value, "reason": "" if status == "ok" else "why"}


def test_merge_later_runs_win_and_plot_writes_pngs(tmp_path):
    t = "taichi:vulkan"
    a = _synthetic_run("t1", [_res("gfxrt", "small", 10.0), _res("numpy", "small", 5.0),
                              _res(t, "small", None, "error")])
    b = _synthetic_run("t2", [_res(t, "small", 2.0), _res("gfxrt", "big", 4.0), _res(t, "big", 8.0)])
    m = report.merge([a, b])
    cells = {(r["framework"], r["case"]): r for r in m["results"]}
    assert cells[(t, "small")]["value"] == 2.0 and cells[("gfxrt", "small")]["value"] == 10.0
    assert len(m["merged_from"]) == 2
    text = report.table(m)
    assert f"0.20x ({t})" in text and f"2.00x ({t})" in text  # 2/10 and 8/4 (times: lower is better)
    pytest.importorskip("matplotlib")
    from bench import plot
    paths = plot.plot_run(m, str(tmp_path / "plots"))
    assert {os.path.basename(p) for p in paths} == {"zz_plot.png", "overview.png"}
    for p in paths:
        with open(p, "rb") as f:
            assert f.read(8) == b"\x89PNG\r\n\x1a\n"


# -- machines: cases marked for GPUs or CPU adapters --------------------------------------------
def test_sizes_mark_cases_per_machine():
    from bench.registry import machine_sizes, sizes
    assert machine_sizes([1, 4, 16], [1, 4, 8]) == [(1, None), (4, None), (8, "cpu"), (16, "gpu")]
    assert machine_sizes([1, 2]) == [(1, None), (2, None)]
    cases = sizes([256, 2048], [64], label=str, cpu=[256, 1024])
    assert [(c.label, c.only) for c in cases(False)] == [("256", None), ("1024", "cpu"), ("2048", "gpu")]
    assert [(c.label, c.only) for c in cases(True)] == [("64", None)]
    b = benchmark("zz_machines", "m", unit="us", cases=cases) if "zz_machines" not in BENCHMARKS \
        else BENCHMARKS["zz_machines"]
    assert [c.label for c in b.cases_for(False, "cpu")] == ["256", "1024"]
    assert [c.label for c in b.cases_for(False, "gpu")] == ["256", "2048"]
    with pytest.raises(ValueError):
        Case("x", 1, only="tpu")


def test_cpu_adapters_leave_out_the_slow_cases():
    """The full run's CPU sizes: no naive 2048^3 matmul and nothing over lavapipe's 128 MiB binding."""
    from bench.registry import load_all
    benches = load_all()
    cpu = {b.name: [c.label for c in b.cases_for(False, "cpu")] for b in benches.values()}
    gpu = {b.name: [c.label for c in b.cases_for(False, "gpu")] for b in benches.values()}
    assert "2048x2048" in gpu["matmul"] and "2048x2048" not in cpu["matmul"]
    assert "256 MB" in gpu["saxpy"] and "256 MB" not in cpu["saxpy"] and "64 MB" in cpu["saxpy"]
    assert "2^24 backward" in gpu["ad_loop"] and "2^24 backward" not in cpu["ad_loop"]
    for b in benches.values():  # quick runs never depend on the machine
        assert all(c.only is None for c in b.cases(True)), b.name


MACHINE_BENCH = textwrap.dedent("""
    import numpy as np
    from bench.registry import Case, Work, benchmark

    b = benchmark("zz_machine", "cases per machine", unit="us",
                  cases=lambda quick: [Case("everywhere", 0), Case("gpu case", 1, "gpu"), Case("cpu case", 2, "cpu")])

    @b.impl("numpy")
    def _(fw, p):
        a = np.ones(4)
        return Work(run=lambda: a.sum(), check=lambda: None)
""")


@pytest.mark.parametrize("sizes", ["cpu", "auto"])
def test_sizes_flag_picks_the_machines_cases(tmp_path, sizes):
    (tmp_path / "machine_bench.py").write_text(MACHINE_BENCH)
    stdout, run = _run_bench(tmp_path, "--only", "zz_machine", "--peers", "none", "--ours", "numpy", "--sizes", sizes,
                             env_extra={"GFXRT_BENCH_MODULES": "machine_bench"})
    machine = run["sizes"]["machine"]
    if sizes == "cpu":
        assert machine == "cpu" and run["sizes"]["why"] == "--sizes cpu"
    else:  # a probe worker started gfxrt and asked whether its adapter is a CPU
        import gfxrt as gr
        assert run["sizes"]["why"].startswith(f"auto: gfxrt runs on a {machine.upper()} adapter")
        assert machine == ("cpu" if gr.device().is_cpu else "gpu")
    other = "gpu" if machine == "cpu" else "cpu"
    assert sorted(r["case"] for r in run["results"]) == sorted(["everywhere", f"{machine} case"])
    assert run["sizes"]["skipped"] == [f"zz_machine/{other} case"]
    assert all(r["status"] == "ok" for r in run["results"])


def test_a_long_operation_is_timed_without_extra_runs():
    import time
    calls = []

    def run():
        calls.append(1)
        time.sleep(0.03)
    host, _ = measure(run, lambda: None, Config(warmup=3, repeats=11, target_s=0.01, case_budget_s=0.02))
    assert len(calls) == 1 and host["n"] == 1 and host["inner"] == 1  # its first timed run is the sample
    assert host["median"] >= 0.03


# -- gfxrt's implementations are the kernels/ library -------------------------------------------
LIBRARY_CASES = [("saxpy", 3000), ("memcpy", 3000), ("fill", 3000), ("reduction", 5000), ("scan", 5000),
                 ("stencil", 40), ("matmul", 70), ("histogram", (5000, 64)), ("histogram", (5000, 5000))]


@pytest.fixture(scope="module")
def gfxrt_fw():
    from bench.frameworks import make
    fw = make("gfxrt")
    fw.start()
    return fw


TINY = Config(warmup=0, repeats=1, device_repeats=0, target_s=0.0, max_inner=1, case_budget_s=0.01)


@pytest.mark.parametrize("name,param", LIBRARY_CASES, ids=[f"{n}-{p}" for n, p in LIBRARY_CASES])
def test_gfxrt_cases_run_the_library_and_check_out(gfxrt_fw, name, param):
    from bench.registry import load_all
    from bench.worker import run_case
    r = run_case(load_all()[name], Case("tiny", param), gfxrt_fw, TINY)
    assert r["status"] == "ok", r
    assert r["impl"].startswith("kernels."), r["impl"]


@pytest.mark.parametrize("name,param", [("ad_loop", (300, "backward")), ("ad_tape", (70, "forward+backward")),
                                        ("graph", "graph")])
def test_gfxrt_autodiff_and_graph_cases_need_no_fallback(gfxrt_fw, name, param):
    from bench.registry import load_all
    from bench.worker import run_case
    r = run_case(load_all()[name], Case("tiny", param), gfxrt_fw, TINY)
    if name == "graph" and not callable(getattr(gfxrt_fw.mod, "graph", None)):
        assert r["status"] == "n/a" and r["reason"] == "gfxrt has no gr.graph() yet"
        return
    assert r["status"] == "ok", r  # gradients checked against analytic ones / the graph's result against numpy


def test_gfxrt_gui_particles_case_draws_where_the_particles_are(gfxrt_fw):
    from bench.registry import load_all
    from bench.worker import run_case
    r = run_case(load_all()["gui_particles"], Case("tiny", (2000, "step + draw")), gfxrt_fw, TINY)
    assert r["status"] == "ok", r  # its check: lit pixels under the particles' positions


def test_browser_benchmarks_are_na_without_a_browser(monkeypatch, tmp_path):
    """bench/benchmarks/browser.py: the tab's cases are n/a, naming what is missing, where Pyodide
    (or Chromium) is absent; the desktop's cases need neither."""
    from bench.benchmarks import browser
    from bench.registry import NA
    monkeypatch.setenv("GFXRT_BROWSER_CACHE", str(tmp_path))  # no Pyodide there

    class Fw:
        def memo(self, key, factory):
            return factory()
    with pytest.raises(NA, match="no Pyodide|no chromium"):
        browser._gfxrt(Fw(), ("browser tab", "launch"))
    assert [c.param for c in browser.browser_compile.cases(True)] == [
        ("desktop", "first compile"), ("browser tab", "first compile"),
        ("desktop", "cached compile"), ("browser tab", "cached compile")]
