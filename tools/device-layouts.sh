#!/usr/bin/env bash
# One GPU-machine call (bash ../shared/device/setup.sh here first; carry .device): the build and the
# build (tools/device-build.sh; the suite in calls of its own, tools/device-ctest.sh), the GPU's
# copy bandwidth (tandem-bench filters' first section, the limit), then streams of 1080p frames of
# each plane layout and depth against rgba8 on the GPU. Prints a line a run: medians in ms a frame,
# one frame at a time and three in flight from two threads, and the GPU's upload / kernels /
# download per frame in each.
source tools/device-build.sh
$B filters --devices gpu --frames 20 --only "saturation 1.3" > "$OUT/filters-gpu.txt" 2>&1
grep -- '-> ' "$OUT/filters-gpu.txt"
: > "$OUT/stream-layouts.txt"
for g in saturation=1.3 gaussian=sigma=2,saturation=1.3; do
  for f in rgba8 yuv420p yuv420p10 yuv422p yuv422p10 yuv444p yuv444p12; do
    $B stream --devices gpu --graph "$g" --format "$f" --frames 200 --warmup 20 > /tmp/s.txt 2>&1
    cat /tmp/s.txt >> "$OUT/stream-layouts.txt"
    ms=$(awk '/all selected devices/ {print $4}' /tmp/s.txt | sed -n '1p;4p' | tr '\n' ' ')
    gpu=$(awk '/ gpu .*\// {print $(NF-5) "/" $(NF-3) "/" $(NF-1)}' /tmp/s.txt | sed -n '1p;4p' | tr '\n' ' ')
    echo "== $g $f: ms ${ms}| up/kernels/down ${gpu}"
  done
done
echo "end $(date -u +%T)"
