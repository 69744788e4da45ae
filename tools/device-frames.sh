# Whole frames for streams on the GPU machine in one call (bash tools/device-setup.sh here first;
# carry .device): the build (tools/device-build.sh; the suite in calls of its own,
# tools/device-ctest.sh), then tandem-bench stream of issue 13's four graphs at 1080p and 4K on the
# GPU alone and on every device (--split auto: whole frames per device once frames queue up),
# alternated twice (the machine is shared: one run can land on a busy moment); then tandem-bench
# coexec (one frame at a time: bands) of the same graphs and sizes on every device against each
# device alone. Everything lands in $OUT.
source tools/device-build.sh
for size in 1920x1080 3840x2160; do
  for g in "gaussian=sigma=2,saturation=1.3,tonemap" "gaussian=sigma=8,bilateral,saturation=1.3" "saturation=1.3" "bilateral"; do
    for run in "gpu 1" "all 1" "gpu 2" "all 2"; do
      set -- $run
      echo "== stream $size $1 (round $2) $g"
      timeout 120 $B stream --devices "$1" --split auto --size $size --graph "$g" --frames 200 --warmup 20 > /tmp/s.txt 2>&1
      cat /tmp/s.txt >> "$OUT/frames-stream.txt"
      # Means (ms a frame): one at a time, 2 and 3 frames on the devices, two threads.
      echo "   means: $(grep -oE 'mean [0-9.]+ ms' /tmp/s.txt | awk '{print $2}' | tr '\n' ' ')"
    done
  done
done
for size in 1920x1080 3840x2160; do
  for g in "gaussian=sigma=2,saturation=1.3,tonemap" "gaussian=sigma=8,bilateral,saturation=1.3" "saturation=1.3" "bilateral"; do
    echo "== coexec $size $g"
    timeout 100 $B coexec --devices all --size $size --graph "$g" --frames 200 > /tmp/c.txt 2>&1
    cat /tmp/c.txt >> "$OUT/coexec.txt"
    grep -E 'speed-up|fixed ms|slowest' /tmp/c.txt
  done
done
echo "end $(date -u +%T)"
