"""gfxrt's benchmark suite: `python -m bench` (see bench/RESULTS.md)."""
