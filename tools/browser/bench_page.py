"""How long the page takes in headless Chromium on this machine (docs/browser.md, "The page"):

    PYTHONPATH=$PWD python -m tools.browser.bench_page [--runs 2]

Serves the page (webpage.py), opens it as a visitor's browser does (cdp.py), and prints the seconds
until it is ready (Pyodide, lark and gfxrt loaded), then each example's run as the page times it
(page.lastRun.seconds: the first run compiles its kernels, later ones reuse them), and the load average."""
from __future__ import annotations

import argparse
import os
import threading
import time

from tools.browser import cdp, webpage


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=2, help="runs of each example")
    args = ap.parse_args()
    s = webpage.server(0)
    threading.Thread(target=s.serve_forever, daemon=True).start()
    t0 = time.perf_counter()
    try:
        with cdp.Tab(f"http://127.0.0.1:{s.server_address[1]}/", timeout=300) as tab:
            tab.wait_for("window.page !== undefined")
            tab.evaluate("page.ready")
            print(f"page ready after {time.perf_counter() - t0:.2f} s (load average {os.getloadavg()[0]:.2f})")
            for name in webpage.EXAMPLES:
                runs = [tab.evaluate(f"page.select({name!r}).then(() => page.run()).then(r => r.ok && r.seconds)",
                                     timeout=300) for _ in range(args.runs)]
                print(f"{name}: " + ", ".join(f"{t:.2f} s" for t in runs))
    finally:
        s.shutdown()
        s.server_close()
    print(f"load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
