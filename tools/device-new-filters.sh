#!/usr/bin/env bash
# The filters of issue 15 built so far (eq, unsharp, denoise) on the GPU machine in one call (bash
# ../shared/device/setup.sh here first; carry .device): the build (tools/device-build.sh; the suite
# in calls of its own, tools/device-ctest.sh), tandem-bench filters on the GPU against its copy
# bandwidth with their PTX's loads and stores counted, then OpenCV's T-API and CPU peers
# (tools/peer-tapi.py) in the same call. Everything lands in $OUT.
source tools/device-build.sh
only="eq,unsharp,denoise,saturation 1.3,box radius=1"
$B filters --devices gpu --frames 30 --only "$only" --dump-binaries /tmp/bin > "$OUT/filters-gpu.txt" 2>&1
grep -E -- '-> |^[a-z].*: "|\| kernels' "$OUT/filters-gpu.txt" | sed 's/ *frame .*| kernels/ kernels/' | cut -c1-150
bash tools/ptx-loads.sh /tmp/bin > "$OUT/ptx-loads.txt" 2>&1; tail -8 "$OUT/ptx-loads.txt"
timeout 120 python3 tools/peer-tapi.py --device :GPU:0 --only "unsharp,saturation,point-wise" > "$OUT/tapi.txt" 2>&1
timeout 120 python3 tools/peer-tapi.py --device :GPU:0 --only denoise --frames 5 --warmup 2 --batch 1 >> "$OUT/tapi.txt" 2>&1
grep -E -A6 '^op ' "$OUT/tapi.txt"
echo "end $(date -u +%T)"
