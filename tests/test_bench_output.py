"""What `python -m bench` writes and prints, without running a benchmark: where its files go,
and the table's and charts' wording (pure functions over a made-up run)."""
import os

import bench
from bench import cli, report


def test_results_go_under_the_working_directory_not_the_package(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    out = cli.parse_args([]).out
    assert out == str(tmp_path / "bench" / "out")
    assert not out.startswith(os.path.dirname(os.path.abspath(bench.__file__)))
    assert cli.parse_args(["--out", "elsewhere"]).out == str(tmp_path / "elsewhere")
    assert report.default_out(str(tmp_path)) == out
