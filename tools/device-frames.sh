#!/usr/bin/env bash
# Whole frames for streams on the GPU machine in one call (bash tools/device-setup.sh here first;
# carry .device): build, the whole suite on every device (.device/check.sh ctest), then
# tandem-bench stream of issue 13's four graphs at 1080p and 4K on the GPU alone and on every
# device (--split auto: whole frames per device once frames queue up), and on every device in
# bands (--split bands) to compare. Everything lands in $OUT.
source tools/device-suite.sh
for size in 1920x1080 3840x2160; do
  for g in "gaussian=sigma=2,saturation=1.3,tonemap" "gaussian=sigma=8,bilateral,saturation=1.3" "saturation=1.3" "bilateral"; do
    for run in "gpu auto" "all auto" "all bands"; do
      set -- $run
      echo "== stream $size $1 --split $2 $g"
      timeout 120 $B stream --devices "$1" --split "$2" --size $size --graph "$g" --frames 200 --warmup 20 > /tmp/s.txt 2>&1
      cat /tmp/s.txt >> "$OUT/frames-stream.txt"
      grep -E 'all selected|^    [0-9]' /tmp/s.txt | tail -4 | cut -c1-150
    done
  done
done
echo "end $(date -u +%T)"
