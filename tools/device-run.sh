#!/usr/bin/env bash
# A whole GPU-machine run in one call (bash tools/device-setup.sh here first; carry .device): the
# build (tools/device-build.sh; the suite in calls of its own, tools/device-ctest.sh), then the
# kernels against the copy limit on the GPU and on PoCL, OpenCV's T-API and CPU peers
# (tools/peer-tapi.py), and the stream. Everything lands in $OUT: at most 8 files, what the device
# tool brings back.
source tools/device-build.sh
$B filters --devices gpu --frames 50 --json "$OUT/filters-gpu.json" --dump-binaries /tmp/bin > "$OUT/filters-gpu.txt" 2>&1
grep -E '^[a-z].*: "|\| kernels' "$OUT/filters-gpu.txt" | sed 's/ *frame .*| kernels/ kernels/' | cut -c1-150
bash tools/ptx-loads.sh /tmp/bin > "$OUT/ptx-loads.txt" 2>&1; tail -12 "$OUT/ptx-loads.txt"
timeout 150 $B filters --devices cpu --frames 10 --only "gaussian sigma=2,box radius=64,bilateral defaults" > "$OUT/filters-pocl.txt" 2>&1
grep -E '^[a-z].*: "|\| kernels' "$OUT/filters-pocl.txt" | sed 's/ *frame .*| kernels/ kernels/' | cut -c1-150
timeout 150 python3 tools/peer-tapi.py --device :GPU:0 > "$OUT/tapi.txt" 2>&1; grep -A12 '^op ' "$OUT/tapi.txt"
$B stream --devices gpu --frames 300 --warmup 30 > "$OUT/stream-gpu.txt" 2>&1; grep -iE 'double|one at a time|ms' "$OUT/stream-gpu.txt" | tail -6
echo "end $(date -u +%T)"
