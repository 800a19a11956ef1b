#!/usr/bin/env bash
# gfxrt's one entry point. Each command first does all set-up, idempotently:
#   a virtual environment (.venv), the project installed into it, and the CPU Vulkan driver
#   (mesa-vulkan-drivers) when wgpu finds no Vulkan/Metal/D3D12 adapter.
#
#   bash dev.sh test [pytest args]     run the test suite
#   bash dev.sh bench [bench args]     run the benchmarks (default: --quick); with GFXRT_BENCH_PEERS=1
#                                      the peers are installed first (as by `bash dev.sh peers`)
#   bash dev.sh peers                  install the benchmark peers (taichi, quadrants, warp, torch) into
#                                      the venv; each is optional: one that fails to install is skipped
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
    "$VENV/bin/python" -m pip install -q -e ".[test,bench]"
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
}

install_peers() {
  # Each peer on its own: a failure skips that peer (bench then reports it as not installed).
  local py="$VENV/bin/python" p torch_spec
  for p in "taichi==1.7.4" "quadrants==1.3.3" "warp-lang"; do
    "$py" -m pip install -q "$p" >/dev/null 2>&1 && echo "[peers] installed $p" >&2 \
      || echo "[peers] could not install $p: skipped" >&2
  done
  # torch: the CUDA build where there is an NVIDIA GPU; elsewhere only a CPU build (a local
  # wheel found through pip's find-links), never the multi-GB CUDA build on a machine without GPU.
  if command -v nvidia-smi >/dev/null 2>&1; then torch_spec="torch"; else torch_spec="torch==2.13.0+cpu"; fi
  "$py" -m pip install -q --only-binary=:all: "$torch_spec" >/dev/null 2>&1 && echo "[peers] installed $torch_spec" >&2 \
    || echo "[peers] could not install $torch_spec: skipped (install a torch build by hand to compare with it)" >&2
}

cmd="${1:-test}"; shift || true
setup
case "$cmd" in
  setup) ;;
  test)  exec "$VENV/bin/python" -m pytest "$@" ;;
  peers) install_peers ;;
  bench) if [ "${GFXRT_BENCH_PEERS:-0}" = 1 ]; then install_peers; fi
         if [ $# -eq 0 ]; then set -- --quick; fi; exec "$VENV/bin/python" -m bench "$@" ;;
  demo)  exec "$VENV/bin/python" examples/quickstart.py ;;
  *) echo "usage: bash dev.sh {test|bench|peers|demo|setup} [args]" >&2; exit 2 ;;
esac
