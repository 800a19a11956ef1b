"""gfxrt's benchmark suite: `python -m bench` from the checkout's root (not installed with gfxrt;
see docs/bench.md, bench/RESULTS.md)."""
