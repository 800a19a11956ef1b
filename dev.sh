#!/usr/bin/env bash
# gfxrt's one entry point. Each command first does all set-up, idempotently:
#   a virtual environment (.venv), the project installed into it, and the CPU Vulkan driver
#   (mesa-vulkan-drivers) when wgpu finds no Vulkan/Metal/D3D12 adapter.
#
#   bash dev.sh test [pytest args]     run the test suite; first installs, when absent, what the browser
#                                      tier needs (tests/test_browser.py, docs/browser.md): Debian's
#                                      chromium-headless-shell, Pyodide from npm and lark's wheel, into
#                                      .cache/browser (GFXRT_BROWSER=0 skips this; the tier then skips)
#   bash dev.sh web [--port N] [--export DIR]
#                                      serve the page that runs gfxrt programs in a browser tab
#                                      (tools/browser/webpage.py, docs/browser.md "The page"), offline
#                                      from Pyodide's files installed as for the browser tier; --export
#                                      writes it as static files for any host instead
#   bash dev.sh bench [--no-peers] [bench args]
#                                      the main job: the benchmark suite (default: --quick). First installs
#                                      (once; a stamp in the venv caches it) the peers that run on this
#                                      machine's adapter: Taichi and Quadrants (forced onto Vulkan, the driver
#                                      gfxrt uses: the like-for-like comparison), torch (CPU build without an
#                                      NVIDIA GPU: the CPU reference beside numpy) and, with CUDA, Warp. A peer
#                                      that fails to install is reported and skipped. --no-peers: neither
#                                      installs nor runs them (gfxrt and numpy only).
#   bash dev.sh peers                  (re)install the peers now, also those that failed before
#   bash dev.sh demo                   run the quickstart example
#   bash dev.sh setup                  only set up
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
VENV="${GFXRT_VENV:-.venv}"
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-/tmp}"
export PYTHONUNBUFFERED=1

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else "$@"; fi; }
apt_install() {
  echo "[setup] apt-get install $*" >&2
  as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

setup() {
  command -v python3 >/dev/null || apt_install python3 python3-venv python3-pip
  if [ ! -x "$VENV/bin/python" ]; then
    python3 -m venv "$VENV" 2>/dev/null || { rm -rf "$VENV"; apt_install python3-venv; python3 -m venv "$VENV"; }
  fi
  local stamp="$VENV/.gfxrt-installed" want
  want="$(cat pyproject.toml | sha1sum | cut -c1-16)"
  if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    echo "[setup] installing gfxrt and its dependencies into $VENV" >&2
    "$VENV/bin/python" -m pip install -q --upgrade pip >/dev/null 2>&1 || true
    "$VENV/bin/python" -m pip install -q -e ".[test,bench,sparse,gui]"
    echo "$want" > "$stamp"
  fi
  if ! "$VENV/bin/python" - <<'PY'
import sys, wgpu
from wgpu.backends.wgpu_native.extras import set_instance_extras
set_instance_extras(backends=["Primary"])  # Vulkan/Metal/D3D12 only: no OpenGL (EGL) instance, as in gfxrt
sys.exit(0 if wgpu.gpu.enumerate_adapters_sync() else 1)
PY
  then
    echo "[setup] no Vulkan adapter found: installing the CPU Vulkan driver (mesa-vulkan-drivers)" >&2
    apt_install mesa-vulkan-drivers
  fi
  # a virtual display for gr.GUI's window test (tests/test_gui_window.py; skipped without it)
  command -v Xvfb >/dev/null || apt_install xvfb || echo "[setup] no xvfb: the window test will be skipped" >&2
}

PYODIDE_VERSION=0.29.5  # Python 3.13; its runtime files only (the npm package holds no packages)
BROWSER_CACHE="${GFXRT_BROWSER_CACHE:-.cache/browser}"
setup_browser() {
  # The browser tier's pieces, each once; a failure only skips the tier (it says why)
  [ "${GFXRT_BROWSER:-1}" = 0 ] && return
  if ! command -v chromium-headless-shell >/dev/null && ! command -v chromium >/dev/null; then
    apt_install chromium-headless-shell || echo "[setup] no chromium: the browser tier will be skipped" >&2
  fi
  setup_pyodide
}
setup_pyodide() {
  # Pyodide's runtime files and lark's wheel, each once: the tab's Python (the browser tier, bash dev.sh web)
  if [ ! -f "$BROWSER_CACHE/pyodide/pyodide.js" ]; then
    command -v npm >/dev/null || apt_install npm || true
    local tmp; tmp="$(mktemp -d)"
    if (cd "$tmp" && npm pack -q "pyodide@$PYODIDE_VERSION" >/dev/null 2>&1 && tar xzf pyodide-*.tgz); then
      mkdir -p "$BROWSER_CACHE" && rm -rf "$BROWSER_CACHE/pyodide" && mv "$tmp/package" "$BROWSER_CACHE/pyodide"
      echo "[setup] Pyodide $PYODIDE_VERSION in $BROWSER_CACHE/pyodide" >&2
    else
      echo "[setup] could not fetch Pyodide from npm: the browser tier will be skipped" >&2
    fi
    rm -rf "$tmp"
  fi
  if ! ls "$BROWSER_CACHE"/wheels/lark-*.whl >/dev/null 2>&1; then
    "$VENV/bin/python" -m pip download -q --no-deps --only-binary=:all: "lark>=1.1" -d "$BROWSER_CACHE/wheels" \
      >/dev/null 2>&1 || echo "[setup] could not fetch lark's wheel: the browser tier will be skipped" >&2
  fi
}

PEERS_STAMP="$VENV/.gfxrt-peers"
peer_specs() {
  # The peers for this machine: Warp only with an NVIDIA GPU (without CUDA it runs natively on the
  # CPU, neither like for like nor the reference); torch: the CUDA build where there is an NVIDIA
  # GPU, elsewhere only a CPU build (a local wheel found through pip's find-links), never the
  # multi-GB CUDA build on a machine without a GPU.
  echo "taichi==1.7.4" "quadrants==1.3.3"
  if command -v nvidia-smi >/dev/null 2>&1; then echo "warp-lang" "torch"; else echo "torch==2.13.0+cpu"; fi
}

install_peers() {
  # Each peer on its own: a failure skips that peer (the bench reports it as not installed).
  local py="$VENV/bin/python" p failed="" t0=$SECONDS binary
  for p in $(peer_specs); do
    echo "[peers] installing $p" >&2
    binary=""; case "$p" in torch*) binary="--only-binary=:all:" ;; esac  # never build torch from source
    if "$py" -m pip install -q $binary "$p" >"$VENV/.gfxrt-peers.log" 2>&1; then
      echo "[peers] installed $p" >&2
    else
      failed="$failed $p"
      echo "[peers] could not install $p: skipped ($(tail -n 1 "$VENV/.gfxrt-peers.log"))" >&2
    fi
  done
  echo "[peers] done in $((SECONDS - t0)) s${failed:+; not installed:$failed (bash dev.sh peers retries)}" >&2
  { peer_specs | tr '\n' ' '; echo; echo "failed:$failed"; } > "$PEERS_STAMP"
}

ensure_peers() {
  # Install the peers once per venv and machine kind; later runs only read the stamp.
  if [ "$(head -n 1 "$PEERS_STAMP" 2>/dev/null)" = "$(peer_specs | tr '\n' ' ')" ]; then
    local failed; failed="$(sed -n 's/^failed://p' "$PEERS_STAMP")"
    if [ -n "$failed" ]; then echo "[peers] not installed earlier:$failed (bash dev.sh peers retries)" >&2; fi
    return
  fi
  echo "[peers] first run: installing the peers into $VENV (once; --no-peers skips them)" >&2
  install_peers
}

cmd="${1:-test}"; shift || true
setup
case "$cmd" in
  setup) ;;
  test)  setup_browser; exec "$VENV/bin/python" -m pytest "$@" ;;
  web)   setup_pyodide; exec "$VENV/bin/python" -m tools.browser.webpage "$@" ;;
  peers) install_peers ;;
  bench) nopeers=0; for a in "$@"; do [ "$a" = --no-peers ] && nopeers=1; done
         if [ "$nopeers" = 0 ] && [ "${GFXRT_BENCH_PEERS:-1}" != 0 ]; then ensure_peers; fi
         if [ $# -eq 0 ] || { [ $# -eq 1 ] && [ "$nopeers" = 1 ]; }; then set -- --quick "$@"; fi
         exec "$VENV/bin/python" -m bench "$@" ;;
  demo)  exec "$VENV/bin/python" examples/quickstart.py ;;
  *) echo "usage: bash dev.sh {test|web|bench|peers|demo|setup} [args]" >&2; exit 2 ;;
esac
