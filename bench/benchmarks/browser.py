"""gfxrt in a browser tab (issue 26) beside the desktop, on the same machine: a launch of the
quickstart saxpy (n = 256), with and without gr.sync(), and its compile (first, and cached), by one
program run by gfxrt's own runtime on both sides (tools/browser/bench_launch.py). The tab is headless
Chromium with Pyodide and the browser's WebGPU (tools/browser/session.py); where Chromium or Pyodide is
absent the tab's cases are n/a, saying which is missing (`bash dev.sh test` installs them)."""
from ..registry import NA, Case, Work, benchmark

SIDES = ("desktop", "browser tab")
LAUNCH = ("launch", "launch + gr.sync()")
COMPILE = ("first compile", "cached compile")
SAMPLES = 7
_NA = {k: "no runtime in a browser tab" for k in ("numpy", "torch", "taichi", "quadrants", "warp")}
NOTE = ("one program on both sides (tools/browser/bench_launch.py); the tab: headless Chromium, Pyodide, the "
        "browser's WebGPU (SwiftShader on a machine without a GPU); the desktop: wgpu-native")


def _cases(kinds):
    return lambda quick: [Case(f"{side}: {kind}", (side, kind)) for kind in kinds for side in SIDES]


browser_launch = benchmark("browser_launch", "a launch of the quickstart saxpy (n = 256): desktop and browser tab",
                           unit="us", group="browser", cases=_cases(LAUNCH), na=_NA, note=NOTE)
browser_compile = benchmark("browser_compile", "compiling the quickstart saxpy: desktop and browser tab", unit="ms",
                            group="browser", cases=_cases(COMPILE), na=_NA, note=NOTE)


def _tab_samples() -> dict:
    """Every kind's samples in a tab: one browser for all of them, closed before they are used."""
    try:
        from tools.browser import bench_launch, session
    except ImportError as e:  # (run outside the checkout)
        raise NA(f"tools/browser is not importable here ({e})") from None
    why = session.missing()
    if why is not None:
        raise NA(why)
    with session.BrowserSession() as tab:
        return bench_launch.in_tab(tab, SAMPLES)


def _desktop_samples() -> dict:
    from tools.browser import bench_launch
    return bench_launch.measure(SAMPLES)


@browser_launch.impl("gfxrt")
@browser_compile.impl("gfxrt")
def _gfxrt(fw, param):
    side, kind = param
    got = fw.memo(f"browser:{side}", _desktop_samples if side == "desktop" else _tab_samples)
    return Work(samples=lambda k: got[kind], impl="tools/browser/bench_launch.py: gfxrt's runtime, "
                + ("wgpu-native" if side == "desktop" else "Pyodide in headless Chromium, the browser's WebGPU"))
