#!/usr/bin/env bash
# The benchmark suite on the lent GPU machine (H100/H200), for the lead (helpers do not use it).
#
# Here, in the project's root, once per peer:   bash ../shared/device/prepare.sh [taichi|quadrants]
# Then the device tool's `run` with carry [".gl", ".whl", ".peer"] and the command
#     bash bench/device_run.sh [taichi|quadrants|none] [more python -m bench args, e.g. --quick]
# One call per peer (the carry limit holds one peer's wheels). Each call writes $OUT/bench-*.json
# (rewritten after every case, so a run cut short keeps what it measured), $OUT/bench.log and
# $OUT/logs.tgz (each framework worker's stderr). Warp cannot travel (its wheel is ~150 MB > the
# 64 MiB carry). Merge the calls' JSON files here with
#     python -m bench.report --markdown A.json B.json      (table for bench/RESULTS.md)
#     python -m bench.plot A.json B.json --out DIR          (PNG charts)
set -uo pipefail
peer="${1:-none}"; [ $# -gt 0 ] && shift
. .gl/enter.sh || { echo "device_run: .gl/enter.sh failed (carry .gl and .whl; see ../shared/device/README.md)"; exit 1; }
OUT="${OUT:-bench/out}"; mkdir -p "$OUT"
peers="numpy,torch"
case "$peer" in
  taichi)    peers="$peers,taichi:cuda,taichi:vulkan" ;;
  quadrants) peers="$peers,quadrants:cuda,quadrants:vulkan" ;;
  none) ;;
  *) echo "device_run: unknown peer $peer (taichi, quadrants or none)"; exit 2 ;;
esac
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader 2>&1 | sed 's/^/[gpu] /'
# gfxrt's default adapter choice prefers the Vulkan adapter to the OpenGL one wgpu also lists;
# --sizes gpu: every size (a misdetected adapter must not shrink the run to the CPU sizes)
timeout -k 10 "${BENCH_TIMEOUT:-570}" python3 -m bench --peers "$peers" --sizes gpu --out "$OUT" "$@" 2>&1 \
  | tee "$OUT/bench.log"
status=${PIPESTATUS[0]}
(cd "$OUT" && ls ./bench-*.log >/dev/null 2>&1 && tar czf logs.tgz ./bench-*.log && find . -maxdepth 1 \
  -name 'bench-*.log' -delete)
exit "$status"
