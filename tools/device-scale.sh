#!/usr/bin/env bash
# scale's schedules on the GPU machine in one call (bash ../shared/device/setup.sh here first; carry
# .device): builds tandem-bench alone (tools/device-build.sh; the suite in calls of its own,
# tools/device-ctest.sh), then tandem-bench filters on the GPU for scale's cases in the automatic
# schedule (tiles on GPUs) and in rows, with their PTX's loads and stores counted, and OpenCV's
# T-API on the same cases (tools/peer-tapi.py). All under $OUT. (Nsight Compute there profiles no
# OpenCL kernel: "No kernels were profiled"; the PTX is what can be read.) ONLY="..." picks other
# cases.
BUILD_TARGET=tandem_bench
source tools/device-build.sh
only=${ONLY:-"scale,saturation 1.3"}
for schedule in automatic rows; do
  $B filters --devices gpu --frames 30 --only "$only" --schedule $schedule \
    --dump-binaries /tmp/bin-$schedule > "$OUT/filters-gpu-$schedule.txt" 2>&1
  echo "== $schedule"
  grep -E -- '-> |\| kernels' "$OUT/filters-gpu-$schedule.txt" | sed 's/ *frame .*| kernels/ kernels/' | cut -c1-150
done
bash tools/ptx-loads.sh /tmp/bin-automatic > "$OUT/ptx-loads.txt" 2>&1; grep -i scale "$OUT/ptx-loads.txt" | cut -c1-200
timeout 120 python3 tools/peer-tapi.py --device :GPU:0 --only "scale,copy" > "$OUT/tapi.txt" 2>&1
grep -E -A8 '^op ' "$OUT/tapi.txt" || tail -5 "$OUT/tapi.txt"
echo "end $(date -u +%T)"
