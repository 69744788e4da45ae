#!/usr/bin/env bash
# On the GPU machine: tools/ncu-scale-tiled.cu compiled with nvcc, each variant timed, then
# Nsight Compute's full set and the stall reasons, shared-memory wavefronts and global sectors
# of scale_tiled and of the 2x nearest upscale. Outputs under $OUT (ncu-*.txt); the key lines
# printed.
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
NVCC=$(command -v nvcc || ls /usr/local/cuda*/bin/nvcc 2>/dev/null | head -1)
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.mem --format=csv,noheader
$NVCC -O3 -arch=sm_90 -Xptxas -v -o /tmp/ncu-scale tools/ncu-scale-tiled.cu 2>&1 |
  grep -E "registers|error" || exit 1
for v in 0 1 2 3 4 0; do /tmp/ncu-scale $v 300; done
for v in 0 3; do
  $NCU --kernel-name regex:"scale_tiled|upscale" --launch-skip 20 --launch-count 1 --set full \
    /tmp/ncu-scale $v 30 > "$OUT/ncu-$v.txt" 2>&1
  grep -E "Duration|DRAM Throughput|Compute \(SM\) Throughput|L1/TEX Cache Throughput|Issue Slots Busy|Theoretical Occupancy|Achieved Occupancy|Registers Per|Warp Cycles Per Issued|Eligible Warps" "$OUT/ncu-$v.txt"
done
$NCU --kernel-name regex:scale_tiled --launch-skip 20 --launch-count 1 --metrics \
  "regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__data_pipe_lsu_wavefronts.sum,sm__cycles_elapsed.avg,sm__inst_executed.sum" \
  /tmp/ncu-scale 0 30 > "$OUT/ncu-metrics.txt" 2>&1
grep -vE "^==PROF==" "$OUT/ncu-metrics.txt" | tail -30
