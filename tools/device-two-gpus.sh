#!/usr/bin/env bash
# Two GPUs of one context against one (issue 13) in one call on a two-GPU machine (bash
# ../shared/device/setup.sh here first; carry .device): builds tandem-bench alone
# (tools/device-build.sh; the suite runs in the single-GPU calls), then for issue 13's four graphs
# at 1080p and 4K a stream of whole frames on both GPUs (--devices gpu) against the first alone
# (1.0), and coexec (one frame at a time, bands) on both GPUs against each alone; before them, the
# host link's limit (topology and tools/cl-pcie.c; PCIE_ONLY=1 stops there, STREAM_ONLY=1 runs the
# streams alone). Everything lands in $OUT.
BUILD_TARGET=tandem_bench
source tools/device-build.sh
nvidia-smi -L > "$OUT/machine.txt"; nproc >> "$OUT/machine.txt"
# The host link's limit first: how the GPUs hang off the CPUs, and what copies between pinned
# host memory and each GPU alone and both at once reach (tools/cl-pcie.c).
if [ -z "${STREAM_ONLY:-}" ]; then
  nvidia-smi topo -m > "$OUT/topology.txt" 2>&1; cat "$OUT/topology.txt"
  cc -O2 tools/cl-pcie.c -o /tmp/cl-pcie -lOpenCL && for bytes in 8294400 33177600; do
    /tmp/cl-pcie $bytes 60; done | tee "$OUT/pcie.txt"
fi
[ -n "${PCIE_ONLY:-}" ] && exit 0
for size in 1920x1080 3840x2160; do
  for g in "gaussian=sigma=2,saturation=1.3,tonemap" "gaussian=sigma=8,bilateral,saturation=1.3" "saturation=1.3" "bilateral"; do
    for d in gpu 1.0; do
      timeout 60 $B stream --devices "$d" --size $size --graph "$g" --frames 150 --warmup 20 > /tmp/s.txt 2>&1
      cat /tmp/s.txt >> "$OUT/two-gpus-stream.txt"
      # Means (ms a frame): one at a time, 2 and 3 frames on the devices, two threads.
      echo "== stream $size $d $g: means $(grep -oE 'mean [0-9.]+ ms' /tmp/s.txt | awk '{print $2}' | tr '\n' ' ')"
    done
  done
done
[ -n "${STREAM_ONLY:-}" ] && { echo "end $(date -u +%T)"; exit 0; }
for size in 1920x1080 3840x2160; do
  for g in "gaussian=sigma=2,saturation=1.3,tonemap" "gaussian=sigma=8,bilateral,saturation=1.3" "saturation=1.3" "bilateral"; do
    timeout 60 $B coexec --devices gpu --size $size --graph "$g" --frames 100 > /tmp/c.txt 2>&1
    cat /tmp/c.txt >> "$OUT/two-gpus-coexec.txt"
    echo "== coexec $size $g: $(grep -E 'speed-up' /tmp/c.txt | tr '\n' ' ')"
  done
done
echo "end $(date -u +%T)"
