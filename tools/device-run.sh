#!/usr/bin/env bash
# A whole GPU-machine run in one call (bash tools/device-setup.sh here first; carry .device):
# build, the whole suite on every device (.device/check.sh ctest), then the kernels against the
# copy limit on the GPU and on PoCL, OpenCV's T-API and CPU peers (tools/peer-tapi.py), and the
# stream. Everything lands in $OUT: at most 8 files, what the device tool brings back.
set -u
source .device/prelude.sh
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
cmake -S . -B /tmp/b -DCMAKE_BUILD_TYPE=Release -DTANDEM_WITH_OPENCV=OFF -DTANDEM_WITH_FFMPEG=OFF \
  -DTANDEM_BUILD_VIEW=OFF -DTANDEM_BUILD_TESTS=ON > /tmp/configure.txt 2>&1 || { tail -30 /tmp/configure.txt; exit 1; }
cmake --build /tmp/b > /tmp/build.txt 2>&1 || { grep -m20 -iE 'error' /tmp/build.txt; exit 1; }
echo "built $(date -u +%T)"
bash .device/check.sh ctest
echo "ctest done $(date -u +%T)"
export TANDEM_CACHE_DIR=/tmp/tandem-bench-cache
B=/tmp/b/apps/bench/tandem-bench
$B filters --devices gpu --frames 50 --json "$OUT/filters-gpu.json" --dump-binaries /tmp/bin > "$OUT/filters-gpu.txt" 2>&1
grep -E '^[a-z].*: "|\| kernels' "$OUT/filters-gpu.txt" | sed 's/ *frame .*| kernels/ kernels/' | cut -c1-150
bash tools/ptx-loads.sh /tmp/bin > "$OUT/ptx-loads.txt" 2>&1; tail -12 "$OUT/ptx-loads.txt"
timeout 150 $B filters --devices cpu --frames 10 --only "gaussian sigma=2,box radius=64,bilateral defaults" > "$OUT/filters-pocl.txt" 2>&1
grep -E '^[a-z].*: "|\| kernels' "$OUT/filters-pocl.txt" | sed 's/ *frame .*| kernels/ kernels/' | cut -c1-150
timeout 150 python3 tools/peer-tapi.py --device :GPU:0 > "$OUT/tapi.txt" 2>&1; grep -A12 '^op ' "$OUT/tapi.txt"
$B stream --devices gpu --frames 300 --warmup 30 > "$OUT/stream-gpu.txt" 2>&1; grep -iE 'double|one at a time|ms' "$OUT/stream-gpu.txt" | tail -6
echo "end $(date -u +%T)"
