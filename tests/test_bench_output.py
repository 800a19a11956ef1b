"""What `python -m bench` writes and prints, without running a benchmark: where its files go,
and the table's and charts' wording (pure functions over a made-up run)."""
import os

import pytest

import bench
from bench import cli, report


def test_results_go_under_the_working_directory_not_the_package(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    out = cli.parse_args([]).out
    assert out == str(tmp_path / "bench" / "out")
    assert not out.startswith(os.path.dirname(os.path.abspath(bench.__file__)))
    assert cli.parse_args(["--out", "elsewhere"]).out == str(tmp_path / "elsewhere")
    assert report.default_out(str(tmp_path)) == out


def _run_with_peers():
    """A made-up run: gfxrt, two peers on its driver, an other peer and the CPU reference, with
    long case labels and reasons (wide enough to need wrapping)."""
    def fw(backend):
        return {"ok": True, "info": {"backend": backend, "version": "1", "device": "a device"}}

    def res(b, case, spec, status, value=None, reason=""):
        return {"benchmark": b, "case": case, "framework": spec, "unit": "GB/s", "higher_is_better": True,
                "status": status, "value": value, "reason": reason}
    long_case = "(forward+backward)/forward, long"
    refused = ("PrefixSumExecutor refuses this device: it requires subgroup size == 32 (got 8). The kernel "
               "hard-codes a 32-wide warp scan; running on this device would give wrong sums. Use another.")
    results = []
    for case in ("2^16", long_case):
        results += [res("scan", case, "gfxrt", "ok", 1.5), res("scan", case, "taichi:vulkan", "wrong", 0.5, "differs"),
                    res("scan", case, "quadrants:vulkan", "n/a", reason=refused),
                    res("scan", case, "warp:cuda", "ok", 20.0), res("scan", case, "numpy", "ok", 30.0),
                    res("scan", case, "torch", "ok", 31.0)]
    results += [res("sort", "x", "gfxrt", "ok", 2.0), res("sort", "x", "taichi:vulkan", "error", reason="crashed"),
                res("sort", "x", "quadrants:vulkan", "n/a", reason="Dispatch error: RhiResult(not_supported)"),
                res("sort", "x", "warp:cuda", "ok", 1.0)]
    return {"benchmarks": ["scan", "sort"], "results": results, "notes": {"scan": "word " * 60},
            "frameworks": {"gfxrt": fw("wgpu/vulkan"), "taichi:vulkan": fw("vulkan"), "quadrants:vulkan": fw("vulkan"),
                           "warp:cuda": fw("cuda"), "numpy": fw("cpu"), "torch": fw("cpu")},
            "machine": {"hostname": "h", "cpu": "a CPU with a rather long model name", "cores": 2,
                        "loadavg_start": [0.3, 0.2, 0.1]}, "loadavg_end": [1.0], "git": {"commit": "abc"},
            "started": "2026-11-27T00:00:00+00:00"}


def test_text_output_fits_the_width_and_keeps_every_column():
    run = _run_with_peers()
    for width in (80, 100):
        text = report.header(run, width) + "\n" + report.table(run, width=width)
        assert max(len(line) for line in text.splitlines()) <= width, width
    text = report.table(run, width=100)
    for name in ("taichi:vulkan", "quadrants:vulkan", "warp:cuda", "numpy", "torch"):
        assert name in text  # a heading may wrap, never a framework name
    # every part repeats the benchmark, case, unit and gfxrt columns
    parts = [p for p in text.split("\n\n") if p.lstrip().startswith(("benchmark", "gfxrt", "vs"))]
    assert len(parts) >= 2 and all("gfxrt" in p and "(forward+backward)/forward, long" in p for p in parts)
    wide = report.table(run, width=1000)
    assert wide.splitlines()[0].startswith("benchmark") and "\n\n" not in wide.split("! = wrong")[0]


def test_reasons_are_shortened_at_sentence_ends_only():
    refused = _run_with_peers()["results"][2]["reason"]
    s = report.short(refused, 120)
    assert s == "PrefixSumExecutor refuses this device: it requires subgroup size == 32 (got 8). [...]"
    assert report.short("one sentence, " * 20, 50) == ("one sentence, " * 20).strip()  # never cut inside
    assert report.short("short.", 50) == "short."
    text = " ".join(report.table(_run_with_peers(), width=100).split())  # wrapped lines joined
    assert "(got 8). [...]" in text and "..." not in text.replace("[...]", "")
    assert "word word" in text and text.count("word") == 60  # a benchmark's note wraps, whole


def test_a_busy_machine_is_warned_about():
    assert report.busy([0.9, 0, 0], 2) is None
    assert "busy (load average 1.5 on 2 cores" in report.busy([1.5, 0, 0], 2)
    assert report.busy(None, 2) is None
    run = _run_with_peers()
    assert "busy" not in report.header(run)
    run["machine"]["loadavg_start"] = [3.0, 2.0, 1.0]
    assert "warning: the machine is busy" in report.header(run)


def test_why_a_peer_has_no_ranked_figure():
    from bench.plot import failure
    assert failure({"status": "ok", "value": 1.0}) is None and failure(None) is None
    assert failure({"status": "wrong", "value": 1.0, "reason": "differs"}) == "wrong"
    assert failure({"status": "n/a", "reason": "PrefixSumExecutor refuses this device: ..."}) == "refused the device"
    assert failure({"status": "error", "reason": "Dispatch error : RhiResult(not_supported)"}) == "refused the device"
    assert failure({"status": "error", "reason": "worker died"}) == "failed"
    assert failure({"status": "n/a", "reason": "taichi has no batched copy call"}) == "n/a"


def test_only_gfxrt_right_says_why_per_peer():
    from bench.plot import failed_peers, only_ours_right
    run = _run_with_peers()
    rows = {(r["bench"], r["case"]): r for r in report.rows(run)}
    vulkan = ["taichi:vulkan", "quadrants:vulkan"]
    # lavapipe's scan: Taichi wrong, Quadrants refused the device: not "(peers: wrong)"
    assert only_ours_right(rows[("scan", "2^16")], vulkan) == \
        "only gfxrt right (taichi:vulkan: wrong; quadrants:vulkan: refused the device)"
    assert failed_peers(rows[("sort", "x")], vulkan) == {"taichi:vulkan": "failed",
                                                          "quadrants:vulkan": "refused the device"}
    both = {"cells": {"gfxrt": {"status": "ok", "value": 1.0},
                      "taichi:vulkan": {"status": "error", "reason": "RhiResult(not_supported)"},
                      "quadrants:vulkan": {"status": "n/a", "reason": "refuses this device"}}}
    assert only_ours_right(both, vulkan) == "only gfxrt right (peers: refused the device)"
    both["cells"]["gfxrt"]["status"] = "wrong"
    assert only_ours_right(both, vulkan) == ""
    lacking = {"cells": {"gfxrt": {"status": "ok", "value": 1.0},
                         "taichi:vulkan": {"status": "n/a", "reason": "no call"}}}
    assert only_ours_right(lacking, vulkan) == ""  # a peer without the operation is no failure


def test_charts_draw_with_failed_and_other_class_peers(tmp_path):
    pytest.importorskip("matplotlib")
    from bench.plot import plot_run
    run = _run_with_peers()
    run["unlike"] = {"sort": ["warp"]}
    names = sorted(os.path.basename(p) for p in plot_run(run, str(tmp_path)))
    assert names == ["overview.png", "scan.png", "sort.png"]


def test_no_cuda_peer_is_asked_for_without_cuda(monkeypatch):
    from bench import frameworks
    assert "warp:cuda" in frameworks.default_peers(cuda=True)
    assert "warp:cuda" not in frameworks.default_peers(cuda=False)
    monkeypatch.setattr(frameworks.shutil, "which", lambda name: None)  # no nvidia-smi
    peers = cli.parse_args([]).peers
    assert "warp:cuda" not in peers and {"taichi:vulkan", "quadrants:vulkan", "numpy", "torch"} <= set(peers)
    assert cli.parse_args(["--peers", "warp:cuda"]).peers == ["warp:cuda"]  # asked for: still run (and reported)
