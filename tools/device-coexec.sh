#!/usr/bin/env bash
# Co-execution on the GPU machine in one call (bash tools/device-setup.sh here first; carry
# .device): the build (tools/device-build.sh; the suite in calls of its own, tools/device-ctest.sh),
# then tandem-bench coexec of issue 13's four graphs at 1080p and 4K with --devices all (each device
# alone, then together), 4K saturation with --trace and with a fixed fifth of the rows on the CPU,
# and streams on the GPU and on every device. Everything lands in $OUT.
source tools/device-build.sh
for size in 1920x1080 3840x2160; do
  for g in "gaussian=sigma=2,saturation=1.3,tonemap" "gaussian=sigma=8,bilateral,saturation=1.3" "saturation=1.3" "bilateral"; do
    echo "== coexec $size $g"
    timeout 100 $B coexec --devices all --size $size --graph "$g" --frames 60 > /tmp/c.txt 2>&1
    cat /tmp/c.txt >> "$OUT/guard-coexec.txt"
    grep -E '^  [0-9].*(cpu|gpu) |^  [0-9.]+ \+|mean share|busy ms|speed-up|slowest' /tmp/c.txt | cut -c1-160
  done
done
echo "== coexec 1920x1080 saturation=1.3 --frames 200 --trace"
timeout 100 $B coexec --devices all --graph saturation=1.3 --frames 200 --trace > "$OUT/guard-trace-1080p-saturation.txt" 2>&1
grep -E 'runs on|^  [0-9].*(cpu|gpu) |^  [0-9.]+ \+|mean share|speed-up' "$OUT/guard-trace-1080p-saturation.txt" | cut -c1-150
echo "== coexec 3840x2160 saturation=1.3 --trace"
timeout 100 $B coexec --devices all --size 3840x2160 --graph saturation=1.3 --frames 150 --trace > "$OUT/guard-trace-4k-saturation.txt" 2>&1
grep -E 'runs on|^  [0-9].*(cpu|gpu) |^  [0-9.]+ \+|mean share|speed-up' "$OUT/guard-trace-4k-saturation.txt" | cut -c1-150
echo "== coexec 3840x2160 saturation=1.3 static:0.2,0.8"
timeout 100 $B coexec --devices all --size 3840x2160 --graph saturation=1.3 --split static:0.2,0.8 --frames 60 > /tmp/c.txt 2>&1
cat /tmp/c.txt >> "$OUT/guard-coexec.txt"; grep -E '^  [0-9].*(cpu|gpu) |^  [0-9.]+ \+|speed-up' /tmp/c.txt | cut -c1-150
for g in "gaussian=sigma=2,saturation=1.3,tonemap" "gaussian=sigma=8,bilateral,saturation=1.3"; do for d in gpu all; do
  echo "== stream $d $g"; timeout 60 $B stream --devices $d --graph "$g" --frames 300 --warmup 30 > /tmp/s.txt 2>&1
  cat /tmp/s.txt >> "$OUT/guard-stream.txt"; grep -E 'all selected' /tmp/s.txt | cut -c1-100
done; done
echo "end $(date -u +%T)"
