#!/usr/bin/env bash
# Issue 15's size-changing filters and the rest of its set (scale, crop, pad, transpose, hflip,
# fade, overlay, lut3d) on the GPU machine in one call (bash ../shared/device/setup.sh here first;
# carry .device): the build (tools/device-build.sh; the suite in calls of its own,
# tools/device-ctest.sh), tandem-bench filters on the GPU against its copy bandwidth with their
# PTX's loads and stores counted, then OpenCV's T-API and CPU peers (tools/peer-tapi.py) in the same
# call. Everything lands in $OUT.
source tools/device-build.sh
only="scale,crop,pad,transpose,hflip,fade,overlay,lut3d,saturation 1.3"
$B filters --devices gpu --frames 30 --only "$only" --dump-binaries /tmp/bin > "$OUT/filters-gpu.txt" 2>&1
grep -E -- '-> |^[a-z].*: "|\| kernels' "$OUT/filters-gpu.txt" | sed 's/ *frame .*| kernels/ kernels/' | cut -c1-150
bash tools/ptx-loads.sh /tmp/bin > "$OUT/ptx-loads.txt" 2>&1; tail -12 "$OUT/ptx-loads.txt"
$B filters --devices cpu --frames 10 --only "$only" > "$OUT/filters-pocl.txt" 2>&1
grep -E '^\| .*pthread|^\| .*cpu' "$OUT/filters-pocl.txt" | cut -c1-160
timeout 150 python3 tools/peer-tapi.py --device :GPU:0 --only "scale,crop,pad,transpose,hflip" > "$OUT/tapi.txt" 2>&1
grep -E -A8 '^op ' "$OUT/tapi.txt" || tail -5 "$OUT/tapi.txt"
echo "end $(date -u +%T)"
